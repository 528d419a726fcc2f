//! The part of `--apply` done by editing the clients' files (Claude Desktop, Cursor, VS Code,
//! Gemini CLI): each file loses the moved entries and gains mws's registration, comments and
//! other keys kept (`jsonc_edit`), written through links with the file's mode kept (`write`).
//! Must not touch a file that holds none of the moves.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{Value, json};

use super::{Move, Outcome, Target, Via};
use crate::setup::backup::Action;
use crate::setup::{Client, jsonc_edit};

/// The key of the map a client keeps its servers in, in the files mws edits.
pub(super) fn servers_key(client: Client) -> &'static str {
    match client {
        Client::VsCode => "servers",
        _ => "mcpServers",
    }
}

/// How a client whose file mws edits registers mws: started over stdio (the default), or
/// reached at its HTTP endpoint (`--http`; Claude Desktop's file holds only commands).
fn registration(client: Client, target: &Target) -> Value {
    let stdio = target.via == Via::Stdio || client == Client::ClaudeDesktop;
    match (client, stdio) {
        (Client::VsCode, true) => {
            json!({"type": "stdio", "command": target.stdio[0], "args": target.stdio[1..]})
        }
        (_, true) => json!({"command": target.stdio[0], "args": target.stdio[1..]}),
        (Client::VsCode, false) => json!({"type": "http", "url": target.url}),
        (Client::GeminiCli, false) => json!({"httpUrl": target.url}),
        (_, false) => json!({"url": target.url}),
    }
}

/// Each file of `ms` loses the moved entries and gains mws's (unless it has mws under that name
/// already: `apply` has stopped a client whose file holds another server of that name).
pub(super) fn edit<'a>(client: Client, target: &Target, ms: &[Move<'a>]) -> Outcome<'a> {
    let mut out = Outcome::default();
    let key = servers_key(client);
    let entry = registration(client, target);
    let mut files: BTreeMap<&Path, Vec<&Move>> = BTreeMap::new();
    for m in ms {
        files.entry(&m.source.origin.file).or_default().push(m);
    }
    for (file, ms) in files {
        let mut added = false;
        let edited = (|| -> Result<String, String> {
            let before = super::read(file)?.ok_or("it is gone")?;
            let mut text = String::from_utf8(before).map_err(|e| e.to_string())?;
            for m in &ms {
                text = jsonc_edit::remove(&text, &[key], &m.source.name)?;
            }
            let doc: Value = serde_json::from_str(&crate::config::jsonc::strip(&text))
                .map_err(|e| e.to_string())?;
            if doc
                .get(key)
                .and_then(|s| s.get(&target.server_name))
                .is_none()
            {
                text = jsonc_edit::set(&text, &[key], &target.server_name, &entry)?;
                added = true;
            }
            Ok(text)
        })();
        let names = ms
            .iter()
            .map(|m| m.source.name.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        match edited.and_then(|t| crate::setup::write::keeping_mode(file, t.as_bytes())) {
            Ok(()) => {
                out.moved.extend(ms.iter().map(|m| m.server));
                for m in &ms {
                    out.change(file, &[key], &m.source.name, Action::Removed);
                }
                if added {
                    out.change(file, &[key], &target.server_name, Action::Added);
                }
                out.done.push(format!(
                    "{}: {}: {names} now behind mws; mws registered as `{}`",
                    client.as_str(),
                    file.display(),
                    target.server_name
                ));
            }
            Err(e) => out.errors.push(format!(
                "{}: {}: not changed ({e}); {names} stay with {}",
                client.as_str(),
                file.display(),
                client.as_str()
            )),
        }
    }
    out
}
