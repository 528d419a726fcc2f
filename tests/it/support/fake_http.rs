//! A hand-written Streamable HTTP upstream for the cases real servers will not produce on demand:
//! tools with vendor fields and `execution`, sessions that expire, answers that hang, SSE replies
//! cut into tiny chunks, and a record of every request's headers. Loopback only; stops on drop.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// 2026-07-28 only.
    Modern,
    /// 2025-11-25 with `Mcp-Session-Id`; an unknown session gets `expired_status`.
    Legacy { sse: bool, expired_status: u16 },
}

/// One request as the fake saw it.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub headers: HeaderMap,
    pub body: Value,
}

pub struct FakeState {
    pub mode: Mode,
    pub tools: Mutex<Vec<Value>>,
    pub page: usize,
    pub hang: AtomicBool,
    sessions: Mutex<HashSet<String>>,
    next_session: AtomicUsize,
    pub seen: Mutex<Vec<Seen>>,
    /// Notifications for open GET streams.
    notes: tokio::sync::broadcast::Sender<Value>,
}

impl FakeState {
    /// Forgets every session, as a restarted server would.
    pub fn expire_sessions(&self) {
        self.sessions.lock().unwrap().clear();
    }
    /// Sends `notifications/tools/list_changed` on every open GET stream.
    pub fn announce_list_changed(&self) {
        let _ = self
            .notes
            .send(json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}));
    }
    pub fn count(&self, method: &str) -> usize {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.method == method)
            .count()
    }
    pub fn last(&self, method: &str) -> Option<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .rev()
            .find(|s| s.method == method)
            .cloned()
    }
}

pub struct FakeHttp {
    pub url: String,
    pub state: Arc<FakeState>,
    task: tokio::task::JoinHandle<()>,
}

impl FakeHttp {
    /// Stops serving: later connections are refused.
    pub fn kill(&self) {
        self.task.abort();
    }
}

impl Drop for FakeHttp {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn start(mode: Mode, tools: Vec<Value>, page: usize) -> FakeHttp {
    let state = Arc::new(FakeState {
        mode,
        tools: Mutex::new(tools),
        page,
        hang: AtomicBool::new(false),
        sessions: Mutex::default(),
        next_session: AtomicUsize::new(1),
        seen: Mutex::default(),
        notes: tokio::sync::broadcast::channel(16).0,
    });
    let app = axum::Router::new()
        .route("/mcp", axum::routing::post(post).get(get))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    FakeHttp { url, state, task }
}

fn json_reply(status: StatusCode, v: Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        v.to_string(),
    )
        .into_response()
}

/// An SSE reply cut into 3-byte chunks, with a priming event and a notification first.
fn sse_reply(v: Value, headers: &[(&'static str, String)]) -> Response {
    let text = format!(
        "id: prime\ndata: \n\nevent: message\ndata: {}\n\nevent: message\ndata: {}\n\n",
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}}),
        v
    );
    let chunks: Vec<Result<Vec<u8>, std::io::Error>> = text
        .into_bytes()
        .chunks(3)
        .map(|c| Ok(c.to_vec()))
        .collect();
    let mut r = Response::builder()
        .status(200)
        .header("content-type", "text/event-stream");
    for (k, v) in headers {
        r = r.header(*k, v);
    }
    r.body(Body::from_stream(futures_util::stream::iter(chunks)))
        .unwrap()
}

/// The legacy GET stream: notifications for a known session; 405 for a modern server.
async fn get(State(st): State<Arc<FakeState>>, headers: HeaderMap) -> Response {
    let known = headers
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|s| st.sessions.lock().unwrap().contains(s));
    if st.mode == Mode::Modern || !known {
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    }
    let rx = st.notes.subscribe();
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        let msg = rx.recv().await.ok()?;
        let ev = format!("event: message\ndata: {msg}\n\n");
        Some((Ok::<_, std::io::Error>(ev.into_bytes()), rx))
    });
    Response::builder()
        .status(200)
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

