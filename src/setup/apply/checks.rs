//! The checks `--apply` makes before it changes anything: whether a client's registration is
//! mws, whether mws's name is taken by another server in a client, where in a client's file a
//! registration lives (for `backup::Change`), whether a client's files can be changed, and whether
//! the config mws will write loads; `preflight` runs them all and sorts the clients into those
//! that can go ahead and those that keep their servers. Reads files' bytes and modes; must not
//! write.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::config::{config_text, entries, policies};
use super::files::servers_key;
use super::{Move, Target, read};
use crate::setup::plan::{Plan, ServerConfig};
use crate::setup::sources::{self, Programs};
use crate::setup::{Client, Found, Origin, Scope};

/// True when a client's registration is mws: its endpoint, or an `mws` program.
pub(super) fn found_is_mws(f: &Found, target: &Target) -> bool {
    match &f.transport {
        crate::setup::Transport::Http { url, .. } => {
            crate::setup::plan::same_endpoint(url, &target.url)
        }
        crate::setup::Transport::Stdio { command, .. } => {
            Some(command) == target.stdio.first()
                || Path::new(command).file_name().is_some_and(|n| n == "mws")
        }
        _ => false,
    }
}

/// Where mws's registration in `client` would meet another server of the same name: the file
/// that has it. Claude Code and Codex register mws before letting go of the moved servers, and
/// Claude Code lets a local or project server shadow a user one, so any registration of that
/// name there counts; an edited file counts only when the name stays in it.
pub(super) fn name_taken(
    plan: &Plan,
    client: Client,
    target: &Target,
    ms: &[Move],
) -> Option<PathBuf> {
    let cli = matches!(client, Client::ClaudeCode | Client::Codex);
    let leaving = |o: &Origin, name: &str| {
        ms.iter()
            .any(|m| m.source.name == name && m.source.origin == *o)
    };
    let in_place = |o: &Origin| cli || ms.iter().any(|m| m.source.origin.file == o.file);
    let found = plan.found.iter().find(|f| {
        f.origin.client == client
            && f.name == target.server_name
            && in_place(&f.origin)
            && !found_is_mws(f, target)
            && (cli || !leaving(&f.origin, &f.name))
    });
    let skipped = plan
        .skipped
        .iter()
        .find(|s| s.origin.client == client && s.name == target.server_name && in_place(&s.origin));
    found
        .map(|f| f.origin.file.clone())
        .or_else(|| skipped.map(|s| s.origin.file.clone()))
}

/// The keys to the map that holds a client's registration (`backup::Change::at`).
pub(super) fn place_of(origin: &Origin) -> Vec<String> {
    let key = match origin.client {
        Client::Codex => "mcp_servers",
        c => servers_key(c),
    };
    match (origin.client, origin.scope, &origin.project) {
        (Client::ClaudeCode, Scope::Local, Some(p)) => {
            vec!["projects".into(), p.display().to_string(), key.into()]
        }
        _ => vec![key.into()],
    }
}

/// Parses and validates `text` as mws's config would be loaded.
pub(super) fn check_config(text: &str) -> Result<(), String> {
    let c = crate::config::parse(text).map_err(|p| {
        if p.line == 0 {
            p.message
        } else {
            format!("line {}, column {}: {}", p.line, p.column, p.message)
        }
    })?;
    crate::config::validate(&c)
}

/// Whether `client` can let go of `ms`: the files it will change, or why its servers stay (its
/// CLI missing, a file changed since the plan, read-only or unreachable, mws's name taken).
pub(super) fn client_ready(
    plan: &Plan,
    env: &sources::Env,
    target: &Target,
    programs: &Programs,
    client: Client,
    ms: &[Move],
) -> Result<Vec<PathBuf>, String> {
    let names = || {
        ms.iter()
            .map(|m| m.source.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let program = match client {
        Client::ClaudeCode => Some(("claude", &programs.claude)),
        Client::Codex => Some(("codex", &programs.codex)),
        _ => None,
    };
    if let Some((cli, None)) = program {
        return Err(format!(
            "{}: `{cli}` is not on PATH, so its registrations cannot be changed; {} stay with {} and are not put behind mws",
            client.as_str(),
            names(),
            client.as_str()
        ));
    }
    let mut files: Vec<PathBuf> = ms.iter().map(|m| m.source.origin.file.clone()).collect();
    match client {
        Client::ClaudeCode => files.push(sources::claude_user_file(env)),
        Client::Codex => files.push(super::codex_user_file(env)),
        _ => {}
    }
    files.sort();
    files.dedup();
    let changed: Vec<&PathBuf> = files.iter().filter(|f| !unchanged(plan, f)).collect();
    if let Some(f) = changed.first() {
        return Err(format!(
            "{}: changed since it was read; {} stay with {}; run `mws setup import --apply` again",
            f.display(),
            names(),
            client.as_str()
        ));
    }
    let unwritable = files.iter().find_map(|f| {
        crate::setup::write::target_of(f)
            .and_then(|_| crate::setup::write::check_writable(f))
            .err()
            .map(|e| (f, e))
    });
    if let Some((f, why)) = unwritable {
        return Err(format!(
            "{}: {}: {why}; {} stay with {}",
            client.as_str(),
            f.display(),
            names(),
            client.as_str()
        ));
    }
    if let Some(f) = name_taken(plan, client, target, ms) {
        return Err(format!(
            "{}: {} already has a server named `{}` that is not mws; set `serverName` in {} \
             to a name {} does not use (or rename that server), then run `mws setup import \
             --apply` again; {} stay with {}",
            client.as_str(),
            f.display(),
            target.server_name,
            target.config_path.display(),
            client.as_str(),
            names(),
            client.as_str()
        ));
    }
    Ok(files)
}

/// The file holds what the plan was made from (or, not read for the plan, is as absent or
/// present as then: a file only a CLI writes, such as a missing `~/.codex/config.toml`).
fn unchanged(plan: &Plan, file: &Path) -> bool {
    let now = std::fs::read(file)
        .ok()
        .map(|b| crate::setup::doc::digest(&b));
    match plan.files.iter().find(|f| f.file == file) {
        Some(f) => f.digest == now,
        None => true,
    }
}

/// True when `config` is mws itself at `url` (a registration of mws is not put behind mws).
fn is_mws(config: &ServerConfig, url: &str) -> bool {
    matches!(config, ServerConfig::Http { url: u, .. } if crate::setup::plan::same_endpoint(u, url))
}

/// A client that can go ahead: its moves and the files it will change.
pub(super) type Ready<'a> = (Client, Vec<Move<'a>>, Vec<PathBuf>);

/// Everything `--apply` checks before it changes a file, and what came of it.
pub(super) struct Preflight<'a> {
    /// The clients that can go ahead.
    pub ready: Vec<Ready<'a>>,
    /// Why the other clients keep their servers.
    pub errors: Vec<String>,
    /// mws's config as it is now.
    pub config_before: Option<Vec<u8>>,
}

/// Every registration of `plan` that leaves its client (a registration of mws stays).
pub(super) fn moves_of<'a>(plan: &'a Plan, target: &Target) -> Vec<Move<'a>> {
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
pub(super) fn preflight<'a>(
    plan: &'a Plan,
    env: &sources::Env,
    target: &Target,
    programs: &Programs,
    moves: &[Move<'a>],
) -> Result<Preflight<'a>, String> {
    // mws's own config must take the servers before any client lets go of them.
    let at_config = |e: String| format!("{}: {e}", target.config_path.display());
    crate::setup::write::target_of(&target.config_path)
        .and_then(|_| crate::setup::write::check_writable(&target.config_path))
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
