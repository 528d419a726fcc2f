//! A scripted model server for the end-to-end tests, on 127.0.0.1 only: the Anthropic Messages API
//! (Claude Code) and the OpenAI Responses API (Codex). A conversation's first turn calls one named
//! tool; the turn after that tool's result answers with text quoting the result. Every request is
//! recorded (path and body) in memory and appended to a JSONL file. Must not listen beyond loopback
//! or answer without bound.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// Requests answered before the mock refuses everything with 500, so that a client stuck in a
/// retry loop ends. Raising it lets longer conversations through.
const MAX_REQUESTS: usize = 200;
/// Largest request body accepted (Claude Code sends its whole system prompt and tool list each
/// turn). Raising it only matters for clients with much larger prompts.
const MAX_BODY_BYTES: usize = 32 << 20;
/// Prefix of the tool-call ids the mock makes; a tool result for one of them ends the script.
pub const CALL_ID_PREFIX: &str = "e2e_";
/// Start of every final text answer.
pub const FINAL_PREFIX: &str = "MOCK_FINAL:";

/// The one tool call a conversation makes.
#[derive(Debug, Clone)]
pub struct Script {
    /// Claude Code's name for the tool: `mcp__<server>__<tool>`.
    pub anthropic_name: String,
    /// Codex's namespace (`mcp__<server>`) and model-facing (sanitized) tool name.
    pub openai_namespace: String,
    pub openai_name: String,
    /// The call's arguments.
    pub input: Value,
}

/// One request as received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub body: Value,
}

struct Shared {
    script: Mutex<Script>,
    log: Mutex<(Vec<Recorded>, std::fs::File)>,
}

impl Shared {
    /// Records a request; returns its 1-based number.
    fn record(&self, uri: &Uri, body: &Bytes) -> (usize, Value) {
        let body: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let mut log = self.log.lock().unwrap();
        let rec = Recorded {
            path: uri.path().to_string(),
            body,
        };
        let line = json!({"path": uri.to_string(), "body": rec.body});
        let _ = writeln!(log.1, "{line}");
        log.0.push(rec.clone());
        (log.0.len(), rec.body)
    }
}

/// The running mock; dropping it stops the server.
pub struct MockModel {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    runtime: Option<tokio::runtime::Runtime>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
}

impl MockModel {
    /// Starts the mock on a free loopback port, recording requests to `log_path`.
    pub fn start(script: Script, log_path: &Path) -> MockModel {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let file = std::fs::File::create(log_path).unwrap();
        let shared = Arc::new(Shared {
            script: Mutex::new(script),
            log: Mutex::new((Vec::new(), file)),
        });
        let app = Router::new()
            .route("/v1/messages", post(messages))
            .route("/v1/messages/count_tokens", post(count_tokens))
            .route("/v1/responses", post(responses))
            .fallback(unknown)
            .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
            .with_state(shared.clone());
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        runtime.spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = rx.await;
                })
                .await;
        });
        MockModel {
            addr,
            shared,
            runtime: Some(runtime),
            shutdown: Some(tx),
        }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Replaces the script for the conversations that follow.
    pub fn set_script(&self, script: Script) {
        *self.shared.script.lock().unwrap() = script;
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.log.lock().unwrap().0.clone()
    }
}

impl Drop for MockModel {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_timeout(std::time::Duration::from_secs(2));
        }
    }
}

fn too_many() -> Response {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        "mock: request limit reached",
    )
        .into_response()
}

async fn unknown(State(s): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    s.record(&uri, &body);
    (StatusCode::NOT_FOUND, "mock: no such endpoint").into_response()
}

async fn count_tokens(State(s): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    s.record(&uri, &body);
    axum::Json(json!({"input_tokens": 1000})).into_response()
}

