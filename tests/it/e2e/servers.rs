//! The real Claude Code CLI through `mws serve` with two servers behind it (`servers`): the
//! server-everything and mcp-server-time stdio servers, each pinned, so Claude Code gets both tools
//! up front under `mcp__toolbox__<server>__<tool>`. The scripted model calls one tool of each; the
//! answers must come from the right server, and `mws ingest` must leave one `calls` row per call
//! under the prefixed name and the transcript's call id.

use serde_json::json;

use super::clients::Claude;
use super::model::{self, FINAL_PREFIX, MockModel};
use super::mws::Mws;
use super::{
    SERIAL, SERVER, Scratch, anthropic_tools, claude_blocks, first_main_request, marker, script,
};

/// The exposed (prefixed) names of the tool called on each server.
const ECHO: &str = "everything__echo";
const TIME: &str = "time__get_current_time";

#[test]
fn claude_code_through_mws_calls_a_tool_of_each_of_two_servers() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("claude-servers");
    let everything = crate::support::server_everything();
    let time = crate::support::mcp_server_time();
    let mock = MockModel::start(script(ECHO, json!({})), &model::log_path(dir.path()));
    let claude = Claude::new(dir.path(), &mock.url());
    let servers = json!({
        "everything": {"command": "node", "args": [everything, "stdio"]},
        "time": {"command": time, "args": ["--local-timezone", "UTC"]},
    });
    let mws = Mws::start_servers(
        dir.path(),
        servers,
        &[ECHO, TIME],
        &[("claude-code", &claude.transcripts_root())],
    );
    // Both servers listed before Claude Code starts: it connects to an HTTP server in the
    // background and sends its first request without the tools of one still listing.
    mws.wait_listed(ECHO);
    mws.wait_listed(TIME);
    claude.add_http_server(SERVER, &mws.url);

    let mark = marker("claude-servers");
    let runs = [
        (ECHO, json!({"message": mark}), format!("Echo: {mark}")),
        (TIME, json!({"timezone": "UTC"}), "datetime".to_string()),
    ];
    for (n, (tool, input, want)) in runs.into_iter().enumerate() {
        let full = format!("mcp__{SERVER}__{tool}");
        mock.set_script(script(tool, input));
        let before = mock.requests().len();
        let label = format!("claude-servers-{n}");
        let run = claude.print(&label, "use the tool", &full);

        // Both servers' pinned tools are sent up front, under their prefixed names.
        let reqs = mock.requests().split_off(before);
        let tools = anthropic_tools(first_main_request(&reqs));
        for name in [ECHO, TIME] {
            let name = format!("mcp__{SERVER}__{name}");
            assert!(
                tools.iter().any(|(t, deferred)| *t == name && !deferred),
                "{name} not sent up front: {tools:?}"
            );
        }
        // The call reached its own server: only that server can produce this answer.
        let answer = run.result["result"].as_str().unwrap_or_default();
        assert!(
            answer.starts_with(FINAL_PREFIX) && answer.contains(&want),
            "{tool}: the answer lacks the server's result ({want}): {}",
            run.result
        );
        assert!(answer.contains("[is_error=false]"), "{}", run.result);
        if tool == TIME {
            assert!(answer.contains("UTC"), "{}", run.result);
        }

        // One `calls` row under the prefixed name and the transcript's call id, after ingest.
        let uses = claude_blocks(&run.transcript, "tool_use");
        let call = uses
            .iter()
            .find(|b| b["name"] == full.as_str())
            .unwrap_or_else(|| panic!("no {full} tool_use in {}", run.transcript.display()));
        mws.ingest(&format!("ingest-{n}"));
        let rows = mws.calls(tool);
        let mine: Vec<_> = rows
            .iter()
            .filter(|r| r.client_call_id.as_deref() == call["id"].as_str())
            .collect();
        assert_eq!(mine.len(), 1, "{tool}: want one calls row: {rows:?}");
        assert_eq!(mine[0].session_id, run.session_id, "{rows:?}");
        assert!(mine[0].ok, "{rows:?}");
        assert_eq!(rows.len(), 1, "{tool}: one row for one call: {rows:?}");
    }
}
