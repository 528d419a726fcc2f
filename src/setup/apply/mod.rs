//! `mws setup import --apply`: carries out a plan, holding the setup lock (`lock`). The config
//! mws will write is parsed and validated, and every file it will touch is checked against the
//! text the plan was made from, for a read-only mode and for a server already registered under
//! mws's name, and backed up (`backup`), before anything changes; then each client stops
//! registering the servers that move (Claude Code and Codex through their own CLIs, the others
//! by editing their files: `files`) and registers mws instead; last, the servers that did
//! move are written into mws's config as `servers`, each with the other names it had in clients
//! as `aliases`. Every entry taken out or put in is recorded for `undo`. A client whose CLI is
//! missing, whose file changed or cannot be written keeps its servers, and they are not written
//! into mws's config. Must not print a secret.

mod checks;
mod cli;
mod config;
mod files;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::backup::{Action, Set};
use super::plan::Plan;
use super::sources::{self, Programs};
use super::{Client, Source};
use checks::{Preflight, Ready};

/// How clients reach mws once it is registered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Via {
    /// Each client starts `mws serve --stdio` itself: nothing else has to be running.
    #[default]
    Stdio,
    /// The Streamable HTTP endpoint of a `mws serve` the user keeps running (`--http`).
    Http,
}

/// Where mws is and how clients reach it.
#[derive(Debug, Clone)]
pub struct Target {
    /// mws's config file (created if missing).
    pub config_path: PathBuf,
    pub state_dir: PathBuf,
    /// The name clients register mws under (`serverName`).
    pub server_name: String,
    /// mws's Streamable HTTP endpoint.
    pub url: String,
    /// The command line that starts mws over stdio (the program first).
    pub stdio: Vec<String>,
    pub via: Via,
}

/// What `--apply` did, for people: lines of what changed and of what did not, and why.
#[derive(Debug, Default)]
pub struct Report {
    pub backup_dir: Option<PathBuf>,
    pub done: Vec<String>,
    pub errors: Vec<String>,
}

/// One registration leaving its client: the server's name behind mws and where it was.
#[derive(Debug, Clone)]
struct Move<'a> {
    pub server: &'a str,
    pub source: &'a Source,
}

/// What `--apply` would refuse, for the dry run: the clients that would keep their servers and
/// why, or why nothing would move at all.
pub fn check(
    plan: &Plan,
    env: &sources::Env,
    target: &Target,
    programs: &Programs,
) -> Result<Vec<String>, String> {
    let moves = checks::moves_of(plan, target);
    if moves.is_empty() {
        return Ok(Vec::new());
    }
    checks::preflight(plan, env, target, programs, &moves).map(|p| p.errors)
}

/// Carries out `plan` (see the module doc). `stamp` names the backup set.
pub fn apply(
    plan: &Plan,
    env: &sources::Env,
    target: &Target,
    programs: &Programs,
    stamp: &str,
) -> Result<Report, String> {
    let _lock = super::lock::hold(&target.state_dir).map_err(|e| e.to_string())?;
    let mut report = Report::default();
    let moves = checks::moves_of(plan, target);
    if moves.is_empty() {
        report
            .done
            .push("nothing to apply: no server to put behind mws".into());
        return Ok(report);
    }
    let Preflight {
        ready,
        errors,
        config_before,
    } = checks::preflight(plan, env, target, programs, &moves)?;
    report.errors = errors;
    if ready.is_empty() {
        return Ok(report);
    }
    let before = String::from_utf8_lossy(config_before.as_deref().unwrap_or_default());
    let mut set = back_up(target, &ready, stamp, &mut report)?;
    let moved = move_clients(plan, env, target, programs, &ready, &mut set, &mut report);
    write_config(plan, target, &before, &moved, &mut set, &mut report)?;
    set.finish()
        .map_err(|e| format!("cannot finish the backup set {}: {e}", set.dir.display()))?;
    report.done.push(next_step(target));
    Ok(report)
}

/// Step 1: a new backup set holding mws's config and every file the ready clients will change.
fn back_up(
    target: &Target,
    ready: &[Ready],
    stamp: &str,
    report: &mut Report,
) -> Result<Set, String> {
    let mut set = Set::create(&target.state_dir, stamp).map_err(|e| {
        format!(
            "cannot create a backup set in {}: {e}",
            target.state_dir.display()
        )
    })?;
    let save = |set: &mut Set, f: &Path| -> Result<(), String> {
        let bytes = read(f)?;
        set.save(f, bytes.as_deref())
            .map_err(|e| format!("cannot back up {}: {e}", f.display()))
    };
    save(&mut set, &target.config_path)?;
    for (_, _, files) in ready {
        for f in files {
            save(&mut set, f)?;
        }
    }
    report.backup_dir = Some(set.dir.clone());
    report.done.push(format!(
        "backed up {} file(s) to {}",
        set.files().len(),
        set.dir.display()
    ));
    Ok(set)
}

