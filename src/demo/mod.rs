//! The built-in demo upstream (`mws demo-upstream`, run by `mws serve --demo`): an MCP server over
//! newline-delimited JSON-RPC on stdin/stdout whose ~60-tool catalog (`fixtures/catalog.json`,
//! embedded) really works on in-memory data seeded at start. Hand-written on serde_json; no SDK.
//! Must not touch the network, the state dir or any file: everything lives and dies in memory.

pub mod content;
pub mod protocol;
pub mod tools;

use std::io::{BufRead, Write};

use crate::config::{StdioUpstream, Upstream};

/// The catalog the demo upstream serves, byte for byte.
pub const CATALOG_JSON: &str = include_str!("../../fixtures/catalog.json");

/// Tools a newcomer would use first: `serve --demo` can pin these so that the first `tools/list`
/// already shows a working set. Each is in the catalog (a test checks).
pub const DEMO_PINS: &[&str] = &[
    "mail_send_message",
    "mail_list_messages",
    "calendar_list_events",
    "calendar_create_event",
    "drive_search_files",
];

/// The upstream `serve --demo` puts in front of itself: this same executable, `demo-upstream`.
pub fn demo_upstream_config() -> Upstream {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "mws".into());
    Upstream::Stdio(StdioUpstream {
        command: exe,
        args: vec!["demo-upstream".into()],
        env: Default::default(),
        cwd: None,
    })
}

/// Serves one client: reads a JSON-RPC message per line, writes each reply as one line. Returns
/// at end of input.
pub fn serve_lines(input: impl BufRead, mut output: impl Write) -> std::io::Result<()> {
    let mut server = protocol::Server::new(crate::clock::now());
    for line in input.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        if let Some(reply) = server.handle_line(&line) {
            output.write_all(reply.as_bytes())?;
            output.write_all(b"\n")?;
            output.flush()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
