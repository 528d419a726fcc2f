//! A hand-written Streamable HTTP upstream for the relay tests, legacy (2025-11-25, sessions,
//! `logging/setLevel`) or modern (2026-07-28, per-request `_meta` log level), offering `logging`
//! and three tools: `chatty` answers on an SSE stream carrying its progress (when the call has a
//! token) and a `notifications/message` at each of debug, info and error that the level asked for
//! lets through, then its result; `resume` (legacy)
//! sends a priming event with an id and `retry: 200`, closes the stream, and gives its result on a
//! GET carrying that `Last-Event-ID`; `vanish` does the same but refuses the GET (405). Records
//! what it was asked for. Loopback only; stops on drop.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// The retry time `resume` asks for, in milliseconds.
pub const RETRY_MS: u64 = 200;

/// What the upstream was asked.
#[derive(Debug, Default)]
pub struct Seen {
    /// Every `logging/setLevel` level, in order.
    pub set_levels: Vec<String>,
    /// The level each `tools/call` ran under (`_meta` for modern, the session's for legacy).
    pub call_levels: Vec<Option<String>>,
    /// Each resuming GET: its `Last-Event-ID` and how long after the stream closed it came.
    pub resumes: Vec<(String, Duration)>,
    session_level: Option<String>,
    closed: Option<(Value, Instant)>,
}

pub struct Upstream {
    pub url: String,
    pub seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

#[derive(Clone)]
struct St {
    modern: bool,
    seen: Arc<Mutex<Seen>>,
}

pub async fn start(modern: bool) -> Upstream {
    let seen = Arc::new(Mutex::new(Seen::default()));
    let st = St {
        modern,
        seen: seen.clone(),
    };
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(post).get(get))
        .with_state(st);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Upstream { url, seen, task }
}

const LEVELS: [&str; 3] = ["debug", "info", "error"];

fn rank(level: &str) -> usize {
    mws::upstream::related::LEVELS
        .iter()
        .position(|l| *l == level)
        .unwrap_or(0)
}

fn json_reply(body: Value) -> Response {
    (
        StatusCode::OK,
        [
            ("content-type", "application/json"),
            ("mcp-session-id", "s1"),
        ],
        body.to_string(),
    )
        .into_response()
}

fn sse_reply(text: String) -> Response {
    (
        StatusCode::OK,
        [
            ("content-type", "text/event-stream"),
            ("mcp-session-id", "s1"),
        ],
        text,
    )
        .into_response()
}

fn event(msg: &Value) -> String {
    format!("event: message\ndata: {msg}\n\n")
}

async fn post(State(st): State<St>, body: String) -> Response {
    let Ok(msg) = serde_json::from_str::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = msg.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let ok = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    let caps = json!({"tools": {}, "logging": {}});
    match (msg["method"].as_str().unwrap_or(""), st.modern) {
        ("server/discover", true) => json_reply(ok(json!({"resultType": "complete",
            "supportedVersions": ["2026-07-28"], "capabilities": caps,
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "relay-fixture", "version": "1"}}}))),
        ("server/discover", false) => (
            StatusCode::BAD_REQUEST,
            [("content-type", "application/json")],
            json!({"jsonrpc": "2.0", "id": null,
                   "error": {"code": -32000, "message": "Bad Request: Server not initialized"}})
            .to_string(),
        )
            .into_response(),
        ("initialize", false) => json_reply(ok(json!({"protocolVersion": "2025-11-25",
            "capabilities": caps, "serverInfo": {"name": "relay-fixture", "version": "1"}}))),
        ("logging/setLevel", false) => {
            let level = msg["params"]["level"].as_str().unwrap_or("").to_string();
            let mut seen = st.seen.lock().unwrap();
            seen.set_levels.push(level.clone());
            seen.session_level = Some(level);
            json_reply(ok(json!({})))
        }
        ("tools/list", _) => {
            let tools: Vec<Value> = ["chatty", "resume", "vanish"]
                .iter()
                .map(|n| json!({"name": n, "description": format!("The {n} tool"), "inputSchema": {"type": "object"}}))
                .collect();
            json_reply(ok(json!({"tools": tools})))
        }
        ("tools/call", _) => call(&st, &msg, id),
        _ => (
            StatusCode::NOT_FOUND,
            [("content-type", "application/json")],
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}})
                .to_string(),
        )
            .into_response(),
    }
}

fn call(st: &St, msg: &Value, id: Value) -> Response {
    let name = msg["params"]["name"].as_str().unwrap_or("");
    let text = |t: &str| json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": t}]}});
    let mut seen = st.seen.lock().unwrap();
    let level = if st.modern {
        msg.pointer("/params/_meta/io.modelcontextprotocol~1logLevel")
            .and_then(Value::as_str)
            .map(String::from)
    } else {
        seen.session_level.clone()
    };
    seen.call_levels.push(level.clone());
    match name {
        "chatty" => {
            let mut out = String::new();
            if let Some(token) = msg.pointer("/params/_meta/progressToken") {
                let p = json!({"jsonrpc": "2.0", "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 1, "total": 1}});
                out.push_str(&event(&p));
            }
            for l in LEVELS {
                if level.as_deref().is_some_and(|min| rank(l) >= rank(min)) {
                    let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                        "params": {"level": l, "logger": "fixture", "data": format!("{l} line")}});
                    out.push_str(&event(&note));
                }
            }
            out.push_str(&event(&text("chatty done")));
            sse_reply(out)
        }
        "resume" | "vanish" => {
            let eid = if name == "resume" { "r1" } else { "v1" };
            seen.closed = Some((text("resumed"), Instant::now()));
            sse_reply(format!("id: {eid}\nretry: {RETRY_MS}\ndata: \n\n"))
        }
        _ => json_reply(text("?")),
    }
}

async fn get(State(st): State<St>, headers: HeaderMap) -> Response {
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let mut seen = st.seen.lock().unwrap();
    let Some((answer, at)) = seen.closed.clone() else {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    seen.resumes.push((last.clone(), at.elapsed()));
    if last != "r1" {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    seen.closed = None;
    sse_reply(format!("id: r2\ndata: \n\n{}", event(&answer)))
}
