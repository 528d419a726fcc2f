//! Resource subscriptions through the real `mws serve` in front of the project's rmcp fixture
//! (examples/conformance_upstream, a 2026-07-28 upstream with no `resources/subscribe`): a 2025
//! client's `resources/subscribe` is answered by mws and the fixture's
//! `notifications/resources/updated` for that URI reach the session's GET stream, and only that
//! URI; after `resources/unsubscribe` they stop. A 2026 client's `subscriptions/listen` with
//! `resourceSubscriptions` gets them tagged with its subscription id.

use std::path::PathBuf;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};

use crate::support::Child;
use crate::support::serve::{self, StdioServed, post_modern};
use crate::support::wire::LegacyClient;

const WATCHED: &str = "test://watched-resource";
const OTHER: &str = "test://other-resource";
/// Rounds of "change the resource, wait a second for its update": the fixture hears of a new
/// subscription when mws re-opens its listen stream, in the background.
const TRIES: usize = 20;
const UPDATE_TOOL: &str = "test_update_resource";

/// The fixture binary `cargo test` builds beside the test binary.
fn fixture_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let bin = exe
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("examples/conformance_upstream");
    assert!(
        bin.exists(),
        "{} is not built: run `cargo build --example conformance_upstream` (plain `cargo test` builds it)",
        bin.display()
    );
    bin
}

/// Starts the fixture on a free port; returns it and its URL.
fn start_fixture() -> (Child, String) {
    use std::io::BufRead;
    let mut child = Child(
        std::process::Command::new(fixture_bin())
            .arg("0")
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let out = child.0.stdout.take().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(out).read_line(&mut line).unwrap();
    let url = line.trim().to_string();
    assert!(
        url.starts_with("http://127.0.0.1:"),
        "fixture printed {line:?}"
    );
    (child, url)
}

fn start() -> (Child, serve::Served) {
    let (fixture, url) = start_fixture();
    let config = json!({
        "upstream": {"url": url},
        "timeouts": {"listMs": 10000, "callMs": 10000, "catalogTtlMs": 60000},
    });
    (fixture, serve::start(&config, &[UPDATE_TOOL]))
}

/// An open SSE response read message by message.
struct Events {
    body: futures_util::stream::BoxStream<'static, reqwest::Result<Vec<u8>>>,
    buf: String,
}

impl Events {
    fn new(resp: reqwest::Response) -> Events {
        assert_eq!(resp.status(), 200);
        Events {
            body: resp.bytes_stream().map(|r| r.map(|b| b.to_vec())).boxed(),
            buf: String::new(),
        }
    }

    /// The next `data:` message within `wait`, else `None`.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let event: String = self.buf.drain(..end + 2).collect();
                if let Some(d) = event.lines().find_map(|l| l.strip_prefix("data:")) {
                    return Some(serde_json::from_str(d.trim()).unwrap());
                }
                continue;
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.next())
                .await
                .ok()?;
            let chunk = chunk.expect("the stream ended").unwrap();
            self.buf
                .push_str(&String::from_utf8_lossy(&chunk).replace("\r\n", "\n"));
        }
    }

    /// The URI of the next `notifications/resources/updated` within `wait` (other messages are
    /// skipped), with the message.
    async fn next_update(&mut self, wait: Duration) -> Option<(String, Value)> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let m = self.next(left).await?;
            if m["method"] == "notifications/resources/updated" {
                return Some((m["params"]["uri"].as_str().unwrap().to_string(), m));
            }
        }
    }
}

/// A 2026-07-28 `subscriptions/listen` (request `id`) asking for `notifications`, as an open
/// stream.
async fn listen(url: &str, id: i64, notifications: Value) -> Events {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "notifications": notifications,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "subs-test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let resp = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    Events::new(resp)
}

/// A legacy (2025-11-25) session over plain HTTP, and its `initialize` response.
async fn legacy(url: &str) -> (LegacyClient, Value) {
    let s = LegacyClient::open(url, "subs-test", json!({})).await;
    let init = s.init.clone();
    (s, init)
}

