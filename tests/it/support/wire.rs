//! A 2025-11-25 client session on `mws serve` as a plain HTTP client (what the relay and
//! subscription tests drive), and the reply parsing the tests share.

use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Value, json};

/// The protocol revision the session speaks.
pub const LEGACY: &str = "2025-11-25";

/// Every JSON-RPC message in a reply body, JSON or SSE.
pub fn messages(content_type: &str, body: &str) -> Vec<Value> {
    if content_type.starts_with("text/event-stream") {
        sse_messages(body)
    } else {
        vec![serde_json::from_str(body).unwrap()]
    }
}

/// The JSON-RPC messages of an SSE body, in order.
pub fn sse_messages(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| serde_json::from_str(d).unwrap())
        .collect()
}

/// POSTs a 2026-07-28 request `body` (its `_meta` envelope already in) with the headers that
/// mirror it: the reply's content type and text.
pub async fn post_modern_body(url: &str, body: &Value) -> (String, String) {
    let mut req = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28");
    if let Some(m) = body["method"].as_str() {
        req = req.header("mcp-method", m);
    }
    if let Some(n) = body["params"]["name"].as_str() {
        req = req.header("mcp-name", n);
    }
    let r = req.body(body.to_string()).send().await.unwrap();
    let ct = r.headers()["content-type"].to_str().unwrap().to_string();
    (ct, r.text().await.unwrap())
}

/// An initialized legacy session.
pub struct LegacyClient {
    pub url: String,
    pub session: String,
    /// The whole `initialize` response.
    pub init: Value,
    http: reqwest::Client,
    next_id: AtomicI64,
}

impl LegacyClient {
    /// `initialize` as `client` declaring `capabilities`, then `notifications/initialized`.
    pub async fn open(url: &str, client: &str, capabilities: Value) -> LegacyClient {
        let http = reqwest::Client::new();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": capabilities,
            "clientInfo": {"name": client, "version": "1"}}});
        let r = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(init.to_string())
            .send()
            .await
            .unwrap();
        let session = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
        let ct = r.headers()["content-type"].to_str().unwrap().to_string();
        let init = messages(&ct, &r.text().await.unwrap()).remove(0);
        let c = LegacyClient {
            url: url.into(),
            session,
            init,
            http,
            next_id: AtomicI64::new(1),
        };
        c.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        c
    }

    /// POSTs `msg` under the session: every message of the reply (none for a 202).
    pub async fn send(&self, msg: Value) -> Vec<Value> {
        let r = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", LEGACY)
            .header("mcp-session-id", &self.session)
            .body(msg.to_string())
            .send()
            .await
            .unwrap();
        if r.status() == 202 {
            return vec![];
        }
        let ct = r.headers()["content-type"].to_str().unwrap().to_string();
        messages(&ct, &r.text().await.unwrap())
    }

    /// A request with the next id: every message of the reply, the answer last.
    pub async fn request(&self, method: &str, params: Value) -> Vec<Value> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
    }

    /// A request's answer.
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let mut msgs = self.request(method, params).await;
        msgs.pop().expect("no answer")
    }

    /// The session's GET stream, opened.
    pub async fn stream(&self) -> reqwest::Response {
        self.http
            .get(&self.url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", LEGACY)
            .header("mcp-session-id", &self.session)
            .send()
            .await
            .unwrap()
    }
}
