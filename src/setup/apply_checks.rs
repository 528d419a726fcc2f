//! The checks `--apply` makes before it changes anything: whether a client's registration is
//! mws, whether mws's name is taken by another server in a client, where in a client's file a
//! registration lives (for `backup::Change`), and whether the config mws will write loads. Pure:
//! reads the plan, never a file.

use std::path::{Path, PathBuf};

use super::apply::{Move, Target};
use super::plan::Plan;
use super::{Client, Found, Origin, Scope};

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