/// A legacy session offered `resources.subscribe`, its GET stream open, subscribed to `uri`.
async fn subscribed(url: &str, uri: &str) -> (LegacyClient, Events) {
    let (s, init) = legacy(url).await;
    assert_eq!(
        init["result"]["capabilities"]["resources"]["subscribe"], true,
        "{init}"
    );
    let events = Events::new(s.stream().await);
    let sub = s.rpc("resources/subscribe", json!({"uri": uri})).await;
    assert_eq!(sub["result"], json!({}), "{sub}");
    (s, events)
}

/// Changes `uri` at the fixture (through mws, as a 2026 client calling the pinned tool).
async fn change(url: &str, uri: &str) {
    let r = post_modern(
        url,
        7,
        "tools/call",
        json!({"name": UPDATE_TOOL, "arguments": {"uri": uri}}),
    )
    .await;
    let text = r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.starts_with(&format!("Updated {uri}")), "{r}");
}

/// Changes `uris` round after round until an update arrives; returns it.
async fn first_update(url: &str, events: &mut Events, uris: &[&str]) -> (String, Value) {
    for _ in 0..TRIES {
        for u in uris {
            change(url, u).await;
        }
        if let Some(got) = events.next_update(Duration::from_secs(1)).await {
            return got;
        }
    }
    panic!("no notifications/resources/updated after {TRIES} rounds of changing {uris:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_gets_the_updates_it_subscribed_to_until_it_unsubscribes() {
    let (_fixture, mws) = start();
    let (mut a, init) = legacy(&mws.url).await;
    assert_eq!(
        init["result"]["capabilities"]["resources"]["subscribe"], true,
        "mws offers subscriptions when its upstream reports updates: {init}"
    );
    let (mut b, _) = legacy(&mws.url).await;
    let (mut a_events, mut b_events) =
        (Events::new(a.stream().await), Events::new(b.stream().await));

    // A watches WATCHED, B watches OTHER: the upstream reports both, each session hears its own.
    for (s, uri) in [(&mut a, WATCHED), (&mut b, OTHER)] {
        let sub = s.rpc("resources/subscribe", json!({"uri": uri})).await;
        assert_eq!(sub["result"], json!({}), "{sub}");
    }
    let (uri, msg) = first_update(&mws.url, &mut a_events, &[OTHER, WATCHED]).await;
    assert_eq!(uri, WATCHED, "{msg}");
    assert_eq!(
        msg["params"],
        json!({"uri": WATCHED}),
        "no upstream subscription id leaks"
    );
    let (uri, msg) = first_update(&mws.url, &mut b_events, &[WATCHED, OTHER]).await;
    assert_eq!(uri, OTHER, "{msg}");

    // B takes WATCHED too (so the upstream keeps reporting it); A swaps WATCHED for OTHER.
    let sub = b.rpc("resources/subscribe", json!({"uri": WATCHED})).await;
    assert_eq!(sub["result"], json!({}), "{sub}");
    let sub = a.rpc("resources/subscribe", json!({"uri": OTHER})).await;
    assert_eq!(sub["result"], json!({}), "{sub}");
    let unsub = a
        .rpc("resources/unsubscribe", json!({"uri": WATCHED}))
        .await;
    assert_eq!(unsub["result"], json!({}), "{unsub}");
    // What A was sent before it unsubscribed is behind us.
    while a_events.next(Duration::from_millis(500)).await.is_some() {}
    for _ in 0..3 {
        change(&mws.url, WATCHED).await;
        change(&mws.url, OTHER).await;
        let (uri, msg) = a_events.next_update(Duration::from_secs(10)).await.unwrap();
        assert_eq!(uri, OTHER, "an unsubscribed URI was delivered: {msg}");
    }
    let (uri, _) = b_events.next_update(Duration::from_secs(10)).await.unwrap();
    assert!(uri == WATCHED || uri == OTHER);

    // A request without a URI is refused, saying what is missing.
    let bad = a.rpc("resources/subscribe", json!({})).await;
    assert_eq!(bad["error"]["code"], -32602, "{bad}");
    assert_eq!(
        bad["error"]["message"],
        "resources/subscribe needs params.uri, the resource's URI as a string"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_listen_with_resource_subscriptions_gets_updates_tagged_with_its_id() {
    let (_fixture, mws) = start();
    // The listen reflects what the upstream offers, known once mws has negotiated.
    let _ = post_modern(&mws.url, 1, "tools/list", json!({})).await;
    let mut events = listen(&mws.url, 41, json!({"resourceSubscriptions": [WATCHED]})).await;
    let ack = events.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"resourceSubscriptions": [WATCHED]})
    );
    let (uri, msg) = first_update(&mws.url, &mut events, &[OTHER, WATCHED]).await;
    assert_eq!(uri, WATCHED, "{msg}");
    assert_eq!(
        msg["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 41,
        "{msg}"
    );
}

/// A 2025 upstream (the real server-everything over stdio): mws forwards the subscription on its
/// own upstream session, and the upstream's updates reach the subscribed 2025 session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_upstream_is_subscribed_on_mws_session_and_its_updates_relayed() {
    const TOGGLE: &str = "toggle-subscriber-updates";
    const URI: &str = "demo://resource/static/document/architecture.md";
    let js = crate::support::server_everything();
    let config = json!({
        "upstream": {"command": "node", "args": [js, "stdio"]},
        "timeouts": {"listMs": 20000, "callMs": 20000, "catalogTtlMs": 60000},
    });
    let mws = serve::start(&config, &[TOGGLE]);
    let (s, mut events) = subscribed(&mws.url, URI).await;
    // The toggle makes server-everything report every URI mws's session subscribed to, at once and
    // then every 5 s.
    let r = post_modern(
        &mws.url,
        3,
        "tools/call",
        json!({"name": TOGGLE, "arguments": {}}),
    )
    .await;
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Started"),
        "{r}"
    );
    let (uri, msg) = events
        .next_update(Duration::from_secs(15))
        .await
        .expect("no update relayed");
    assert_eq!(uri, URI, "{msg}");
    let unsub = s.rpc("resources/unsubscribe", json!({"uri": URI})).await;
    assert_eq!(unsub["result"], json!({}), "{unsub}");
}