/// The text of a tool result's content: a string, or the `text` of each block.
fn result_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// The Anthropic answer: `(content blocks, stop_reason)`.
fn anthropic_turn(script: &Script, body: &Value, n: usize) -> (Vec<Value>, &'static str) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let result = messages.iter().rev().find_map(|m| {
        m["content"].as_array()?.iter().find(|b| {
            b["type"] == "tool_result"
                && b["tool_use_id"]
                    .as_str()
                    .is_some_and(|id| id.starts_with(&format!("toolu_{CALL_ID_PREFIX}")))
        })
    });
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    if let Some(r) = result {
        let text = format!(
            "{FINAL_PREFIX} [tool said: {}] [is_error={}]",
            result_text(&r["content"]),
            r["is_error"].as_bool().unwrap_or(false)
        );
        (vec![json!({"type": "text", "text": text})], "end_turn")
    } else if has_tools {
        let block = json!({
            "type": "tool_use",
            "id": format!("toolu_{CALL_ID_PREFIX}{n:04}"),
            "name": script.anthropic_name,
            "input": script.input,
        });
        (vec![block], "tool_use")
    } else {
        // A side request (title, summary): no tools offered.
        let text = format!("{FINAL_PREFIX} side request");
        (vec![json!({"type": "text", "text": text})], "end_turn")
    }
}

async fn messages(State(s): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    let (n, body) = s.record(&uri, &body);
    if n > MAX_REQUESTS {
        return too_many();
    }
    let (content, stop) = anthropic_turn(&s.script.lock().unwrap().clone(), &body, n);
    let model = body["model"].as_str().unwrap_or("mock-model").to_string();
    let usage = json!({"input_tokens": 100, "output_tokens": 10,
        "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    let id = format!("msg_{CALL_ID_PREFIX}{n:04}");
    if body["stream"] != true {
        return axum::Json(json!({"id": id, "type": "message", "role": "assistant",
            "model": model, "content": content, "stop_reason": stop, "stop_sequence": null,
            "usage": usage}))
        .into_response();
    }
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": id, "type": "message",
            "role": "assistant", "model": model, "content": [], "stop_reason": null,
            "stop_sequence": null, "usage": usage}}),
    )];
    for (i, block) in content.iter().enumerate() {
        let (start, delta) = if block["type"] == "tool_use" {
            (
                json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}),
                json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}),
            )
        } else {
            (
                json!({"type": "text", "text": ""}),
                json!({"type": "text_delta", "text": block["text"]}),
            )
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": start}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": i, "delta": delta}),
        ));
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": i}),
        ));
    }
    events.push((
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": 10}}),
    ));
    events.push(("message_stop", json!({"type": "message_stop"})));
    sse(&events)
}

fn sse(events: &[(&str, Value)]) -> Response {
    let mut text = String::new();
    for (name, data) in events {
        text.push_str(&format!("event: {name}\ndata: {data}\n\n"));
    }
    ([(header::CONTENT_TYPE, "text/event-stream")], text).into_response()
}

