//! `mws setup import --apply`: carries out a plan, holding the setup lock (`lock`). The config
//! mws will write is parsed and validated, and every file it will touch is checked against the
//! text the plan was made from, for a read-only mode and for a server already registered under
//! mws's name, and backed up (`backup`), before anything changes; then each client stops
//! registering the servers that move (Claude Code and Codex through their own CLIs, the others
//! by editing their files: `apply_files`) and registers mws instead; last, the servers that did
//! move are written into mws's config as `servers`, each with the other names it had in clients
//! as `aliases`. Every entry taken out or put in is recorded for `undo`. A client whose CLI is
//! missing, whose file changed or cannot be written keeps its servers, and they are not written
//! into mws's config. Must not print a secret.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::apply_checks::{check_config, client_ready};
use super::backup::{Action, Set};
use super::plan::{Plan, ServerConfig, Source};
use super::tool_policy::{self, ToolPolicy};
use super::{Client, jsonc_edit, sources};

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

/// The client CLIs found on PATH (`None`: not installed).
#[derive(Debug, Clone, Default)]
pub struct Programs {
    pub claude: Option<PathBuf>,
    pub codex: Option<PathBuf>,
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
pub(super) struct Move<'a> {
    pub server: &'a str,
    pub source: &'a Source,
}

/// The servers an `--apply` of `plan` would write, with their aliases, keyed by name.
fn entries(plan: &Plan, moved: &BTreeSet<&str>) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for i in plan
        .imported
        .iter()
        .filter(|i| moved.contains(i.name.as_str()))
    {
        let mut v = serde_json::to_value(&plan.servers[&i.name]).expect("a server serializes");
        let aliases: BTreeSet<&str> = i
            .sources
            .iter()
            .map(|s| s.name.as_str())
            .filter(|n| *n != i.name)
            .collect();
        if !aliases.is_empty() {
            v["aliases"] = json!(aliases);
        }
        out.insert(i.name.clone(), v);
    }
    out
}

/// The tool policies of the servers in `moved`.
fn policies<'a>(plan: &'a Plan, moved: &BTreeSet<&str>) -> Vec<(&'a str, &'a ToolPolicy)> {
    plan.imported
        .iter()
        .filter(|i| moved.contains(i.name.as_str()))
        .map(|i| (i.name.as_str(), &i.policy))
        .collect()
}

/// mws's config text with `servers` set (other members untouched) and the moved servers' tool
/// settings added to `policy` (`tool_policy::add_to_config`). A config has `upstream` or
/// `servers`, never both, so a single `upstream` goes: into the entry of the same server when one
/// is written, under `UPSTREAM_SERVER_NAME` otherwise, marked `adoptsUpstreamHistory` so its
/// history keeps counting; `mws init`'s placeholder (nothing listens there) is simply dropped.
fn config_text(
    text: &str,
    servers: &BTreeMap<String, Value>,
    policies: &[(&str, &ToolPolicy)],
) -> Result<(String, Vec<tool_policy::PolicyKey>), String> {
    let mut servers = servers.clone();
    let upstream = serde_json::from_str::<Value>(&crate::config::jsonc::strip(text))
        .ok()
        .and_then(|v| v.get("upstream").cloned());
    if let Some(up) = &upstream {
        let same = servers.values_mut().find(|v| same_server(v, up));
        match same {
            Some(v) => v["adoptsUpstreamHistory"] = json!(true),
            None if is_placeholder(up) => {}
            None => {
                let mut v = up.clone();
                v["adoptsUpstreamHistory"] = json!(true);
                servers.insert(UPSTREAM_SERVER_NAME.into(), v);
            }
        }
    }
    let mut t = text.to_string();
    for (name, v) in &servers {
        t = jsonc_edit::set(&t, &["servers"], name, v)?;
    }
    if upstream.is_some() {
        t = jsonc_edit::remove(&t, &[], "upstream")?;
    }
    tool_policy::add_to_config(t, policies)
}

