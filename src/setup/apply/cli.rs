//! The part of `--apply` done through the clients' own CLIs: `claude mcp add-json` / `remove`
//! (Claude Code; run in the project for `local` and `project` registrations) and `codex mcp add` /
//! `remove`, which lock and rewrite their files themselves. mws is registered first, so a client
//! never ends up without both. A Codex project's `.codex/config.toml`, which its CLI cannot
//! change, is edited in place keeping its formatting (`toml_edit`). Must not pass a secret on a
//! command line.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::json;

use super::{Move, Outcome, Target, Via};
use crate::setup::backup::Action;
use crate::setup::plan::Plan;
use crate::setup::sources::{self, Programs};
use crate::setup::{Client, Found, Scope};

/// Claude Code: register mws in user scope (started over stdio, or at its URL with `--http`; its
/// tools loaded up front: `alwaysLoad`), then remove each moved registration from its scope.
pub(super) fn claude<'a>(
    plan: &Plan,
    env: &sources::Env,
    target: &Target,
    programs: &Programs,
    ms: &[Move<'a>],
) -> Outcome<'a> {
    let program = programs.claude.as_deref().expect("checked by apply");
    let entry = match target.via {
        Via::Stdio => json!({
            "type": "stdio",
            "command": target.stdio[0],
            "args": target.stdio[1..],
            "alwaysLoad": true
        }),
        Via::Http => json!({"type": "http", "url": target.url, "alwaysLoad": true}),
    }
    .to_string();
    let add = [
        "mcp",
        "add-json",
        "-s",
        "user",
        target.server_name.as_str(),
        entry.as_str(),
    ];
    let user_file = sources::claude_user_file(env);
    moves(
        (Client::ClaudeCode, program),
        plan,
        target,
        ms,
        (&add, &env.home, &user_file),
        |m| {
            let o = &m.source.origin;
            let cwd = match o.scope {
                Scope::User => env.home.clone(),
                _ => o.project.clone().unwrap_or_else(|| env.home.clone()),
            };
            let args = vec![
                "mcp".into(),
                "remove".into(),
                "-s".into(),
                o.scope.as_str().into(),
                m.source.name.clone(),
            ];
            Ok(Removal::Run(args, cwd))
        },
    )
}

/// Codex: register mws, then `codex mcp remove` each user-scope registration; the CLI writes only
/// the user file, so a project's registration is taken out of its `.codex/config.toml` here.
pub(super) fn codex<'a>(
    plan: &Plan,
    env: &sources::Env,
    target: &Target,
    programs: &Programs,
    ms: &[Move<'a>],
) -> Outcome<'a> {
    let program = programs.codex.as_deref().expect("checked by apply");
    let mut add = vec!["mcp", "add", target.server_name.as_str()];
    match target.via {
        Via::Stdio => {
            add.push("--");
            add.extend(target.stdio.iter().map(String::as_str));
        }
        Via::Http => add.extend(["--url", target.url.as_str()]),
    }
    let user_file = super::codex_user_file(env);
    moves(
        (Client::Codex, program),
        plan,
        target,
        ms,
        (&add, &env.home, &user_file),
        |m| match m.source.origin.scope {
            Scope::User => Ok(Removal::Run(
                vec!["mcp".into(), "remove".into(), m.source.name.clone()],
                env.home.clone(),
            )),
            _ => {
                codex_project_remove(&m.source.origin.file, &m.source.name).map(|()| Removal::Done)
            }
        },
    )
}

/// How one registration leaves its client: a CLI run (arguments, working directory), or already
/// done by editing the file.
enum Removal {
    Run(Vec<String>, PathBuf),
    Done,
}

/// Takes `[mcp_servers.<name>]` (and its sub-tables) out of a Codex project file, keeping every
/// other byte: comments, order, other servers.
fn codex_project_remove(file: &Path, name: &str) -> Result<(), String> {
    let at = |e: String| format!("{}: {e}", file.display());
    let text = std::fs::read_to_string(file).map_err(|e| at(format!("cannot read: {e}")))?;
    let mut doc: toml_edit::DocumentMut = text
        .parse()
        .map_err(|e: toml_edit::TomlError| at(format!("not valid TOML: {e}")))?;
    let removed = doc
        .get_mut("mcp_servers")
        .and_then(toml_edit::Item::as_table_like_mut)
        .and_then(|t| t.remove(name));
    if removed.is_none() {
        return Err(at(format!("has no [mcp_servers.{name}] any more")));
    }
    crate::setup::write::keeping_mode(file, doc.to_string().as_bytes()).map_err(at)
}

/// Registers mws (unless the client has it under that name and keeps it), then runs one removal
/// per move.
fn moves<'a>(
    (client, program): (Client, &Path),
    plan: &Plan,
    target: &Target,
    ms: &[Move<'a>],
    (add, add_cwd, add_file): (&[&str], &Path, &Path),
    remove: impl Fn(&Move<'_>) -> Result<Removal, String>,
) -> Outcome<'a> {
    let mut out = Outcome::default();
    let name = client.as_str();
    let leaving = |f: &Found| {
        ms.iter()
            .any(|m| m.source.name == f.name && m.source.origin == f.origin)
    };
    let has_mws = plan.found.iter().any(|f| {
        f.origin.client == client
            && f.origin.scope == Scope::User
            && f.name == target.server_name
            && !leaving(f)
    });
    if !has_mws {
        if let Err(e) = run(program, add, add_cwd) {
            let names: Vec<&str> = ms.iter().map(|m| m.source.name.as_str()).collect();
            out.errors.push(format!(
                "{name}: cannot register mws as `{}`: {e}; {} stay with {name}",
                target.server_name,
                names.join(", ")
            ));
            return out;
        }
        let key = match client {
            Client::Codex => "mcp_servers",
            _ => "mcpServers",
        };
        out.change(add_file, &[key], &target.server_name, Action::Added);
        out.done.push(format!(
            "{name}: mws registered as `{}` (user scope)",
            target.server_name
        ));
    }
    for m in ms {
        let o = &m.source.origin;
        let place = match &o.project {
            Some(p) => format!("{} scope, {}", o.scope.as_str(), p.display()),
            None => format!("{} scope", o.scope.as_str()),
        };
        let result = remove(m).and_then(|r| match r {
            Removal::Run(args, cwd) => {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                run(program, &args, &cwd)
            }
            Removal::Done => Ok(()),
        });
        match result {
            Ok(()) => {
                out.moved.push(m.server);
                let at = super::checks::place_of(o);
                out.change(&o.file, &at, &m.source.name, Action::Removed);
                out.done.push(format!(
                    "{name}: `{}` ({place}) now behind mws as `{}`",
                    m.source.name, m.server
                ));
            }
            Err(e) => out.errors.push(format!(
                "{name}: `{}` ({place}) stays with {name}: {e}",
                m.source.name
            )),
        }
    }
    out
}

/// Runs a client CLI to completion; a failure names the command (never its values) and the last
/// line it printed on stderr.
fn run(program: &Path, args: &[&str], cwd: &Path) -> Result<(), String> {
    let shown = format!(
        "`{} {}`",
        program.file_name().unwrap_or_default().to_string_lossy(),
        args.iter().take(2).copied().collect::<Vec<_>>().join(" ")
    );
    let out = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {shown} in {}: {e}", cwd.display()))?;
    if out.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    Err(format!("{shown} failed ({}): {}", out.status, last.trim()))
}
