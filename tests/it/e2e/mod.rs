//! End to end with the real clients (issue 7): the Claude Code and Codex CLIs (npm, pinned in
//! tests/peers/package.json) run non-interactively against a scripted mock model on loopback and
//! `@modelcontextprotocol/server-everything`, first directly (proving the harness), then through
//! `mws serve` followed by `mws ingest` and `mws promote`. Its peers are installed on first use.
//! The tests run one at a time (they are heavy on two cores). `E2E_KEEP=1` keeps the temp dirs
//! (logs, homes, transcripts, the model's request log) and prints where they are.

mod after_apply;
mod clients;
mod code_mode;
mod model;
mod mws;
mod peers;
mod projects;
mod servers;
mod through_mws;

use std::path::Path;
use std::sync::Mutex;

use serde_json::{Value, json};

use clients::{CODEX_KNOWN_MODEL, CODEX_UNKNOWN_MODEL, Claude, Codex};
use model::{FINAL_PREFIX, MockModel, Recorded, Script};
use peers::{json_lines, server_everything};

/// The e2e tests share the machine's two cores with each other and the rest of the suite.
static SERIAL: Mutex<()> = Mutex::new(());

/// The name the MCP server is registered under in each client (the config's default serverName).
pub const SERVER: &str = "toolbox";

/// A temp dir, kept (and printed) when `E2E_KEEP` is set.
pub struct Scratch {
    _dir: Option<tempfile::TempDir>,
    path: std::path::PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let t = tempfile::Builder::new()
            .prefix(&format!("mws-e2e-{name}-"))
            .tempdir()
            .unwrap();
        let path = t.path().to_path_buf();
        if std::env::var_os("E2E_KEEP").is_some() {
            eprintln!("e2e {name}: keeping {}", path.display());
            let _ = t.keep();
            return Scratch { _dir: None, path };
        }
        Scratch {
            _dir: Some(t),
            path,
        }
    }
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A per-run marker the upstream's echo must send back: only a real call can produce it.
pub fn marker(label: &str) -> String {
    let nanos = ::mws::clock::now().nanosecond();
    format!("e2e-{label}-{nanos}")
}

/// The script for one echo call through `tool` (a tool name the upstream or mws lists).
pub fn script(tool: &str, input: Value) -> Script {
    Script {
        anthropic_name: format!("mcp__{SERVER}__{tool}"),
        openai_namespace: format!("mcp__{SERVER}"),
        openai_name: tool.replace('-', "_"),
        input,
    }
}

/// The first Messages request of the main loop (the one that offers tools).
pub fn first_main_request(reqs: &[Recorded]) -> &Value {
    &reqs
        .iter()
        .find(|r| {
            r.path == "/v1/messages" && r.body["tools"].as_array().is_some_and(|t| !t.is_empty())
        })
        .unwrap_or_else(|| {
            panic!(
                "no /v1/messages request with tools among {} requests",
                reqs.len()
            )
        })
        .body
}

/// `(name, deferred)` for every tool of an Anthropic request.
pub fn anthropic_tools(body: &Value) -> Vec<(String, bool)> {
    body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap_or_default().to_string();
            (name, t["defer_loading"] == true)
        })
        .collect()
}