/// The name a config's single `upstream` gets in `servers` when no client had it registered.
pub const UPSTREAM_SERVER_NAME: &str = "main";

/// Same server: the same URL, or the same command and arguments.
fn same_server(a: &Value, b: &Value) -> bool {
    let url = |v: &Value| v.get("url").and_then(Value::as_str).map(str::to_string);
    let cmd = |v: &Value| (v.get("command").cloned(), v.get("args").cloned());
    match (url(a), url(b)) {
        (Some(x), Some(y)) => super::plan::same_endpoint(&x, &y),
        (None, None) => a.get("command").is_some() && cmd(a) == cmd(b),
        _ => false,
    }
}

/// `mws init`'s `upstream`, which nothing answers until the user edits it.
fn is_placeholder(up: &Value) -> bool {
    let default = crate::config::Upstream::default();
    matches!(&default, crate::config::Upstream::Http(h)
        if up.get("url").and_then(Value::as_str) == Some(h.url.as_str())
            && up.get("headers").is_none_or(|h| h.as_object().is_some_and(|o| o.is_empty())))
}

/// True when `config` is mws itself at `url` (a registration of mws is not put behind mws).
fn is_mws(config: &ServerConfig, url: &str) -> bool {
    matches!(config, ServerConfig::Http { url: u, .. } if super::plan::same_endpoint(u, url))
}

/// Everything `--apply` checks before it changes a file, and what came of it.
struct Preflight<'a> {
    /// The clients that can go ahead, their moves and the files each will change.
    ready: Vec<(Client, Vec<Move<'a>>, Vec<PathBuf>)>,
    /// Why the other clients keep their servers.
    errors: Vec<String>,
    /// mws's config as it is now.
    config_before: Option<Vec<u8>>,
}

/// Every registration of `plan` that leaves its client (a registration of mws stays).
fn moves_of<'a>(plan: &'a Plan, target: &Target) -> Vec<Move<'a>> {
    plan.imported
        .iter()
        .filter(|i| !is_mws(&plan.servers[&i.name], &target.url))
        .flat_map(|i| {
            i.sources.iter().map(move |s| Move {
                server: &i.name,
                source: s,
            })
        })
        .collect()
}

/// The checks (see the module doc), writing nothing: `Err` when nothing can go ahead at all
/// (mws's config), the clients that can and why the others cannot otherwise.
fn preflight<'a>(
    plan: &'a Plan,
    env: &sources::Env,
    target: &Target,
    programs: &Programs,
    moves: &[Move<'a>],
) -> Result<Preflight<'a>, String> {
    // mws's own config must take the servers before any client lets go of them.
    let at_config = |e: String| format!("{}: {e}", target.config_path.display());
    super::write::target_of(&target.config_path)
        .and_then(|_| super::write::check_writable(&target.config_path))
        .map_err(at_config)?;
    let config_before = read(&target.config_path)?;
    let all: BTreeSet<&str> = moves.iter().map(|m| m.server).collect();
    let (full, _) = config_text(
        &String::from_utf8_lossy(config_before.as_deref().unwrap_or_default()),
        &entries(plan, &all),
        &policies(plan, &all),
    )
    .map_err(|e| at_config(format!("cannot add `servers`: {e}")))?;
    check_config(&full).map_err(|e| {
        at_config(format!(
            "the config with these servers would not load ({e}), so no client is changed"
        ))
    })?;
    let mut by_client: BTreeMap<Client, Vec<Move>> = BTreeMap::new();
    for m in moves {
        by_client
            .entry(m.source.origin.client)
            .or_default()
            .push(m.clone());
    }
    let mut out = Preflight {
        ready: Vec::new(),
        errors: Vec::new(),
        config_before,
    };
    for (client, ms) in by_client {
        match client_ready(plan, env, target, programs, client, &ms) {
            Ok(files) => out.ready.push((client, ms, files)),
            Err(e) => out.errors.push(e),
        }
    }
    Ok(out)
}

