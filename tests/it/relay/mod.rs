//! What mws relays on a call's own response stream, through the real binary and a hand-written
//! upstream (`upstream.rs`) of either era: log messages a client asked for (legacy
//! `logging/setLevel`, 2026 `_meta` log level), and a legacy answer stream the upstream closed
//! early (SEP-1699), resumed with GET + `Last-Event-ID`.

mod upstream;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use crate::faults::{Serve, error_message, ok_text, outage_text};
use crate::support::run::http_and_time;
use crate::support::serve::StdioServed;
use crate::support::wire::{LegacyClient, messages, post_modern_body};

fn config(dir: &Path, url: &str) -> Value {
    json!({
        "upstream": {"url": url},
        "stateDir": dir.join("state"),
        "timeouts": {"listMs": 5000, "callMs": 10000, "catalogTtlMs": 60000},
    })
}

/// The `data` of each `notifications/message`, in order.
fn logs(msgs: &[Value]) -> Vec<String> {
    msgs.iter()
        .filter(|m| m["method"] == "notifications/message")
        .map(|m| m["params"]["data"].as_str().unwrap().to_string())
        .collect()
}

/// A 2025-11-25 session of a client declaring `capabilities`.
async fn legacy(url: &str, capabilities: Value) -> LegacyClient {
    LegacyClient::open(url, "relay-test", capabilities).await
}

/// `call_tool` for `name` in `session`: every message of the reply, the answer last.
async fn call(session: &LegacyClient, name: &str) -> Vec<Value> {
    let args = json!({"name": "call_tool", "arguments": {"name": name, "arguments": {}}});
    session.request("tools/call", args).await
}

/// A 2026-07-28 `tools/call` of `name` (through `call_tool`) with `extra` request `_meta`.
async fn modern_call(url: &str, name: &str, extra: Value) -> Vec<Value> {
    modern_call_with(url, name, json!({}), extra).await
}

/// `modern_call` with the tool's `arguments`.
async fn modern_call_with(url: &str, name: &str, arguments: Value, extra: Value) -> Vec<Value> {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "relay-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    for (k, v) in extra.as_object().unwrap() {
        meta[k] = v.clone();
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": {"name": name, "arguments": arguments}, "_meta": meta}});
    let (ct, text) = post_modern_body(url, &body).await;
    messages(&ct, &text)
}

fn answer_text(msgs: &[Value]) -> String {
    let last = msgs.last().expect("no reply");
    ok_text(last)
}

/// A legacy client's `logging/setLevel` makes mws tell its legacy upstream once, and the call's
/// messages at or above the level arrive on that call's reply before its answer; another session
/// that asked for nothing gets none, though the shared upstream session now sends them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_logs_follow_the_sessions_level_and_stay_with_their_call() {
    let up = upstream::start(false).await;
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &config(dir.path(), &up.url));
    // The first list waits for the upstream, whose capabilities decide `logging`.
    mws.rpc("tools/list", json!({})).await;
    let asks = legacy(&mws.url, json!({})).await;
    assert_eq!(
        asks.init["result"]["capabilities"]["logging"],
        json!({}),
        "{}",
        asks.init["result"]["capabilities"]
    );
    let set = asks
        .request("logging/setLevel", json!({"level": "info"}))
        .await;
    assert_eq!(set[0]["result"], json!({}), "{set:?}");

    let first = call(&asks, "chatty").await;
    assert_eq!(logs(&first), ["info line", "error line"]);
    assert_eq!(answer_text(&first), "chatty done");
    let again = call(&asks, "chatty").await;
    assert_eq!(logs(&again), ["info line", "error line"]);
    assert_eq!(up.seen.lock().unwrap().set_levels, ["info"], "told once");

    let quiet = legacy(&mws.url, json!({})).await;
    let r = call(&quiet, "chatty").await;
    assert_eq!(logs(&r), Vec::<String>::new());
    assert_eq!(answer_text(&r), "chatty done");

    // A client that can be asked for input (its calls stream through the input relay) gets its
    // logs on that stream too.
    let asked = legacy(&mws.url, json!({"elicitation": {}, "sampling": {}})).await;
    asked
        .request("logging/setLevel", json!({"level": "error"}))
        .await;
    let r = call(&asked, "chatty").await;
    assert_eq!(logs(&r), ["error line"]);
    assert_eq!(answer_text(&r), "chatty done");

    // A level that is no level is refused, naming the levels.
    let bad = asks
        .request("logging/setLevel", json!({"level": "loud"}))
        .await;
    assert_eq!(
        error_message(&bad[0]),
        "logging/setLevel needs 'level', one of: debug, info, notice, warning, error, critical, \
         alert, emergency"
    );
}