/// A 2026-07-28 stdio upstream (a Python server that reports only on a listen): mws writes a
/// `subscriptions/listen` naming the subscribed URI to its stdin, the update for that URI reaches
/// the subscribed 2025 session, and after the unsubscribe the listen that named it is cancelled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_stdio_upstreams_updates_reach_the_subscribed_session() {
    const URI: &str = "file:///watched.txt";
    let script = crate::support::root().join("tests/it/support/listening_stdio.py");
    let config = json!({
        "upstream": {"command": "python3", "args": [script]},
        "timeouts": {"listMs": 10000, "callMs": 10000, "catalogTtlMs": 60000},
    });
    let mws = serve::start(&config, &[]);
    // The first list waits for the upstream, whose capabilities decide `resources.subscribe`.
    let _ = post_modern(&mws.url, 1, "tools/list", json!({})).await;
    let (s, mut events) = subscribed(&mws.url, URI).await;
    // The listen naming the URI is written when the subscription is taken; touch until it is in.
    let mut got = None;
    for i in 0..TRIES {
        for uri in ["file:///other.txt", URI] {
            let args = json!({"name": "touch", "arguments": {"uri": uri}});
            let r = post_modern(&mws.url, 10 + i as i64, "tools/call", args).await;
            assert_eq!(
                r["result"]["content"][0]["text"],
                format!("touched {uri}"),
                "{r}"
            );
        }
        got = events.next_update(Duration::from_secs(1)).await;
        if got.is_some() {
            break;
        }
    }
    let (uri, msg) = got.expect("no update relayed");
    assert_eq!(uri, URI, "{msg}");
    // The upstream's open listens as it sees them: the one naming the URI replaced the first,
    // which was cancelled; after the unsubscribe it is replaced again.
    let listens = || async {
        let args = json!({"name": "listens", "arguments": {}});
        let r = post_modern(&mws.url, 99, "tools/call", args).await;
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let until = |want: String| async move {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let open = listens().await;
            if open == want {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "open listens {open}, want {want}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    until(format!(
        r#"[{{"toolsListChanged": true, "resourceSubscriptions": ["{URI}"]}}]"#
    ))
    .await;
    let unsub = s.rpc("resources/unsubscribe", json!({"uri": URI})).await;
    assert_eq!(unsub["result"], json!({}), "{unsub}");
    until(r#"[{"toolsListChanged": true}]"#.to_string()).await;
}

/// Under `serve --stdio` a 2025 client's subscription is its connection's: updates come out on
/// stdout beside the replies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_client_gets_updates_on_stdout() {
    let (_fixture, url) = start_fixture();
    let dir = tempfile::tempdir().unwrap();
    let config = json!({"upstream": {"url": url},
        "timeouts": {"listMs": 10000, "callMs": 10000, "catalogTtlMs": 60000}});
    let mut mws = StdioServed::start(dir.path(), &config);
    mws.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "subs-test", "version": "1"}}}),
    )
    .await;
    mws.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": WATCHED}}))
        .await;
    for i in 0..TRIES {
        let call = json!({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": {
            "name": "call_tool", "arguments": {"name": UPDATE_TOOL, "arguments": {"uri": WATCHED}}}});
        mws.send(&call).await;
        let deadline = tokio::time::Instant::now() + Duration::from_secs(2);
        while let Some(m) = mws.next_before(deadline).await {
            if m["id"] == 1 {
                assert_eq!(
                    m["result"]["capabilities"]["resources"]["subscribe"], true,
                    "{m}"
                );
            }
            if m["id"] == 2 {
                assert_eq!(m["result"], json!({}), "{m}");
            }
            if m["method"] == "notifications/resources/updated" {
                assert_eq!(m["params"], json!({"uri": WATCHED}));
                return;
            }
        }
    }
    panic!("no notifications/resources/updated on stdout after {TRIES} changes");
}