/// The names listed as deferred in the request's system messages (Claude Code's ToolSearch list).
pub fn deferred_names_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "system")
        .map(|m| m.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every tool_use / tool_result block on the user and assistant lines of a Claude transcript.
pub fn claude_blocks(transcript: &Path, kind: &str) -> Vec<Value> {
    json_lines(transcript)
        .into_iter()
        .filter(|l| l["type"] == "user" || l["type"] == "assistant")
        .flat_map(|l| {
            l["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter(|b| b["type"] == kind)
        .collect()
}

/// The McpToolCall items a Codex rollout completed.
pub fn codex_mcp_calls(rollout: &Path) -> Vec<Value> {
    json_lines(rollout)
        .into_iter()
        .filter(|l| l["type"] == "event_msg" && l["payload"]["type"] == "item_completed")
        .map(|l| l["payload"]["item"].clone())
        .filter(|i| i["type"] == "McpToolCall")
        .collect()
}

#[test]
fn claude_code_calls_server_everything_directly() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("claude-direct");
    let (_upstream, url) = server_everything(dir.path());
    let mark = marker("claude-direct");
    let mock = MockModel::start(
        script("echo", json!({"message": mark})),
        &model::log_path(dir.path()),
    );
    let claude = Claude::new(dir.path(), &mock.url());
    claude.add_http_server(SERVER, &url);
    let run = claude.print("claude-direct", "use the echo tool", "mcp__toolbox__echo");

    // The call reached server-everything: its echo of the marker came back to the model.
    let answer = run.result["result"].as_str().unwrap_or_default();
    assert!(
        answer.starts_with(FINAL_PREFIX) && answer.contains(&format!("Echo: {mark}")),
        "final answer lacks the upstream's echo: {}",
        run.result
    );
    // Default mode: tool search on, the MCP tools deferred (named in a system message, not sent).
    let reqs = mock.requests();
    let first = first_main_request(&reqs);
    let tools = anthropic_tools(first);
    eprintln!("claude direct, first request tools: {tools:?}");
    assert!(
        tools.iter().all(|(n, _)| !n.starts_with("mcp__")),
        "MCP tools sent up front although Claude Code defers them: {tools:?}"
    );
    assert!(tools.iter().any(|(n, _)| n == "ToolSearch"), "{tools:?}");
    assert!(
        deferred_names_text(first).contains("mcp__toolbox__echo"),
        "echo not named among the deferred tools"
    );
    // The transcript holds the call and its result.
    let uses = claude_blocks(&run.transcript, "tool_use");
    let call = uses
        .iter()
        .find(|b| b["name"] == "mcp__toolbox__echo")
        .unwrap_or_else(|| panic!("no echo tool_use in {}", run.transcript.display()));
    let results = claude_blocks(&run.transcript, "tool_result");
    let result = results
        .iter()
        .find(|b| b["tool_use_id"] == call["id"])
        .expect("no tool_result for the echo call");
    assert!(result["is_error"] != true, "{result}");
    assert!(result["content"].to_string().contains(&mark), "{result}");
}

#[test]
fn codex_calls_server_everything_directly() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("codex-direct");
    let (_upstream, url) = server_everything(dir.path());
    let mock = MockModel::start(script("echo", json!({})), &model::log_path(dir.path()));
    for (model, deferred) in [(CODEX_KNOWN_MODEL, true), (CODEX_UNKNOWN_MODEL, false)] {
        let label = format!("codex-direct-{model}");
        let mark = marker(&label);
        mock.set_script(script("echo", json!({"message": mark})));
        let before = mock.requests().len();
        let codex = Codex::new(&dir.path().join(model), model, &mock.url(), SERVER, &url);
        let run = codex.exec(&label, "use the echo tool");
        let reqs = mock.requests().split_off(before);

        // What the model was sent: a known model gets tool_search and no MCP tool up front.
        let first = &reqs
            .iter()
            .find(|r| r.path == "/v1/responses")
            .expect("no /v1/responses request")
            .body;
        let up_front = openai_namespace_tools(first, "mcp__toolbox");
        let search = first["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["type"] == "tool_search");
        eprintln!(
            "codex direct {model}: tool_search={search}, mcp__toolbox up front: {up_front:?}"
        );
        assert_eq!(search, deferred, "{model}: tool_search offered?");
        assert_eq!(up_front.is_empty(), deferred, "{model}: {up_front:?}");
        if !deferred {
            assert!(up_front.iter().any(|n| n == "echo"), "{up_front:?}");
            assert!(
                up_front.iter().any(|n| n == "get_sum"),
                "names not sanitized: {up_front:?}"
            );
        }
        // The MCP call completed at the upstream (unsanitized name) and the model saw its echo.
        let calls = codex_mcp_calls(&run.rollout);
        let call = calls
            .iter()
            .find(|c| c["tool"] == "echo")
            .unwrap_or_else(|| panic!("no echo McpToolCall in {}", run.rollout.display()));
        assert_eq!(call["server"], SERVER);
        assert_eq!(call["status"], "completed", "{call}");
        let last = &reqs
            .iter()
            .rfind(|r| r.path == "/v1/responses")
            .unwrap()
            .body;
        assert!(
            last["input"].to_string().contains(&format!("Echo: {mark}")),
            "{model}: the model never got the upstream's echo"
        );
        assert!(
            run.events.iter().any(|e| e["type"] == "turn.completed"),
            "{:?}",
            run.events
        );
    }
}

/// The tool names inside the request's `namespace` tool entry `ns` (Codex groups MCP tools so).
pub fn openai_namespace_tools(body: &Value, ns: &str) -> Vec<String> {
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    tools
        .iter()
        .filter(|t| t["name"] == ns)
        .flat_map(|t| t["tools"].as_array().cloned().unwrap_or_default())
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
#[should_panic(
    expected = "missing after the peers were installed: check `bash scripts/setup-peers.sh`"
)]
fn a_missing_peer_fails_naming_the_setup_script() {
    peers::peer("@example/not-installed/bin/cli");
}