/// A 2026 call's `_meta` log level goes upstream in the call's `_meta`; only that call gets the
/// messages, and a call without a level asks the upstream for none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_calls_log_level_is_passed_up_and_its_messages_come_back() {
    let up = upstream::start(true).await;
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &config(dir.path(), &up.url));
    mws.rpc("tools/list", json!({})).await;
    let disc = mws.rpc("server/discover", json!({})).await;
    assert_eq!(
        disc["result"]["capabilities"]["logging"],
        json!({}),
        "{disc}"
    );

    let r = modern_call(
        &mws.url,
        "chatty",
        json!({"io.modelcontextprotocol/logLevel": "error"}),
    )
    .await;
    assert_eq!(logs(&r), ["error line"]);
    assert_eq!(answer_text(&r), "chatty done");
    let r = modern_call(&mws.url, "chatty", json!({})).await;
    assert_eq!(logs(&r), Vec::<String>::new());
    assert_eq!(answer_text(&r), "chatty done");
    // With a progress token too: the progress (the client's token put back), then the logs.
    let r = modern_call(
        &mws.url,
        "chatty",
        json!({"io.modelcontextprotocol/logLevel": "info", "progressToken": "mine"}),
    )
    .await;
    assert_eq!(r[0]["method"], "notifications/progress", "{r:?}");
    assert_eq!(r[0]["params"]["progressToken"], "mine");
    assert_eq!(logs(&r), ["info line", "error line"]);
    assert_eq!(answer_text(&r), "chatty done");
    assert_eq!(
        up.seen.lock().unwrap().call_levels,
        [Some("error".to_string()), None, Some("info".to_string())]
    );
}

/// With several servers, the one over HTTP that offers `logging` relays a call's messages as a
/// single upstream does; a call to a stdio server beside it (mcp-server-time) gets its answer and
/// no messages, and its server is not asked for any.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_several_servers_the_http_ones_logs_are_relayed() {
    let up = upstream::start(true).await;
    let dir = tempfile::tempdir().unwrap();
    let cfg = json!({
        "servers": http_and_time("loud", &up.url),
        "stateDir": dir.path().join("state"),
        "timeouts": {"listMs": 10000, "callMs": 10000, "catalogTtlMs": 60000},
    });
    let mws = Serve::start(dir.path(), &cfg);
    mws.rpc("tools/list", json!({})).await;
    let disc = mws.rpc("server/discover", json!({})).await;
    assert_eq!(
        disc["result"]["capabilities"]["logging"],
        json!({}),
        "{disc}"
    );
    let level = json!({"io.modelcontextprotocol/logLevel": "info"});
    let r = modern_call(&mws.url, "loud__chatty", level.clone()).await;
    assert_eq!(logs(&r), ["info line", "error line"]);
    assert_eq!(answer_text(&r), "chatty done");
    let utc = json!({"timezone": "UTC"});
    let r = modern_call_with(&mws.url, "time__get_current_time", utc, level).await;
    assert_eq!(logs(&r), Vec::<String>::new());
    assert!(answer_text(&r).contains("UTC"), "{r:?}");
    assert_eq!(
        up.seen.lock().unwrap().call_levels,
        [Some("info".to_string())]
    );
}

/// A legacy upstream that closes a call's answer stream after a priming event is asked again
/// with GET + `Last-Event-ID`, no sooner than its `retry:` time, and the answer comes from there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_answer_stream_closed_early_is_resumed_with_last_event_id() {
    let up = upstream::start(false).await;
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &config(dir.path(), &up.url));
    assert_eq!(ok_text(&mws.call("resume", json!({})).await), "resumed");
    let resumes = up.seen.lock().unwrap().resumes.clone();
    assert_eq!(resumes.len(), 1, "{resumes:?}");
    assert_eq!(resumes[0].0, "r1");
    // mws waited the retry time (a lower bound: waiting longer is never wrong).
    assert!(
        resumes[0].1 >= Duration::from_millis(upstream::RETRY_MS - 20),
        "{resumes:?}"
    );
}

/// A closed answer stream whose resumption is refused is an error saying both; the next call works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_stream_that_cannot_be_resumed_is_an_error_saying_why() {
    let up = upstream::start(false).await;
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &config(dir.path(), &up.url));
    let r = mws.call("vanish", json!({})).await;
    assert_eq!(
        outage_text(&r),
        format!(
            "mws could not complete the call to 'vanish': upstream protocol error: tools/call {}: \
             the event stream ended before the response, and resuming it failed: GET answered \
             HTTP 405",
            up.url
        )
    );
    assert_eq!(up.seen.lock().unwrap().resumes.len(), 1, "one GET, refused");
    assert_eq!(ok_text(&mws.call("resume", json!({})).await), "resumed");
}

/// Under `serve --stdio` too: after a legacy `logging/setLevel`, a call's messages at or above
/// the level come out before its answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_clients_get_their_calls_logs_before_the_answer() {
    let up = upstream::start(false).await;
    let dir = tempfile::tempdir().unwrap();
    let mut mws = StdioServed::start(dir.path(), &config(dir.path(), &up.url));
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {}, "clientInfo": {"name": "relay-test", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        // The list waits for the upstream, whose capabilities decide whether logs are relayed.
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "logging/setLevel", "params": {"level": "debug"}}),
    ];
    for r in &requests {
        mws.send(r).await;
        if r.get("id").is_some() {
            assert_eq!(mws.next().await["id"], r["id"]);
        }
    }
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "call_tool", "arguments": {"name": "chatty", "arguments": {}}}});
    mws.send(&call).await;
    let mut got = vec![mws.next().await];
    while got.last().unwrap().get("id").is_none() {
        got.push(mws.next().await);
    }
    assert_eq!(logs(&got), ["debug line", "info line", "error line"]);
    assert_eq!(answer_text(&got), "chatty done");
}
