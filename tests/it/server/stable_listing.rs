//! A listing stable within a session (docs/working-set.md#a-listing-stable-within-a-session), over
//! 2026 HTTP (stateless sessions and their `subscriptions/listen` stream), 2025 HTTP sessions
//! (their GET stream) and `--stdio`: a session that has listed keeps its listing through a
//! promotion and a late server's tool, without `list_changed`, while a new session gets the new
//! listing; a held tool that vanishes is dropped and announced; `listingUpdates: "live"` shows
//! every change to every session.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::{Harness, V, modern, set_working_set, tools};

const LEGACY: &str = "2025-11-25";
/// How long a stream is watched for a `list_changed` that must not come. The working-set watcher
/// polls every 500 ms and a new session already saw the change, so an announcement would be out.
const QUIET: Duration = Duration::from_millis(1500);
const SETTLE: Duration = Duration::from_secs(10);
/// The listing after `promote` and the late server's start.
const ALL_PROMOTED: [&str; 3] = ["calendar_list_events", "mail_list_labels", "late_tool"];

/// The fake upstream's catalog plus the tool of a server that started late.
fn with_late_tool() -> Vec<Value> {
    let mut t = tools();
    t.push(
        json!({"name": "late_tool", "description": "A late server's tool.",
                  "inputSchema": {"type": "object"}}),
    );
    t
}

/// `with_late_tool` less `mail_list_labels` (removed upstream).
fn without_labels() -> Vec<Value> {
    let mut t = with_late_tool();
    t.retain(|t| t["name"] != "mail_list_labels");
    t
}

fn promote(h: &Harness) {
    set_working_set(
        &h.db,
        &["calendar_list_events", "mail_list_labels", "late_tool"],
    );
}

fn names(tools: &Value) -> Vec<String> {
    let tools = tools
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {tools}"));
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn without(tools: &Value, name: &str) -> Value {
    let mut t = tools.as_array().unwrap().clone();
    t.retain(|t| t["name"] != name);
    Value::Array(t)
}

/// Asks `list` (a new session each time) until its tool names are `want` after the meta-tools.
async fn until_listed<F: AsyncFnMut() -> Value>(mut list: F, want: &[&str]) {
    let deadline = Instant::now() + SETTLE;
    loop {
        let tools = list().await;
        if names(&tools)[4..] == *want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{want:?} never listed: {:?}",
            names(&tools)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// POSTs `body` with the headers its era needs; returns the reply body and the session header.
async fn post(h: &Harness, body: &Value, sid: Option<&str>) -> (Value, Option<String>) {
    let method = body["method"].as_str().unwrap();
    let mut req = reqwest::Client::new()
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-method", method);
    req = match sid {
        Some(sid) => req
            .header("mcp-session-id", sid)
            .header("mcp-protocol-version", LEGACY),
        None if method == "initialize" => req,
        None => req.header("mcp-protocol-version", V),
    };
    let resp = req.body(body.to_string()).send().await.unwrap();
    let sid = resp
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    (resp.json().await.unwrap_or(Value::Null), sid)
}

/// A 2026 request as the stateless client `client`.
fn modern_as(client: &str, id: i64, method: &str, params: Value) -> Value {
    let mut m = modern(id, method, params);
    m["params"]["_meta"]["io.modelcontextprotocol/clientInfo"]["name"] = json!(client);
    m
}

/// The tools the stateless client `client` is listed.
async fn modern_tools(h: &Harness, client: &str) -> Value {
    let (r, _) = post(h, &modern_as(client, 2, "tools/list", json!({})), None).await;
    r["result"]["tools"].clone()
}

/// A new 2025 session; its id.
async fn legacy_session(h: &Harness) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "legacy-client"}}});
    post(h, &init, None).await.1.expect("no session id")
}

async fn legacy_tools(h: &Harness, sid: &str) -> Value {
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    post(h, &list, Some(sid)).await.0["result"]["tools"].clone()
}

/// An SSE stream read event by event.
struct Sse {
    resp: reqwest::Response,
    buf: String,
}

impl Sse {
    /// The next `data:` message within `wait` (keep-alive comments skipped), else `None`.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        let deadline = Instant::now() + wait;
        loop {
            while let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                if let Some(d) = event.lines().find_map(|l| l.strip_prefix("data: ")) {
                    return Some(serde_json::from_str(d).unwrap());
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            match tokio::time::timeout(left, self.resp.chunk()).await {
                Ok(Ok(Some(c))) => self.buf.push_str(&String::from_utf8_lossy(&c)),
                Ok(_) => panic!("the stream ended"),
                Err(_) => return None,
            }
        }
    }

