//! The checks `--apply` makes before it changes anything: whether a client's registration is
//! mws, whether mws's name is taken by another server in a client, where in a client's file a
//! registration lives (for `backup::Change`), whether a client's files can be changed, and whether
//! the config mws will write loads. Reads files' bytes and modes; must not write.

use std::path::{Path, PathBuf};

use super::apply::{Move, Programs, Target};
use super::backup;
use super::plan::Plan;
use super::{Client, Found, Origin, Scope, sources};

/// True when a client's registration is mws: its endpoint, or an `mws` program.
pub(super) fn found_is_mws(f: &Found, target: &Target) -> bool {
    match &f.transport {
        super::Transport::Http { url, .. } => super::plan::same_endpoint(url, &target.url),
        super::Transport::Stdio { command, .. } => {
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
        c => super::apply_files::servers_key(c),
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
        Client::Codex => files.push(super::apply::codex_user_file(env)),
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
        super::write::target_of(f)
            .and_then(|_| super::write::check_writable(f))
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
    let now = std::fs::read(file).ok().map(|b| backup::digest(&b));
    match plan.files.iter().find(|f| f.file == file) {
        Some(f) => f.digest == now,
        None => true,
    }
}