/// What `--apply` would refuse, for the dry run: the clients that would keep their servers and
/// why, or why nothing would move at all.
pub fn check(
    plan: &Plan,
    env: &sources::Env,
    target: &Target,
    programs: &Programs,
) -> Result<Vec<String>, String> {
    let moves = moves_of(plan, target);
    if moves.is_empty() {
        return Ok(Vec::new());
    }
    preflight(plan, env, target, programs, &moves).map(|p| p.errors)
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
    let moves = moves_of(plan, target);
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
    } = preflight(plan, env, target, programs, &moves)?;
    report.errors = errors;
    if ready.is_empty() {
        return Ok(report);
    }

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
    for (_, _, files) in &ready {
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

    let mut moved: BTreeSet<&str> = BTreeSet::new();
    for (client, ms, _) in &ready {
        let outcome = match client {
            Client::ClaudeCode => super::apply_cli::claude(plan, env, target, programs, ms),
            Client::Codex => super::apply_cli::codex(plan, env, target, programs, ms),
            _ => super::apply_files::edit(*client, target, ms),
        };
        for m in &outcome.moved {
            moved.insert(m);
        }
        for (file, at, name, action) in &outcome.changes {
            let at: Vec<&str> = at.iter().map(String::as_str).collect();
            set.record(file, &at, name, *action);
        }
        report.done.extend(outcome.done);
        report.errors.extend(outcome.errors);
    }
    let servers = entries(plan, &moved);
    if !servers.is_empty() {
        let (text, policy) = config_text(
            &String::from_utf8_lossy(config_before.as_deref().unwrap_or_default()),
            &servers,
            &policies(plan, &moved),
        )?;
        super::write::with_mode(&target.config_path, text.as_bytes(), Some(0o600))
            .map_err(|e| format!("{}: {e}", target.config_path.display()))?;
        for name in servers.keys() {
            set.record(&target.config_path, &["servers"], name, Action::Added);
        }
        let had_upstream = serde_json::from_str::<Value>(&crate::config::jsonc::strip(
            &String::from_utf8_lossy(config_before.as_deref().unwrap_or_default()),
        ))
        .is_ok_and(|v| v.get("upstream").is_some());
        if had_upstream {
            set.record(&target.config_path, &[], "upstream", Action::Removed);
        }
        for (key, had, globs) in &policy {
            // Undo takes the list out, then puts back the one the copy holds.
            if *had {
                set.record(&target.config_path, &["policy"], key, Action::Removed);
            }
            set.record(&target.config_path, &["policy"], key, Action::Added);
            report.done.push(format!(
                "{}: `policy.{key}` now also has {} (the clients' tool settings of the servers \
                 moved)",
                target.config_path.display(),
                globs.join(", ")
            ));
        }
        report.done.push(format!(
            "{}: {} server(s) in `servers`: {}",
            target.config_path.display(),
            servers.len(),
            servers.keys().cloned().collect::<Vec<_>>().join(", ")
        ));
    }
    set.finish()
        .map_err(|e| format!("cannot finish the backup set {}: {e}", set.dir.display()))?;
    report.done.push(match target.via {
        Via::Stdio => "restart the clients (Claude Desktop fully): each starts `mws serve \
                       --stdio` itself, nothing else has to run; `mws setup undo` takes back \
                       every change above"
            .into(),
        Via::Http => format!(
            "keep `mws serve` running (clients reach it at {}) and restart the clients; `mws \
             setup undo` takes back every change above",
            target.url
        ),
    });
    Ok(report)
}

/// What one client's changes came to.
#[derive(Debug, Default)]
pub(super) struct Outcome<'a> {
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
pub(super) fn read(path: &Path) -> Result<Option<Vec<u8>>, String> {
    match std::fs::read(path) {
        Ok(b) => Ok(Some(b)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot read {}: {e}", path.display())),
    }
}

pub(super) fn codex_user_file(env: &sources::Env) -> PathBuf {
    env.codex_home
        .clone()
        .unwrap_or_else(|| env.home.join(".codex"))
        .join("config.toml")
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;