    /// Asserts no `tools/list_changed` arrives within `QUIET`.
    async fn quiet(&mut self) {
        if let Some(m) = self.next(QUIET).await {
            assert_ne!(
                m["method"], "notifications/tools/list_changed",
                "announced: {m}"
            );
        }
    }

    async fn list_changed(&mut self) {
        let m = self.next(SETTLE).await.expect("no list_changed");
        assert_eq!(m["method"], "notifications/tools/list_changed", "{m}");
    }
}

/// A `subscriptions/listen` stream of the stateless client `client`, acknowledged.
async fn listen(h: &Harness, client: &str) -> Sse {
    let body = modern_as(
        client,
        9,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let resp = reqwest::Client::new()
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", V)
        .header("mcp-method", "subscriptions/listen")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let mut sse = Sse {
        resp,
        buf: String::new(),
    };
    let ack = sse.next(SETTLE).await.expect("no acknowledgement");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    sse
}

async fn get_stream(h: &Harness, sid: &str) -> Sse {
    let resp = reqwest::Client::new()
        .get(&h.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", sid)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), 200);
    Sse {
        resp,
        buf: String::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_session_keeps_its_listing_and_hears_only_of_a_vanished_tool() {
    let h = Harness::start(&["mail_list_labels", "late_tool"]).await;
    let mut stream = listen(&h, "client-a").await;
    let first = modern_tools(&h, "client-a").await;
    assert_eq!(names(&first)[4..], ["mail_list_labels"]);

    let mut n = 0;
    let mut new_session = async || {
        n += 1;
        modern_tools(&h, &format!("client-{n}")).await
    };
    promote(&h);
    let promoted = ["calendar_list_events", "mail_list_labels"];
    until_listed(&mut new_session, &promoted).await;
    assert_eq!(
        modern_tools(&h, "client-a").await,
        first,
        "changed by a promotion"
    );
    h.fake.set_tools(with_late_tool());
    until_listed(&mut new_session, &[promoted[0], promoted[1], "late_tool"]).await;
    assert_eq!(
        modern_tools(&h, "client-a").await,
        first,
        "changed by a late server"
    );
    stream.quiet().await;

    h.fake.set_tools(without_labels());
    stream.list_changed().await;
    let now = modern_tools(&h, "client-a").await;
    assert_eq!(now, without(&first, "mail_list_labels"));
    // The client's next process starts with `server/discover`: a new session, the new listing.
    post(
        &h,
        &modern_as("client-a", 4, "server/discover", json!({})),
        None,
    )
    .await;
    let renewed = modern_tools(&h, "client-a").await;
    assert_eq!(
        names(&renewed),
        [
            "search_tools",
            "call_tool",
            "run_script",
            "calendar_list_events",
            "late_tool"
        ]
    );
    assert_eq!(names(&renewed), names(&new_session().await));
    // Still callable and searchable though not listed: the unlisted calendar tool.
    let call = json!({"name": "calendar_list_events", "arguments": {}});
    let (r, _) = post(&h, &modern_as("client-a", 3, "tools/call", call), None).await;
    assert_ne!(r["result"]["isError"], json!(true), "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_keeps_its_listing_and_a_new_session_gets_the_new_one() {
    let h = Harness::start(&["mail_list_labels", "late_tool"]).await;
    let sid = legacy_session(&h).await;
    let first = legacy_tools(&h, &sid).await;
    assert_eq!(names(&first)[4..], ["mail_list_labels"]);
    let mut stream = get_stream(&h, &sid).await;

    promote(&h);
    h.fake.set_tools(with_late_tool());
    let new_session = async || legacy_tools(&h, &legacy_session(&h).await).await;
    until_listed(new_session, &ALL_PROMOTED).await;
    for _ in 0..5 {
        assert_eq!(legacy_tools(&h, &sid).await, first, "listing many times");
    }
    stream.quiet().await;

    h.fake.set_tools(without_labels());
    stream.list_changed().await;
    assert_eq!(
        legacy_tools(&h, &sid).await,
        without(&first, "mail_list_labels")
    );

    // An ended session's id is unknown (404); the client's new session lists as new.
    let r = reqwest::Client::new()
        .delete(&h.url)
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    let (r, _) = post(&h, &list, Some(&sid)).await;
    assert_eq!(r["error"]["code"], -32001, "{r}");
    // (No read-only tool is left: the new listing has no call_read_only_tool.)
    let again = legacy_tools(&h, &legacy_session(&h).await).await;
    assert_eq!(
        names(&again),
        [
            "search_tools",
            "call_tool",
            "run_script",
            "calendar_list_events",
            "late_tool"
        ]
    );
}

/// One `--stdio` client in memory: its lines, answers matched by id.
struct Stdio {
    lines: tokio::io::Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    writer: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    notes: Vec<Value>,
    id: i64,
}

impl Stdio {
    async fn start(h: &Harness) -> Stdio {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server);
        tokio::spawn(mws::server::stdio::serve(h.proxy.clone(), sr, sw));
        let (cr, writer) = tokio::io::split(client);
        let mut s = Stdio {
            lines: BufReader::new(cr).lines(),
            writer,
            notes: Vec::new(),
            id: 0,
        };
        s.rpc(
            "initialize",
            json!({"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "cli"}}),
        )
        .await;
        s
    }

    async fn rpc(&mut self, method: &str, params: Value) -> Value {
        self.id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params});
        let line = format!("{msg}\n");
        self.writer.write_all(line.as_bytes()).await.unwrap();
        loop {
            let m = self.line(SETTLE).await.expect("no answer");
            if m["id"] == self.id {
                return m["result"].clone();
            }
            self.notes.push(m);
        }
    }

    async fn line(&mut self, wait: Duration) -> Option<Value> {
        let l = tokio::time::timeout(wait, self.lines.next_line())
            .await
            .ok()?;
        Some(serde_json::from_str(&l.unwrap().unwrap()).unwrap())
    }

    async fn tools(&mut self) -> Value {
        self.rpc("tools/list", json!({})).await["tools"].clone()
    }

    /// Whether a `tools/list_changed` arrives within `wait` (or already did).
    async fn told(&mut self, wait: Duration) -> bool {
        let is_change = |m: &Value| m["method"] == "notifications/tools/list_changed";
        if self.notes.drain(..).any(|m| is_change(&m)) {
            return true;
        }
        let deadline = Instant::now() + wait;
        while let Some(m) = self
            .line(deadline.saturating_duration_since(Instant::now()))
            .await
        {
            if is_change(&m) {
                return true;
            }
        }
        false
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_session_keeps_its_listing_until_a_held_tool_vanishes() {
    let h = Harness::start(&["mail_list_labels", "late_tool"]).await;
    let mut first_session = Stdio::start(&h).await;
    let first = first_session.tools().await;
    assert_eq!(names(&first)[4..], ["mail_list_labels"]);

    promote(&h);
    h.fake.set_tools(with_late_tool());
    let new_session = async || Stdio::start(&h).await.tools().await;
    until_listed(new_session, &ALL_PROMOTED).await;
    assert_eq!(first_session.tools().await, first);
    assert!(
        !first_session.told(QUIET).await,
        "a promotion was announced"
    );

    h.fake.set_tools(without_labels());
    assert!(
        first_session.told(SETTLE).await,
        "a vanished tool was not announced"
    );
    assert_eq!(
        first_session.tools().await,
        without(&first, "mail_list_labels")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_live_updates_every_session_sees_every_change() {
    let h = Harness::start_live(&["mail_list_labels", "late_tool"]).await;
    let mut stdio = Stdio::start(&h).await;
    let mut stream = listen(&h, "client-a").await;
    let first = stdio.tools().await;
    assert_eq!(names(&first)[4..], ["mail_list_labels"]);
    assert_eq!(modern_tools(&h, "client-a").await, first);

    h.fake.set_tools(with_late_tool());
    assert!(stdio.told(SETTLE).await, "a late server was not announced");
    stream.list_changed().await;
    promote(&h);
    until_listed(async || stdio.tools().await, &ALL_PROMOTED).await;
    assert!(stdio.told(SETTLE).await, "a promotion was not announced");
    stream.list_changed().await;
    assert_eq!(
        names(&modern_tools(&h, "client-a").await)[4..],
        ALL_PROMOTED
    );
}