/// The Responses answer: output items.
fn openai_turn(script: &Script, body: &Value, n: usize) -> Vec<Value> {
    let input = body["input"].as_array().cloned().unwrap_or_default();
    let result = input.iter().rev().find(|i| {
        i["type"] == "function_call_output"
            && i["call_id"]
                .as_str()
                .is_some_and(|id| id.starts_with(&format!("call_{CALL_ID_PREFIX}")))
    });
    let has_tools = body["tools"].as_array().is_some_and(|t| !t.is_empty());
    let message = |text: String| {
        json!({"type": "message", "id": format!("msg_{CALL_ID_PREFIX}{n:04}"),
            "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}]})
    };
    if let Some(r) = result {
        vec![message(format!(
            "{FINAL_PREFIX} [tool said: {}]",
            result_text(&r["output"])
        ))]
    } else if needs_tool_search(script, body) {
        // Codex defers MCP tools behind its client-side tool_search: load the namespace first.
        vec![json!({
            "type": "tool_search_call",
            "id": format!("tsc_{CALL_ID_PREFIX}{n:04}"),
            "call_id": format!("call_search_{CALL_ID_PREFIX}{n:04}"),
            "status": "completed",
            "execution": "client",
            "arguments": {"query": script.openai_name, "limit": 8},
        })]
    } else if has_tools {
        vec![json!({
            "type": "function_call",
            "id": format!("fc_{CALL_ID_PREFIX}{n:04}"),
            "call_id": format!("call_{CALL_ID_PREFIX}{n:04}"),
            "namespace": script.openai_namespace,
            "name": script.openai_name,
            "arguments": script.input.to_string(),
            "status": "completed",
        })]
    } else {
        vec![message(format!("{FINAL_PREFIX} side request"))]
    }
}

/// True when the request offers Codex's `tool_search` but not yet the script's namespace (neither
/// among its tools nor loaded by an earlier `tool_search_output`).
fn needs_tool_search(script: &Script, body: &Value) -> bool {
    let tools = body["tools"].as_array().cloned().unwrap_or_default();
    let offers_search = tools.iter().any(|t| t["type"] == "tool_search");
    let has_namespace = tools
        .iter()
        .any(|t| t["name"] == script.openai_namespace.as_str());
    let searched = body["input"]
        .as_array()
        .is_some_and(|i| i.iter().any(|x| x["type"] == "tool_search_output"));
    offers_search && !has_namespace && !searched
}

async fn responses(State(s): State<Arc<Shared>>, uri: Uri, body: Bytes) -> Response {
    let (n, body) = s.record(&uri, &body);
    if n > MAX_REQUESTS {
        return too_many();
    }
    let output = openai_turn(&s.script.lock().unwrap().clone(), &body, n);
    let id = format!("resp_{CALL_ID_PREFIX}{n:04}");
    let usage = json!({"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 110});
    let done = json!({"id": id, "object": "response", "status": "completed",
        "model": body["model"], "output": output, "usage": usage});
    if body["stream"] == false {
        return axum::Json(done).into_response();
    }
    let mut events = vec![(
        "response.created",
        json!({"type": "response.created", "response": {"id": id, "object": "response",
            "status": "in_progress", "output": []}}),
    )];
    for (i, item) in output.iter().enumerate() {
        events.push((
            "response.output_item.done",
            json!({"type": "response.output_item.done", "output_index": i, "item": item}),
        ));
    }
    events.push((
        "response.completed",
        json!({"type": "response.completed", "response": done}),
    ));
    sse(&events)
}

/// Where a test keeps the mock's request log.
pub fn log_path(dir: &Path) -> PathBuf {
    dir.join("model-requests.jsonl")
}

/// What the mock answers, turn by turn: `(request body, expected kind of the first output)`.
#[test]
fn the_script_turn_by_turn() {
    let s = Script {
        anthropic_name: "mcp__toolbox__echo".into(),
        openai_namespace: "mcp__toolbox".into(),
        openai_name: "echo".into(),
        input: json!({"message": "m"}),
    };
    let tools = json!([{"name": "Bash"}]);
    let done = json!([{"role": "user", "content": [{"type": "tool_result",
        "tool_use_id": "toolu_e2e_0001", "content": [{"type": "text", "text": "Echo: m"}]}]}]);
    let anthropic = [
        (json!({"messages": []}), "text", "side request"),
        (
            json!({"messages": [], "tools": tools}),
            "tool_use",
            "mcp__toolbox__echo",
        ),
        (json!({"messages": done, "tools": tools}), "text", "Echo: m"),
    ];
    for (body, kind, has) in anthropic {
        let (blocks, _) = anthropic_turn(&s, &body, 1);
        assert_eq!(blocks[0]["type"], kind, "{body}");
        assert!(blocks[0].to_string().contains(has), "{body} -> {blocks:?}");
    }
    let search = json!([{"type": "tool_search"}]);
    let loaded = json!([{"type": "tool_search_output"}]);
    let output = json!([{"type": "function_call_output", "call_id": "call_e2e_0002",
        "output": [{"type": "input_text", "text": "Echo: m"}]}]);
    let openai = [
        (json!({"input": []}), "message", "side request"),
        (
            json!({"input": [], "tools": search}),
            "tool_search_call",
            "echo",
        ),
        (
            json!({"input": loaded, "tools": search}),
            "function_call",
            "mcp__toolbox",
        ),
        (
            json!({"input": [], "tools": [{"type": "namespace", "name": "mcp__toolbox"}]}),
            "function_call",
            "echo",
        ),
        (
            json!({"input": output, "tools": search}),
            "message",
            "Echo: m",
        ),
    ];
    for (body, kind, has) in openai {
        let items = openai_turn(&s, &body, 1);
        assert_eq!(items[0]["type"], kind, "{body}");
        assert!(items[0].to_string().contains(has), "{body} -> {items:?}");
    }
}