/// Step 2: each ready client lets go of its moves and registers mws (through its CLI or by an
/// edit of its file); every entry taken out or put in is recorded in `set`. Returns the servers
/// that did move.
fn move_clients<'a>(
    plan: &'a Plan,
    env: &sources::Env,
    target: &Target,
    programs: &Programs,
    ready: &[Ready<'a>],
    set: &mut Set,
    report: &mut Report,
) -> BTreeSet<&'a str> {
    let mut moved: BTreeSet<&str> = BTreeSet::new();
    for (client, ms, _) in ready {
        let outcome = match client {
            Client::ClaudeCode => cli::claude(plan, env, target, programs, ms),
            Client::Codex => cli::codex(plan, env, target, programs, ms),
            _ => files::edit(*client, target, ms),
        };
        moved.extend(outcome.moved);
        for (file, at, name, action) in &outcome.changes {
            let at: Vec<&str> = at.iter().map(String::as_str).collect();
            set.record(file, &at, name, *action);
        }
        report.done.extend(outcome.done);
        report.errors.extend(outcome.errors);
    }
    moved
}

/// Step 3: the servers that did move written into mws's config (`before` is its text as
/// preflight read it), each change recorded in `set`.
fn write_config(
    plan: &Plan,
    target: &Target,
    before: &str,
    moved: &BTreeSet<&str>,
    set: &mut Set,
    report: &mut Report,
) -> Result<(), String> {
    let servers = config::entries(plan, moved);
    if servers.is_empty() {
        return Ok(());
    }
    let (text, policy) = config::config_text(before, &servers, &config::policies(plan, moved))?;
    let path = &target.config_path;
    super::write::with_mode(path, text.as_bytes(), Some(0o600))
        .map_err(|e| format!("{}: {e}", path.display()))?;
    for name in servers.keys() {
        set.record(path, &["servers"], name, Action::Added);
    }
    let had_upstream = serde_json::from_str::<Value>(&crate::config::jsonc::strip(before))
        .is_ok_and(|v| v.get("upstream").is_some());
    if had_upstream {
        set.record(path, &[], "upstream", Action::Removed);
    }
    for (key, had, globs) in &policy {
        // Undo takes the list out, then puts back the one the copy holds.
        if *had {
            set.record(path, &["policy"], key, Action::Removed);
        }
        set.record(path, &["policy"], key, Action::Added);
        report.done.push(format!(
            "{}: `policy.{key}` now also has {} (the clients' tool settings of the servers moved)",
            path.display(),
            globs.join(", ")
        ));
    }
    report.done.push(format!(
        "{}: {} server(s) in `servers`: {}",
        path.display(),
        servers.len(),
        servers.keys().cloned().collect::<Vec<_>>().join(", ")
    ));
    Ok(())
}

/// The last line of the report: what the user does next.
fn next_step(target: &Target) -> String {
    match target.via {
        Via::Stdio => "restart the clients (Claude Desktop fully): each starts `mws serve \
                       --stdio` itself, nothing else has to run; `mws setup undo` takes back \
                       every change above"
            .into(),
        Via::Http => format!(
            "keep `mws serve` running (clients reach it at {}) and restart the clients; `mws \
             setup undo` takes back every change above",
            target.url
        ),
    }
}

/// What one client's changes came to.
#[derive(Debug, Default)]
struct Outcome<'a> {
    pub moved: Vec<&'a str>,
    /// Each entry taken out or put in: file, keys to its map, name (`backup::Change`).
    pub changes: Vec<(PathBuf, Vec<String>, String, Action)>,
    pub done: Vec<String>,
    pub errors: Vec<String>,
}

impl Outcome<'_> {
    pub fn change(&mut self, file: &Path, at: &[impl AsRef<str>], name: &str, action: Action) {
        let at = at.iter().map(|k| k.as_ref().to_string()).collect();
        self.changes
            .push((file.to_path_buf(), at, name.to_string(), action));
    }
}

/// A file's bytes, `None` when it does not exist.
fn read(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

/// Codex's user config file: `$CODEX_HOME/config.toml`, or `~/.codex/config.toml`.
fn codex_user_file(env: &sources::Env) -> PathBuf {
    env.codex_home
        .clone()
        .unwrap_or_else(|| env.home.join(".codex"))
        .join("config.toml")
}

#[cfg(test)]
mod tests;
