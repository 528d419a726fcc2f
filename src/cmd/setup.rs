//! `mws setup import [--apply]` and `mws setup undo`: find the HOME and working directory, read
//! the clients' configs, print the plan (tables or JSON, secrets masked), and with `--apply` carry
//! it out (`setup::apply`); undo puts the last backup set back. Glue only: the dry run writes
//! nothing.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::json;

use super::{CmdResult, load_config};
use crate::cli::{SetupImportArgs, SetupUndoArgs};
use crate::setup::{apply, backup, plan, render, sources};

pub fn import(config: Option<&Path>, args: SetupImportArgs) -> CmdResult {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("cannot find the client configs: HOME is not set")?;
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let env = sources::Env::from_process(home.into(), cwd);
    // The dry run works with a broken config (it only needs mws's endpoint); --apply does not.
    let loaded = if args.apply {
        Some(load_config(config)?)
    } else {
        crate::config::load(config).ok()
    };
    let c = loaded
        .as_ref()
        .map(|l| l.config.clone())
        .unwrap_or_default();
    let url = endpoint(&c);
    let programs = apply::Programs {
        claude: on_path("claude"),
        codex: on_path("codex"),
    };
    let plan = plan::plan_with(
        sources::scan(&env),
        &plan::Options::of(&args, &url, &programs),
    );
    for e in &plan.errors {
        eprintln!("mws setup import: {e} (its servers are left out; the other files were read)");
    }
    let mut stdout = std::io::stdout().lock();
    let Some(loaded) = loaded.filter(|_| args.apply) else {
        let out = if args.json {
            render::json(&plan)
        } else {
            render::text(&plan, &env.home)
        };
        stdout.write_all(out.as_bytes())?;
        stdout.flush()?;
        return Ok(0);
    };
    let exe = std::env::current_exe().context("cannot find the mws executable")?;
    let config_path = std::path::absolute(&loaded.path).unwrap_or(loaded.path.clone());
    let target = apply::Target {
        stdio: vec![
            exe.display().to_string(),
            "--config".into(),
            config_path.display().to_string(),
            "serve".into(),
            "--stdio".into(),
        ],
        config_path,
        state_dir: c.state_dir.clone(),
        server_name: c.server_name.clone(),
        url,
    };
    let stamp: String = crate::clock::fmt(crate::clock::now())
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    let report = apply::apply(&plan, &env, &target, &programs, &stamp)
        .map_err(|e| anyhow::anyhow!("setup import --apply: {e}; nothing was changed"))?;
    if args.json {
        let v = json!({
            "backupDir": report.backup_dir,
            "done": report.done,
            "errors": report.errors,
        });
        writeln!(stdout, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        for line in &report.done {
            writeln!(stdout, "{line}")?;
        }
        for e in &report.errors {
            eprintln!("mws setup import: {e}");
        }
    }
    stdout.flush()?;
    Ok(if report.errors.is_empty() { 0 } else { 1 })
}

pub fn undo(config: Option<&Path>, args: SetupUndoArgs) -> CmdResult {
    let loaded = load_config(config)?;
    let (dir, done) = backup::undo(&loaded.config.state_dir, args.force)
        .map_err(|e| anyhow::anyhow!("setup undo: {e}"))?;
    let mut stdout = std::io::stdout().lock();
    for r in &done {
        match r {
            backup::Restored::Restored(p) => writeln!(stdout, "restored {}", p.display())?,
            backup::Restored::Removed(p) => {
                writeln!(stdout, "removed {} (it did not exist before)", p.display())?
            }
        }
    }
    writeln!(
        stdout,
        "{} file(s) put back from {}",
        done.len(),
        dir.display()
    )?;
    Ok(0)
}

/// mws's Streamable HTTP endpoint, as clients reach it.
fn endpoint(c: &crate::config::Config) -> String {
    let host = &c.listen.host;
    if host.contains(':') && !host.starts_with('[') {
        format!("http://[{host}]:{}/mcp", c.listen.port)
    } else {
        format!("http://{host}:{}/mcp", c.listen.port)
    }
}

/// `name` as the shell would find it on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}
