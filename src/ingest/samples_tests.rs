//! The adapters alone (no database) over the sample transcripts: every expected MCP call with its
//! server, tool, session, sub-agent and status, and nothing else.

use std::path::Path;

use serde_json::Value;

use super::claude_code::ClaudeCode;
use super::codex::Codex;
use super::{Adapter, Names, parse_all};
use crate::call::Call;

const SERVERS: &[&str] = &[
    "github",
    "sentry",
    "linear-server",
    "context7",
    "claude.ai Notion",
    "plugin:episodic-memory:episodic-memory",
    "chrome-devtools",
    "linear",
];

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "jsonl") {
            out.push(p);
        }
    }
}

#[test]
fn sample_calls_servers_agents_and_statuses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/transcripts");
    let names = Names::new(SERVERS, &[] as &[&str]);
    let mut got: Vec<(String, Call)> = Vec::new();
    for (client, dir) in [("claude", "claude/projects"), ("codex", "codex/sessions")] {
        let mut paths = Vec::new();
        files(&root.join(dir), &mut paths);
        for path in paths {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            let fallback = "2000-01-01T00:00:00.000Z";
            let mut adapter: Box<dyn Adapter> = if client == "claude" {
                Box::new(ClaudeCode::new(&names, &stem, fallback))
            } else {
                Box::new(Codex::new(&names, &stem, fallback))
            };
            let (calls, bad) = parse_all(adapter.as_mut(), &std::fs::read(&path).unwrap());
            assert_eq!(bad, 0, "{}", path.display());
            for c in calls {
                // First sighting wins: replays and fork copies add nothing.
                if !got
                    .iter()
                    .any(|(_, g)| g.client_call_id == c.client_call_id)
                {
                    got.push((client.to_string(), c));
                }
            }
        }
    }
    let expected: Value =
        serde_json::from_slice(&std::fs::read(root.join("expected_mcp_calls.json")).unwrap())
            .unwrap();
    let mut want = Vec::new();
    for e in expected["mcp_calls"].as_array().unwrap() {
        let s = |k: &str| e[k].as_str().map(String::from);
        let status = match s("status").unwrap().as_str() {
            "pending" => continue,
            "ok_code_mode" => "ok".to_string(),
            other => other.to_string(),
        };
        want.push((
            s("client").unwrap(),
            s("call_id").unwrap(),
            s("server").unwrap(),
            s("tool").unwrap(),
            s("session_id").unwrap(),
            s("agent_id"),
            s("timestamp").unwrap(),
            status,
        ));
    }
    let mut got: Vec<_> = got
        .into_iter()
        .map(|(client, c)| {
            let status = c.status.map_or("open", |s| s.as_str()).to_string();
            // Claude Code names connectors and plugins by their normalised form.
            let server = super::names::claude_normalize(c.server.as_deref().unwrap_or(""));
            (
                client,
                c.call_id().to_string(),
                server,
                c.tool,
                c.session_id,
                c.agent_id,
                c.ts,
                status,
            )
        })
        .collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
}