async fn post(State(st): State<Arc<FakeState>>, headers: HeaderMap, body: String) -> Response {
    let Ok(msg) = serde_json::from_str::<Value>(&body) else {
        return json_reply(
            StatusCode::BAD_REQUEST,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "Parse error"}}),
        );
    };
    let method = msg["method"].as_str().unwrap_or("").to_string();
    st.seen.lock().unwrap().push(Seen {
        method: method.clone(),
        headers: headers.clone(),
        body: msg.clone(),
    });
    let id = msg.get("id").cloned();
    let Some(id) = id else {
        return StatusCode::ACCEPTED.into_response();
    };
    if st.hang.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    let ok = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    match st.mode {
        Mode::Modern => {
            let result = match method.as_str() {
                "server/discover" => {
                    json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                    "capabilities": {"tools": {}}, "instructions": "fake modern",
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "fake-modern", "version": "0.1"}},
                    "ttlMs": 0, "cacheScope": "private"})
                }
                "tools/list" => list_page(&st, &msg),
                "tools/call" => call_result(&msg),
                _ => {
                    return json_reply(
                        StatusCode::NOT_FOUND,
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
                    );
                }
            };
            json_reply(StatusCode::OK, ok(result))
        }
        Mode::Legacy {
            sse,
            expired_status,
        } => {
            if method == "initialize" {
                let sid = format!("s-{}", st.next_session.fetch_add(1, Ordering::SeqCst));
                st.sessions.lock().unwrap().insert(sid.clone());
                let result = ok(json!({"protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {"listChanged": true}},
                    "serverInfo": {"name": "fake-legacy", "version": "0.1"}, "instructions": "fake legacy"}));
                return sse_reply(result, &[("mcp-session-id", sid)]);
            }
            let known = headers
                .get("mcp-session-id")
                .and_then(|v| v.to_str().ok())
                .is_some_and(|s| st.sessions.lock().unwrap().contains(s));
            if !known {
                let status = StatusCode::from_u16(expired_status).unwrap();
                return json_reply(
                    status,
                    json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request: Server not initialized"}}),
                );
            }
            let result = match method.as_str() {
                "tools/list" => list_page(&st, &msg),
                "tools/call" => call_result(&msg),
                _ => {
                    return json_reply(
                        StatusCode::OK,
                        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}),
                    );
                }
            };
            if sse {
                sse_reply(ok(result), &[])
            } else {
                json_reply(StatusCode::OK, ok(result))
            }
        }
    }
}

/// A test's tool as listed: `{"name": "a"}` is short for a valid tool, so an object without an
/// `inputSchema` gets the empty object schema (mws leaves out tools a client would reject).
fn listed(mut tool: Value) -> Value {
    if let Some(t) = tool.as_object_mut() {
        t.entry("inputSchema")
            .or_insert_with(|| json!({"type": "object"}));
    }
    tool
}

fn list_page(st: &FakeState, msg: &Value) -> Value {
    let tools: Vec<Value> = st
        .tools
        .lock()
        .unwrap()
        .iter()
        .cloned()
        .map(listed)
        .collect();
    let start: usize = msg
        .pointer("/params/cursor")
        .and_then(Value::as_str)
        .and_then(|c| c.strip_prefix("page-"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let end = (start + st.page).min(tools.len());
    let mut r = json!({"tools": tools[start..end]});
    if end < tools.len() {
        r["nextCursor"] = json!(format!("page-{end}"));
    }
    r
}

fn call_result(msg: &Value) -> Value {
    let name = msg
        .pointer("/params/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    json!({"content": [{"type": "text", "text": format!("called {name}")}], "isError": false})
}

/// A tool a proxy must pass through untouched: vendor keys at every level, `execution`, keys out
/// of alphabetical order.
pub fn vendor_tool(name: &str) -> Value {
    serde_json::from_str(&format!(
        r#"{{"name":"{name}","x-vendor":{{"zeta":1,"alpha":[true,null]}},"description":"Vendor tool","inputSchema":{{"type":"object","properties":{{"q":{{"type":"string","x-mcp-header":"Q"}}}},"$defs":{{}}}},"execution":{{"taskSupport":"optional"}},"annotations":{{"readOnlyHint":true,"x-extra":"kept"}},"_meta":{{"vendor/tag":"v1"}}}}"#
    ))
    .unwrap()
}
