//! `mws setup import [--apply]` and `mws setup undo`: find the HOME and working directory, read
//! the clients' configs, print the plan (tables or JSON, secrets masked), and with `--apply` carry
//! it out (`setup::apply`) and fill the working set from the history already in the clients'
//! transcripts (ingest and promote), so the first session lists the tools the user used; undo
//! takes the last `--apply` back (`setup::undo`) and needs no loadable config. Glue only: the
//! dry run writes nothing.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde_json::json;

use super::{CmdResult, load_config};
use crate::cli::{SetupImportArgs, SetupUndoArgs};
use crate::setup::{apply, lock, plan, render, sources, undo as setup_undo};

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
    let programs = crate::setup::sources::Programs {
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
    let exe = std::env::current_exe().context("cannot find the mws executable")?;
    let config_file = loaded
        .as_ref()
        .map_or_else(|| crate::config::resolve_path(config), |l| l.path.clone());
    let config_path = std::path::absolute(&config_file).unwrap_or(config_file);
    let target = apply::Target {
        stdio: vec![
            exe.display().to_string(),
            "--config".into(),
            config_path.display().to_string(),
            "serve".into(),
            "--stdio".into(),
        ],
        config_path: config_path.clone(),
        state_dir: c.state_dir.clone(),
        server_name: c.server_name.clone(),
        url,
        via: if args.http {
            apply::Via::Http
        } else {
            apply::Via::Stdio
        },
    };
    let mut stdout = std::io::stdout().lock();
    if !args.apply {
        // The dry run makes every check --apply makes and says what it would refuse.
        let refused = apply::check(&plan, &env, &target, &programs).unwrap_or_else(|e| vec![e]);
        let out = if args.json {
            let mut v: serde_json::Value = serde_json::from_str(&render::json(&plan))?;
            v["applyWouldRefuse"] = json!(refused);
            format!("{}\n", serde_json::to_string_pretty(&v)?)
        } else {
            let mut t = render::text(&plan, &env.home);
            if !refused.is_empty() {
                t.push_str("\n`--apply` would stop at:\n");
                for r in &refused {
                    t.push_str(&format!("  {}\n", crate::term::Safe(r)));
                }
            }
            t
        };
        stdout.write_all(out.as_bytes())?;
        stdout.flush()?;
        return Ok(0);
    }
    let stamp: String = crate::clock::fmt(crate::clock::now())
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    let report = apply::apply(&plan, &env, &target, &programs, &stamp)
        .map_err(|e| anyhow::anyhow!("setup import --apply: {e}; nothing was changed"))?;
    let day_one = report.backup_dir.as_ref().map(|_| {
        day_one(&config_path).unwrap_or_else(|e| {
            format!("day one: the working set is not filled yet ({e:#}); run `mws promote`")
        })
    });
    if args.json {
        let v = json!({
            "backupDir": report.backup_dir,
            "done": report.done,
            "errors": report.errors,
            "dayOne": day_one,
        });
        writeln!(stdout, "{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        for line in report.done.iter().chain(&day_one) {
            writeln!(stdout, "{line}")?;
        }
        for e in &report.errors {
            eprintln!("mws setup import: {e}");
        }
    }
    stdout.flush()?;
    Ok(if report.errors.is_empty() { 0 } else { 1 })
}

/// Ingest and promote on the config `--apply` wrote: the calls the user made before mws count
/// from the first session on. No upstream is asked (no reality check: nothing is dropped).
fn day_one(config_path: &Path) -> anyhow::Result<String> {
    let config = crate::config::load(Some(config_path))?.config;
    let mut store = crate::store::Store::open(&config.db_path())?;
    let s = crate::ingest::ingest_all(&config, &mut store, false)?;
    super::adopt_history(&config, &mut store, "mws setup import")?;
    let now_t = crate::clock::now();
    let decided = super::promote::decide_now(&config, &store, None, now_t, false)?;
    let now = crate::clock::fmt(now_t);
    super::promote::write(&config, &mut store, &decided, None, "skipped", &now)?;
    Ok(format!(
        "day one: {} call(s) found in the clients' transcripts; {} tool(s) listed from the first \
         session on (`mws report` shows why)",
        s.new_calls,
        decided.outcome.listing.len()
    ))
}

pub fn undo(config: Option<&Path>, args: SetupUndoArgs) -> CmdResult {
    let state_dir = undo_state_dir(config);
    let _lock = lock::hold(&state_dir).map_err(|e| anyhow::anyhow!("setup undo: {e}"))?;
    let undone = setup_undo::undo(&state_dir, args.force, &mut |line| {
        eprintln!("mws setup undo: {line}")
    })
    .map_err(|e| anyhow::anyhow!("setup undo: {e}"))?;
    let mut stdout = std::io::stdout().lock();
    let names = |v: &[String]| {
        v.iter()
            .map(|n| format!("`{n}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    for d in &undone.done {
        match d {
            setup_undo::Done::Restored(p) => writeln!(stdout, "restored {}", p.display())?,
            setup_undo::Done::Removed(p) => {
                writeln!(stdout, "removed {} (it did not exist before)", p.display())?
            }
            setup_undo::Done::Edited {
                path,
                put_back,
                taken_out,
            } => {
                let mut parts = Vec::new();
                if !put_back.is_empty() {
                    parts.push(format!("put back {}", names(put_back)));
                }
                if !taken_out.is_empty() {
                    parts.push(format!("took out {}", names(taken_out)));
                }
                if parts.is_empty() {
                    parts.push("nothing left to take back".into());
                }
                writeln!(
                    stdout,
                    "{}: {}; what was changed there since stays",
                    path.display(),
                    parts.join(", ")
                )?
            }
        }
    }
    writeln!(
        stdout,
        "{} file(s) taken back from {}",
        undone.done.len(),
        undone.dir.display()
    )?;
    stdout.flush()?;
    for l in &undone.left {
        eprintln!("mws setup undo: left: {l}");
    }
    Ok(if undone.left.is_empty() { 0 } else { 1 })
}

/// The state dir undo works in: the config's, or, when the config does not load (undo must not
/// need it to), its `stateDir` read leniently, else the default.
fn undo_state_dir(flag: Option<&Path>) -> PathBuf {
    match crate::config::load(flag) {
        Ok(l) => l.config.state_dir,
        Err(e) => {
            let path = crate::config::resolve_path(flag);
            let raw = std::fs::read_to_string(&path)
                .ok()
                .and_then(|t| {
                    serde_json::from_str::<serde_json::Value>(&crate::config::jsonc::strip(&t)).ok()
                })
                .and_then(|v| v.get("stateDir")?.as_str().map(PathBuf::from));
            let dir = raw.map_or_else(crate::config::default_state_dir, |d| {
                crate::config::expand_tilde(&d)
            });
            eprintln!(
                "mws setup undo: the config does not load ({e}); undoing in {}",
                dir.display()
            );
            dir
        }
    }
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
