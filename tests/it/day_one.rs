//! Day-one history: transcripts in which a user called `github` (named `gh` in Codex) and `time`
//! directly, before mws, in two sessions; with those servers in mws's `servers`, `mws promote`
//! (which ingests first) lists their tools under the names mws exposes, `<server>__<tool>`.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::run::{json_run, mws_in};

/// The direct-call fixtures (fixtures/README.md).
fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/transcripts/direct")
        .join(rel)
}

fn promote_with(servers: Value) -> (Value, Value) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let state = d.join("state");
    let config = json!({
        "stateDir": state,
        "timeouts": {"listMs": 200},
        // The fixtures' dates stay inside the window whenever the test runs.
        "promote": {"windowDays": 36500, "keepDays": 36500},
        "transcripts": [
            {"type": "claude-code", "root": fixture("claude/projects")},
            {"type": "codex", "root": fixture("codex/sessions")},
        ],
        "servers": servers,
    });
    std::fs::write(d.join("c.json"), config.to_string()).unwrap();
    let rows = json_run(mws_in(d).args(["promote", "--json", "--config", "c.json"]));
    let export = std::fs::read_to_string(state.join("working-set.json")).unwrap();
    (rows, serde_json::from_str(&export).unwrap())
}

#[test]
fn direct_calls_before_mws_fill_the_working_set_under_prefixed_names() {
    let (rows, export) = promote_with(json!({
        // Nothing answers (loopback port 9, a command that does not exist): no catalog, so nothing
        // is dropped as unknown.
        "github": {"url": "http://127.0.0.1:9/mcp", "aliases": ["gh"]},
        "time": {"command": "/nonexistent/mcp-server-time"},
    }));
    let mut tools: Vec<&str> = export["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    tools.sort();
    assert_eq!(
        tools,
        ["github__create_issue", "time__get_current_time"],
        "{rows:#}"
    );
    for row in rows.as_array().unwrap() {
        assert_eq!(row["sessions"], 2, "{row:#}");
    }
}

/// Without the alias, Codex's `gh` calls are another server's: `github__create_issue` has one
/// session and stays out; `time` is used in both and is listed.
#[test]
fn an_alias_is_what_joins_a_client_s_other_name() {
    let (rows, export) = promote_with(json!({
        "github": {"url": "http://127.0.0.1:9/mcp"},
        "time": {"command": "/nonexistent/mcp-server-time"},
    }));
    assert_eq!(
        export["tools"],
        json!(["time__get_current_time"]),
        "{rows:#}"
    );
}
