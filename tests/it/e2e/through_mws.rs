//! The issue-7 checks with `mws serve` in front of server-everything: what Claude Code and Codex
//! send the model through mws (search_tools, call_tool and the working set up front), that the
//! scripted call reaches the upstream, that `mws ingest` keeps exactly one `calls` row per call
//! under the transcript's session id, and that `mws promote` lists the called tool after two
//! sessions and not after one.

use serde_json::json;

use super::clients::{CODEX_KNOWN_MODEL, CODEX_UNKNOWN_MODEL, Claude, Codex};
use super::model::{self, FINAL_PREFIX, MockModel, Recorded};
use super::mws::Mws;
use super::peers::server_everything;
use super::{
    SERIAL, SERVER, Scratch, anthropic_tools, claude_blocks, codex_mcp_calls, first_main_request,
    marker, openai_namespace_tools, script,
};

/// The tool the scripted sessions call through `call_tool` and that promotion must pick up.
const CALLED: &str = "echo";
/// A pinned tool: the working set is not empty from the first session on.
const PINNED: &str = "get-sum";

/// The requests of the last run: those after the first `before`.
fn since(mock: &MockModel, before: usize) -> Vec<Recorded> {
    mock.requests().split_off(before)
}

#[test]
fn claude_code_through_mws_counts_each_call_once_and_promotes_after_two_sessions() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("claude-mws");
    let (_upstream, upstream_url) = server_everything(dir.path());
    let mock = MockModel::start(script("call_tool", json!({})), &model::log_path(dir.path()));
    let claude = Claude::new(dir.path(), &mock.url());
    let mws = Mws::start(
        dir.path(),
        &upstream_url,
        &[PINNED],
        &[("claude-code", &claude.transcripts_root())],
    );
    claude.add_http_server(SERVER, &mws.url);

    let mut sessions = Vec::new();
    for n in 1..=2 {
        let mark = marker(&format!("claude-mws-{n}"));
        mock.set_script(script(
            "call_tool",
            json!({"name": CALLED, "arguments": {"message": mark}}),
        ));
        let before = mock.requests().len();
        let label = format!("claude-mws-{n}");
        let run = claude.print(&label, "use the echo tool", "mcp__toolbox__call_tool");

        // The call went through mws to server-everything and back.
        let answer = run.result["result"].as_str().unwrap_or_default();
        assert!(
            answer.starts_with(FINAL_PREFIX) && answer.contains(&format!("Echo: {mark}")),
            "session {n}: the answer lacks the upstream's echo: {}",
            run.result
        );
        // Default mode, yet mws's tools are up front: alwaysLoad keeps them from being deferred.
        let reqs = since(&mock, before);
        let tools = anthropic_tools(first_main_request(&reqs));
        eprintln!("claude via mws, session {n}, first request tools: {tools:?}");
        for name in ["search_tools", "call_tool", PINNED] {
            let full = format!("mcp__{SERVER}__{name}");
            let found = tools.iter().find(|(t, _)| *t == full);
            assert!(
                matches!(found, Some((_, false))),
                "session {n}: {full} not sent up front (missing or deferred): {tools:?}"
            );
        }
        // The transcript's call id is the one mws stored; ingest keeps one row, in its session.
        let uses = claude_blocks(&run.transcript, "tool_use");
        let call = uses
            .iter()
            .find(|b| b["name"] == "mcp__toolbox__call_tool")
            .expect("no call_tool tool_use in the transcript");
        mws.ingest(&format!("ingest-{n}"));
        mws.ingest(&format!("ingest-{n}-again"));
        let rows = mws.calls(CALLED);
        let mine: Vec<_> = rows
            .iter()
            .filter(|r| r.client_call_id.as_deref() == call["id"].as_str())
            .collect();
        assert_eq!(
            mine.len(),
            1,
            "session {n}: want one calls row for {}, got {rows:?}",
            call["id"]
        );
        assert_eq!(mine[0].session_id, run.session_id, "{rows:?}");
        assert!(mine[0].ok, "{rows:?}");
        assert_eq!(
            rows.len(),
            n,
            "one row per call over all sessions: {rows:?}"
        );
        sessions.push(run.session_id.clone());

        let (decisions, listed) = mws.promote(&format!("promote-{n}"));
        let has = listed.iter().any(|t| t == CALLED);
        assert_eq!(
            has,
            n == 2,
            "after {n} session(s) {CALLED} listed={has}; working set {listed:?}; decisions {decisions}"
        );
    }
    assert_ne!(sessions[0], sessions[1]);

    // Session 3: the promoted tool is sent up front and callable directly.
    mws.wait_listed(CALLED);
    let mark = marker("claude-mws-3");
    mock.set_script(script(CALLED, json!({"message": mark})));
    let before = mock.requests().len();
    let run = claude.print("claude-mws-3", "use the echo tool", "mcp__toolbox__echo");
    let tools = anthropic_tools(first_main_request(&since(&mock, before)));
    assert!(
        tools.iter().any(|(t, d)| t == "mcp__toolbox__echo" && !d),
        "promoted echo not sent up front: {tools:?}"
    );
    let answer = run.result["result"].as_str().unwrap_or_default();
    assert!(answer.contains(&format!("Echo: {mark}")), "{}", run.result);
}