/// The upstream's `notifications/prompts/list_changed` reaches a legacy session's GET stream and a
/// 2026 listen that asked for `promptsListChanged` (tagged with its id); mws asks its upstream for
/// them in its own listen, and advertises `prompts.listChanged` as the upstream does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_list_changes_reach_legacy_streams_and_listens_that_asked() {
    let (_fixture, mws) = start();
    let _ = post_modern(&mws.url, 1, "tools/list", json!({})).await;
    let (legacy_session, init) = legacy(&mws.url).await;
    assert_eq!(
        init["result"]["capabilities"]["prompts"]["listChanged"], true,
        "{init}"
    );
    let mut get = Events::new(legacy_session.stream().await);
    let asked = json!({"promptsListChanged": true, "resourcesListChanged": true});
    let mut listen = listen(&mws.url, 42, asked).await;
    let ack = listen.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true, "resourcesListChanged": true}),
        "{ack}"
    );
    let prompt_change = |m: &Value| m["method"] == "notifications/prompts/list_changed";
    let (mut on_get, mut on_listen) = (None, None);
    for _ in 0..TRIES {
        let r = post_modern(
            &mws.url,
            8,
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "test_trigger_prompt_change", "arguments": {}}}),
        )
        .await;
        assert_eq!(
            r["result"]["content"][0]["text"], "Prompt list change triggered",
            "{r}"
        );
        while on_listen.is_none() {
            match listen.next(Duration::from_secs(1)).await {
                Some(m) if prompt_change(&m) => on_listen = Some(m),
                Some(_) => {}
                None => break,
            }
        }
        while on_get.is_none() {
            match get.next(Duration::from_secs(1)).await {
                Some(m) if prompt_change(&m) => on_get = Some(m),
                Some(_) => {}
                None => break,
            }
        }
        if on_get.is_some() && on_listen.is_some() {
            break;
        }
    }
    let on_listen = on_listen.expect("no prompts/list_changed on the listen stream");
    assert_eq!(
        on_listen["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 42,
        "{on_listen}"
    );
    let on_get = on_get.expect("no prompts/list_changed on the legacy GET stream");
    assert!(on_get.get("params").is_none(), "{on_get}");
}
