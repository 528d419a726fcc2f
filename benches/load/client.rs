//! One load client over raw HTTP: a modern client sends stateless requests with the `_meta`
//! envelope and `Mcp-*` headers; a legacy client opens an `initialize` session first and sends
//! its `Mcp-Session-Id`. Counts what it sent, what failed (HTTP error, JSON-RPC error, `isError`)
//! and each request's latency.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Era {
    Modern,
    Legacy,
}

/// What one request does.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// `tools/call` of a listed (pinned) tool.
    Direct,
    /// `call_tool` of a tool that is not listed.
    CallTool,
    Search,
    List,
}

impl Kind {
    /// The mix: 40% call_tool, 30% direct calls, 20% searches, 10% lists.
    pub fn pick(n: u64) -> Kind {
        match n % 10 {
            0..=3 => Kind::CallTool,
            4..=6 => Kind::Direct,
            7 | 8 => Kind::Search,
            _ => Kind::List,
        }
    }
}

#[derive(Debug, Default)]
pub struct Tally {
    pub requests: u64,
    pub failed: u64,
    /// Forwarded tool calls (each must become a `calls` row).
    pub calls: u64,
    pub searches: u64,
    pub lists: u64,
    pub sessions: u64,
    pub failures: Vec<String>,
    pub latencies_us: Vec<u32>,
}

impl Tally {
    pub fn merge(&mut self, o: Tally) {
        self.requests += o.requests;
        self.failed += o.failed;
        self.calls += o.calls;
        self.searches += o.searches;
        self.lists += o.lists;
        self.sessions += o.sessions;
        self.failures.extend(o.failures);
        self.latencies_us.extend(o.latencies_us);
    }

    fn fail(&mut self, why: String) {
        self.failed += 1;
        if self.failures.len() < 5 {
            self.failures.push(why);
        }
    }
}

pub struct Client {
    http: reqwest::Client,
    url: String,
    era: Era,
    name: String,
    session: Option<String>,
    next_id: i64,
}

impl Client {
    pub fn new(http: reqwest::Client, url: String, era: Era, n: u64) -> Client {
        Client {
            http,
            url,
            era,
            name: format!("load-{n}"),
            session: None,
            next_id: 1,
        }
    }

    /// Sends one message; the JSON-RPC response (JSON or SSE body), or why there is none.
    async fn send(&mut self, method: &str, mut params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        let version = if self.era == Era::Modern {
            MODERN
        } else {
            LEGACY
        };
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version);
        if self.era == Era::Modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": self.name, "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}
            });
            req = req.header("mcp-method", method);
            if let Some(n) = params["name"].as_str() {
                req = req.header("mcp-name", n);
            }
        }
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        let notification = method.starts_with("notifications/");
        let body = if notification {
            json!({"jsonrpc": "2.0", "method": method, "params": params})
        } else {
            json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
        };
        let resp = req
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| format!("{method}: {e}"))?;
        let status = resp.status();
        if let Some(s) = resp.headers().get("mcp-session-id") {
            self.session = s.to_str().ok().map(String::from);
        }
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        let text = resp.text().await.map_err(|e| format!("{method}: {e}"))?;
        if !status.is_success() {
            return Err(format!("{method}: HTTP {status}: {text}"));
        }
        if notification {
            return Ok(Value::Null);
        }
        let json = if sse {
            text.lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
                .find(|m| m.get("id") == Some(&json!(id)))
                .ok_or_else(|| format!("{method}: no response in the event stream"))?
        } else {
            serde_json::from_str(&text).map_err(|e| format!("{method}: {e}: {text}"))?
        };
        if let Some(e) = json.get("error") {
            return Err(format!("{method}: {e}"));
        }
        if json.pointer("/result/isError") == Some(&json!(true)) {
            return Err(format!("{method}: isError: {}", json["result"]));
        }
        Ok(json)
    }

    /// Waits (bounded) until the demo catalog is in.
    pub async fn wait_ready(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Ok(r) = self.send("tools/list", json!({})).await
                && r.pointer("/result/tools")
                    .and_then(Value::as_array)
                    .map(Vec::len)
                    > Some(2)
            {
                return;
            }
            assert!(Instant::now() < deadline, "the demo catalog never arrived");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// A legacy client's handshake (nothing for a modern one).
    pub async fn open(&mut self, tally: &mut Tally) {
        if self.era == Era::Modern {
            return;
        }
        let params = json!({"protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": self.name, "version": "1"}});
        match self.send("initialize", params).await {
            Ok(_) if self.session.is_some() => tally.sessions += 1,
            Ok(_) => tally.fail("initialize: no Mcp-Session-Id".into()),
            Err(e) => tally.fail(e),
        }
        if let Err(e) = self.send("notifications/initialized", json!({})).await {
            tally.fail(e);
        }
    }

    pub async fn one(&mut self, kind: Kind, tally: &mut Tally) {
        let (method, params) = match kind {
            Kind::Direct => {
                tally.calls += 1;
                (
                    "tools/call",
                    json!({"name": "calendar_list_events", "arguments": {}}),
                )
            }
            Kind::CallTool => {
                tally.calls += 1;
                (
                    "tools/call",
                    json!({"name": "call_tool",
                    "arguments": {"name": "calendar_list_calendars", "arguments": {}}}),
                )
            }
            Kind::Search => {
                tally.searches += 1;
                (
                    "tools/call",
                    json!({"name": "search_tools",
                    "arguments": {"query": "send an email with an attachment"}}),
                )
            }
            Kind::List => {
                tally.lists += 1;
                ("tools/list", json!({}))
            }
        };
        let t = Instant::now();
        let r = self.send(method, params).await;
        tally
            .latencies_us
            .push(u32::try_from(t.elapsed().as_micros()).unwrap_or(u32::MAX));
        tally.requests += 1;
        if let Err(e) = r {
            tally.fail(e);
        }
    }
}
