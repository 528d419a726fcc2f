//! A modern (2026-07-28) Streamable HTTP upstream that misbehaves on purpose, one way per tool:
//! `html` answers a non-JSON body, `shape` answers JSON that is no JSON-RPC response, `cut` starts
//! an SSE event and hangs up in the middle of it, `slow` dribbles its JSON answer one byte at a
//! time (`msPerByte` from the arguments), `big` answers a JSON body and `bigsse` one SSE event
//! just over `MAX_MESSAGE_BYTES`, `ok` answers properly. Loopback only; stops on drop.

use std::time::Duration;

use axum::body::Body;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

pub struct Faulty {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Faulty {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub const TOOLS: &[&str] = &["html", "shape", "cut", "slow", "big", "bigsse", "ok"];

pub async fn start() -> Faulty {
    let app = axum::Router::new().route("/mcp", axum::routing::post(post));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    Faulty { url, task }
}

fn reply(status: StatusCode, content_type: &'static str, body: String) -> Response {
    (status, [("content-type", content_type)], body).into_response()
}

async fn post(body: String) -> Response {
    let Ok(msg) = serde_json::from_str::<Value>(&body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = msg.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let ok = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
    let json_ct = "application/json";
    match msg["method"].as_str().unwrap_or("") {
        "server/discover" => reply(
            StatusCode::OK,
            json_ct,
            ok(json!({"resultType": "complete", "supportedVersions": ["2026-07-28"],
                "capabilities": {"tools": {}},
                "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "faulty", "version": "0.1"}},
                "ttlMs": 0, "cacheScope": "private"})),
        ),
        "tools/list" => {
            let tools: Vec<Value> = TOOLS
                .iter()
                .map(|n| json!({"name": n, "description": format!("The {n} fault"), "inputSchema": {"type": "object"}}))
                .collect();
            reply(StatusCode::OK, json_ct, ok(json!({"tools": tools})))
        }
        "tools/call" => call(&msg, ok(json!({"content": [{"type": "text", "text": "fine"}]}))),
        _ => reply(
            StatusCode::NOT_FOUND,
            json_ct,
            json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}}).to_string(),
        ),
    }
}

fn call(msg: &Value, good: String) -> Response {
    match msg.pointer("/params/name").and_then(Value::as_str) {
        Some("html") => reply(
            StatusCode::OK,
            "text/html",
            "<html><body>502 Bad Gateway (nginx)</body></html>".into(),
        ),
        Some("shape") => reply(
            StatusCode::OK,
            "application/json",
            json!({"jsonrpc": "2.0", "id": msg["id"], "answer": 42}).to_string(),
        ),
        Some("cut") => {
            // The event's data line is cut in the middle, then the connection closes.
            let half = &good[..good.len() / 2];
            let text = format!("event: message\ndata: {half}");
            Response::builder()
                .status(200)
                .header("content-type", "text/event-stream")
                .body(Body::from(text))
                .unwrap()
        }
        Some("slow") => {
            let ms = msg
                .pointer("/params/arguments/msPerByte")
                .and_then(Value::as_u64)
                .unwrap_or(10);
            let bytes: Vec<u8> = good.into_bytes();
            let stream = futures_util::stream::unfold(0usize, move |i| {
                let bytes = bytes.clone();
                async move {
                    if i >= bytes.len() {
                        return None;
                    }
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    Some((Ok::<_, std::io::Error>(vec![bytes[i]]), i + 1))
                }
            });
            Response::builder()
                .status(200)
                .header("content-type", "application/json")
                .body(Body::from_stream(stream))
                .unwrap()
        }
        Some(tool @ ("big" | "bigsse")) => {
            let text = "x".repeat(mws::upstream::MAX_MESSAGE_BYTES + 1024);
            let body = json!({"jsonrpc": "2.0", "id": msg["id"],
                "result": {"content": [{"type": "text", "text": text}]}})
            .to_string();
            match tool {
                "big" => reply(StatusCode::OK, "application/json", body),
                _ => reply(
                    StatusCode::OK,
                    "text/event-stream",
                    format!("event: message\ndata: {body}\n\n"),
                ),
            }
        }
        _ => reply(StatusCode::OK, "application/json", good),
    }
}
