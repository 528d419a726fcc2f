//! docs/protocol.md's failure table through the real `mws serve` binary, as a client sees it: an
//! upstream dead at start, one that dies or hangs after a good list, an expired legacy session,
//! and a crashing stdio child. (tests/it/upstream.rs checks the same at the upstream layer.)

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::fake_http::{self, Mode};
use crate::support::serve::{self, names, post_modern};
use crate::support::{self};

/// How long a condition the proxy reaches in the background may take before the test fails.
const SETTLE: Duration = Duration::from_secs(15);

fn config(upstream: Value, list_ms: u64, call_ms: u64, ttl_ms: u64) -> Value {
    json!({
        "upstream": upstream,
        "transcripts": [],
        "timeouts": {"listMs": list_ms, "callMs": call_ms, "catalogTtlMs": ttl_ms},
        "listing": "working-set",
    })
}

async fn list(url: &str) -> Vec<String> {
    names(&post_modern(url, 1, "tools/list", json!({})).await)
}

async fn call(url: &str, tool: &str) -> Value {
    let params = json!({"name": tool, "arguments": {}});
    post_modern(url, 2, "tools/call", params).await
}

/// Polls `tools/list` until it equals `want` (bounded by `SETTLE`).
async fn list_until(url: &str, want: &[&str]) {
    let deadline = Instant::now() + SETTLE;
    loop {
        let got = list(url).await;
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "tools/list stayed {got:?}, want {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The text of a `tools/call` the upstream could not answer: an `isError` result, never a
/// JSON-RPC error.
fn failure(reply: &Value) -> String {
    assert!(
        reply.get("error").is_none(),
        "an outage is a tool result: {reply}"
    );
    assert_eq!(
        reply["result"]["isError"], true,
        "the call did not fail: {reply}"
    );
    reply["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dead_at_start_lists_only_the_meta_tools_and_says_so() {
    let url = format!("http://127.0.0.1:{}/mcp", support::dead_port());
    let missing = json!({"command": "/nonexistent/mcp-server"});
    let cases = [
        (json!({"url": url}), format!("upstream unavailable: {url}")),
        (
            missing,
            "cannot start upstream `/nonexistent/mcp-server`".into(),
        ),
    ];
    for (upstream, want_error) in cases {
        let served = serve::start(&config(upstream, 1_000, 5_000, 60_000), &["echo"]);
        assert_eq!(
            list(&served.url).await,
            ["search_tools", "call_tool", "run_script"]
        );
        let d = post_modern(&served.url, 1, "server/discover", json!({})).await;
        let instructions = d["result"]["instructions"].as_str().unwrap();
        assert!(instructions.contains("upstream MCP server is down"), "{d}");
        let t = Instant::now();
        let msg = failure(&call(&served.url, "echo").await);
        assert!(msg.contains(&want_error), "{msg:?} lacks {want_error:?}");
        assert!(t.elapsed() < Duration::from_secs(3), "did not fail fast");
        // call_tool says the same.
        let params = json!({"name": "call_tool", "arguments": {"name": "echo", "arguments": {}}});
        let r = post_modern(&served.url, 3, "tools/call", params).await;
        assert!(failure(&r).contains(&want_error), "{r}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dies_after_a_good_list_serves_the_last_good_and_fails_calls_fast() {
    let tools = vec![json!({"name": "kept"}), json!({"name": "other"})];
    let fake = fake_http::start(Mode::Modern, tools, 10).await;
    let up = json!({"url": fake.url});
    let served = serve::start(&config(up, 2_000, 30_000, 300), &["kept"]);
    list_until(
        &served.url,
        &["search_tools", "call_tool", "run_script", "kept"],
    )
    .await;
    fake.kill();
    // Past the catalog TTL, so the next list asks the dead upstream again.
    tokio::time::sleep(Duration::from_millis(400)).await;
    for _ in 0..3 {
        assert_eq!(
            list(&served.url).await,
            ["search_tools", "call_tool", "run_script", "kept"]
        );
    }
    let t = Instant::now();
    let msg = failure(&call(&served.url, "kept").await);
    assert!(t.elapsed() < Duration::from_secs(2), "did not fail fast");
    assert!(msg.contains("upstream unavailable"), "{msg}");
    // search still reaches the last good catalog.
    let params = json!({"name": "search_tools", "arguments": {"query": "other"}});
    let r = post_modern(&served.url, 4, "tools/call", params).await;
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("\"other\""),
        "{r}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hanging_upstream_costs_a_list_at_most_list_ms() {
    const LIST_MS: u64 = 800;
    let fake = fake_http::start(Mode::Modern, vec![json!({"name": "a"})], 10).await;
    let up = json!({"url": fake.url});
    let served = serve::start(&config(up, LIST_MS, 700, 300), &["a"]);
    list_until(
        &served.url,
        &["search_tools", "call_tool", "run_script", "a"],
    )
    .await;
    fake.state.hang.store(true, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(400)).await;
    for _ in 0..2 {
        let t = Instant::now();
        assert_eq!(
            list(&served.url).await,
            ["search_tools", "call_tool", "run_script", "a"]
        );
        let took = t.elapsed();
        assert!(took < Duration::from_millis(LIST_MS + 1_000), "{took:?}");
    }
    let msg = failure(&call(&served.url, "a").await);
    assert!(msg.contains("did not answer within"), "{msg}");

    // Hanging from the start: the first list waits at most listMs, then shows the meta-tools.
    let fresh = fake_http::start(Mode::Modern, vec![json!({"name": "a"})], 10).await;
    fresh.state.hang.store(true, Ordering::SeqCst);
    let served = serve::start(
        &config(json!({"url": fresh.url}), LIST_MS, 700, 300),
        &["a"],
    );
    let t = Instant::now();
    assert_eq!(
        list(&served.url).await,
        ["search_tools", "call_tool", "run_script"]
    );
    assert!(
        t.elapsed() < Duration::from_millis(LIST_MS + 1_000),
        "{:?}",
        t.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_legacy_session_reopens_for_list_and_fails_a_call_once() {
    for expired_status in [404, 400] {
        let mode = Mode::Legacy {
            sse: true,
            expired_status,
        };
        let fake = fake_http::start(mode, vec![json!({"name": "t"})], 10).await;
        let up = json!({"url": fake.url});
        // Live updates: the same client's next list brings the upstream's new tool.
        let mut cfg = config(up, 2_000, 10_000, 300);
        cfg["listingUpdates"] = json!("live");
        let served = serve::start(&cfg, &["t", "t2"]);
        list_until(
            &served.url,
            &["search_tools", "call_tool", "run_script", "t"],
        )
        .await;
        let before = fake.state.count("initialize");

        // The call that lands on the expired session fails once and is not sent again.
        fake.state.expire_sessions();
        let calls_before = fake.state.count("tools/call");
        let msg = failure(&call(&served.url, "t").await);
        assert!(
            msg.contains("upstream session expired; the call was not retried"),
            "{msg}"
        );
        assert_eq!(fake.state.count("tools/call"), calls_before + 1, "retried");
        let ok = call(&served.url, "t").await;
        assert_eq!(ok["result"]["content"][0]["text"], "called t", "{ok}");
        assert_eq!(fake.state.count("initialize"), before + 1);

        // A list after expiry opens a new session and brings the upstream's new tool.
        fake.state.expire_sessions();
        fake.state.tools.lock().unwrap().push(json!({"name": "t2"}));
        list_until(
            &served.url,
            &["search_tools", "call_tool", "run_script", "t", "t2"],
        )
        .await;
        assert_eq!(
            fake.state.count("initialize"),
            before + 2,
            "{expired_status}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashing_stdio_child_is_restarted_and_the_next_call_works() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("spawns.log");
    let script = support::crashy_script();
    let up = json!({"command": "python3", "args": [script], "env": {"SPAWN_LOG": log}});
    let served = serve::start(&config(up, 5_000, 10_000, 60_000), &["echo"]);
    list_until(
        &served.url,
        &["search_tools", "call_tool", "run_script", "echo"],
    )
    .await;
    let spawns = || std::fs::read_to_string(&log).unwrap().lines().count();
    let before = spawns();

    let msg = failure(&call(&served.url, "crash").await);
    assert!(msg.contains("exited before answering tools/call"), "{msg}");
    let r = call(&served.url, "echo").await;
    assert_eq!(r["result"]["content"][0]["text"], "echoed", "{r}");
    assert_eq!(spawns(), before + 1, "restarted once");
    assert_eq!(
        list(&served.url).await,
        ["search_tools", "call_tool", "run_script", "echo"]
    );
}

/// A modern stdio server that starts slower than the discover probe waits (here: 4 s of `sleep`
/// before mcp-server-time runs) is first taken for a legacy one; when it turns `initialize` down
/// as a 2026-07-28 server, mws asks again and serves it, even after a list budget ran out between
/// the probe and `initialize`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_starting_modern_child_is_served_once_it_is_up() {
    let bin = support::mcp_server_time();
    let script = format!("sleep 4; exec '{}' --local-timezone UTC", bin.display());
    let up = json!({"command": "sh", "args": ["-c", script]});
    let served = serve::start(&config(up, 3_500, 10_000, 60_000), &["get_current_time"]);
    list_until(
        &served.url,
        &[
            "search_tools",
            "call_tool",
            "call_read_only_tool",
            "run_script",
            "get_current_time",
        ],
    )
    .await;
    let params = json!({"name": "get_current_time", "arguments": {"timezone": "UTC"}});
    let r = post_modern(&served.url, 2, "tools/call", params).await;
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("UTC"),
        "{r}"
    );
}