#[test]
fn codex_through_mws_counts_each_call_once_and_promotes_after_two_sessions() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("codex-mws");
    let (_upstream, upstream_url) = server_everything(dir.path());
    let mock = MockModel::start(script("call_tool", json!({})), &model::log_path(dir.path()));
    let codex_roots = dir.path().join("codex-home/sessions");
    let mws = Mws::start(
        dir.path(),
        &upstream_url,
        &[PINNED],
        &[("codex", &codex_roots)],
    );
    let codex = Codex::new(
        dir.path(),
        CODEX_UNKNOWN_MODEL,
        &mock.url(),
        SERVER,
        &mws.url,
    );
    assert_eq!(codex.transcripts_root(), codex_roots);

    for n in 1..=2 {
        let mark = marker(&format!("codex-mws-{n}"));
        mock.set_script(script(
            "call_tool",
            json!({"name": CALLED, "arguments": {"message": mark}}),
        ));
        let before = mock.requests().len();
        let run = codex.exec(&format!("codex-mws-{n}"), "use the echo tool");
        let reqs = since(&mock, before);

        let first = reqs
            .iter()
            .find(|r| r.path == "/v1/responses")
            .expect("no /v1/responses request");
        let names = openai_namespace_tools(&first.body, "mcp__toolbox");
        eprintln!("codex via mws, session {n}, mcp__toolbox tools: {names:?}");
        for name in ["search_tools", "call_tool", "run_script", "get_sum"] {
            assert!(
                names.iter().any(|t| t == name),
                "{name} not sent: {names:?}"
            );
        }
        let last = &reqs
            .iter()
            .rfind(|r| r.path == "/v1/responses")
            .unwrap()
            .body;
        assert!(
            last["input"].to_string().contains(&format!("Echo: {mark}")),
            "session {n}: the model never got the upstream's echo"
        );
        let items = codex_mcp_calls(&run.rollout);
        let item = items
            .iter()
            .find(|i| i["tool"] == "call_tool")
            .unwrap_or_else(|| panic!("no call_tool McpToolCall in {}", run.rollout.display()));
        assert_eq!(item["status"], "completed", "{item}");

        mws.ingest(&format!("ingest-{n}"));
        mws.ingest(&format!("ingest-{n}-again"));
        let rows = mws.calls(CALLED);
        let mine: Vec<_> = rows
            .iter()
            .filter(|r| r.client_call_id.as_deref() == item["id"].as_str())
            .collect();
        assert_eq!(mine.len(), 1, "session {n}: {rows:?}");
        assert_eq!(mine[0].session_id, run.session_id, "{rows:?}");
        assert!(mine[0].ok, "{rows:?}");
        assert_eq!(
            rows.len(),
            n,
            "one row per call over all sessions: {rows:?}"
        );

        let (decisions, listed) = mws.promote(&format!("promote-{n}"));
        let has = listed.iter().any(|t| t == CALLED);
        assert_eq!(
            has,
            n == 2,
            "after {n} session(s) {CALLED} listed={has}; working set {listed:?}; decisions {decisions}"
        );
    }

    // Session 3, with a model Codex knows (its default: MCP tools behind tool_search): the
    // promoted tool is found by Codex's own search over mws's listing and called directly.
    mws.wait_listed(CALLED);
    let mark = marker("codex-mws-3");
    mock.set_script(script(CALLED, json!({"message": mark})));
    let codex = Codex::new(dir.path(), CODEX_KNOWN_MODEL, &mock.url(), SERVER, &mws.url);
    let before = mock.requests().len();
    let run = codex.exec("codex-mws-3", "use the echo tool");
    let reqs = since(&mock, before);
    let last = &reqs
        .iter()
        .rfind(|r| r.path == "/v1/responses")
        .unwrap()
        .body;
    let input = last["input"].to_string();
    assert!(input.contains("tool_search_output"), "no tool_search round");
    assert!(
        input.contains(&format!("Echo: {mark}")),
        "the model never got the echo"
    );
    let items = codex_mcp_calls(&run.rollout);
    assert!(
        items
            .iter()
            .any(|i| i["tool"] == CALLED && i["status"] == "completed"),
        "{items:?}"
    );
}
