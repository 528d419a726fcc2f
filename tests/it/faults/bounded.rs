//! Hostile upstreams bounded, and outages the model can read, through the real binary: a result
//! and a tool schema nested past the JSON parser's limit fail their request at once (not after
//! the timeout), an endless `nextCursor` is stopped at the listing cap with the stored catalog
//! served, and a call to a dead upstream is an `isError` result over 2026 HTTP, 2025 sessions
//! and `--stdio`. The servers are modes of tests/it/support/hostile_stdio.py.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Serve, ok_text, outage_text};
use crate::support::serve::StdioServed;
use crate::support::wire::LegacyClient;

fn config(dir: &Path, mode: &str) -> Value {
    let script = crate::support::root().join("tests/it/support/hostile_stdio.py");
    json!({
        "upstream": {"command": "python3", "args": [script, mode]},
        "stateDir": dir.join("state"),
        "timeouts": {"listMs": 20000, "callMs": 120000, "catalogTtlMs": 60000},
        "listing": "working-set",
    })
}

const DEEP: &str = "upstream protocol error: the upstream's answer is JSON nested 128 levels deep \
                    or more, past the limit of mws's JSON parser; the request failed";

/// A `structuredContent` 200 levels deep fails that call at once (callMs is 120 s), naming the
/// limit; the next call works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_nested_past_the_parser_limit_fails_the_call_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &config(dir.path(), "deep"));
    assert_eq!(ok_text(&mws.call("echo", json!({})).await), "echoed");
    let t = Instant::now();
    let r = mws.call("deep", json!({})).await;
    assert_eq!(
        outage_text(&r),
        format!("mws could not complete the call to 'deep': {DEEP}")
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    assert_eq!(ok_text(&mws.call("echo", json!({})).await), "echoed");
}

/// A tool whose `inputSchema` nests 200 levels deep fails the listing at once (listMs is 20 s),
/// and the warning names the limit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_schema_nested_past_the_parser_limit_fails_the_listing_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let mws = Serve::start(dir.path(), &config(dir.path(), "deepschema"));
    let line = mws.wait_stderr(
        "listing the upstream's tools failed",
        Duration::from_secs(10),
    );
    assert!(line.ends_with(DEEP), "{line}");
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
}

/// A server whose every page has a new `nextCursor` is stopped at 10,000 tools with a warning
/// naming the cap, and the stored catalog is what is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endless_cursor_is_stopped_at_the_cap_and_the_stored_catalog_served() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let stored = json!({"tools": [{"name": "kept_tool", "description": "Kept from before",
        "inputSchema": {"type": "object"}}]});
    mws::private_file::write(&state.join("catalog.json"), stored.to_string().as_bytes()).unwrap();
    let mws = Serve::start(dir.path(), &config(dir.path(), "endless"));
    let search = mws
        .rpc(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "kept_tool"}}),
        )
        .await;
    assert!(search.to_string().contains("kept_tool"), "{search}");
    let line = mws.wait_stderr("the cap on one server", Duration::from_secs(20));
    assert!(
        line.contains(
            "listed more than 10000 tools (the cap on one server's tools/list, its pages \
             together); mws stopped asking for pages and serves its last good catalog"
        ),
        "{line}"
    );
    let search = mws
        .rpc(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "tool_5_5"}}),
        )
        .await;
    assert!(!search.to_string().contains("tool_5_5"), "{search}");
}

/// A call to an upstream that dies at start is an `isError` result naming what happened, over
/// 2026 HTTP, a 2025 session and `--stdio` alike; never a JSON-RPC error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_is_a_tool_result_in_both_eras_and_over_stdio() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config(dir.path(), "die");
    let mws = Serve::start(dir.path(), &cfg);
    let want = "mws could not complete the call to 'echo': ";
    let modern = outage_text(&mws.call("echo", json!({})).await);
    assert!(
        modern.starts_with(want) && modern.contains("dying immediately"),
        "{modern}"
    );
    let legacy = LegacyClient::open(&mws.url, "outage-test", json!({})).await;
    let r = legacy
        .rpc("tools/call", json!({"name": "echo", "arguments": {}}))
        .await;
    let text = outage_text(&r);
    assert!(
        text.starts_with(want) && text.contains("dying immediately"),
        "{text}"
    );

    let stdio_dir = tempfile::tempdir().unwrap();
    let mut stdio = StdioServed::start(stdio_dir.path(), &config(stdio_dir.path(), "die"));
    stdio.initialize("outage-test").await;
    stdio
        .send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
            "params": {"name": "echo", "arguments": {}}}))
        .await;
    let r = stdio.reply(2).await;
    let text = outage_text(&r);
    assert!(
        text.starts_with(want) && text.contains("dying immediately"),
        "{text}"
    );
    stdio.close().await;
}

/// Servers that take 3 s to answer `initialize` (listMs is 1 s): on a first start `mws doctor`
/// waits for them under `firstStartMs` and finds each reachable with its tools; with
/// `firstStartMs` no longer than `listMs` the same servers are not reachable in time, and the
/// warnings name them (a
/// loaded machine may say of the quick one too, so only the slow ones are checked there).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_starting_server_is_waited_for_on_a_first_start() {
    let script = crate::support::root().join("tests/it/support/hostile_stdio.py");
    let slow = json!({"command": "python3", "args": [script, "slowstart"],
        "env": {"SLOW_START_S": "3"}});
    let quick = json!({"command": "python3", "args": [script, "plain"]});
    for (first_start_ms, waits) in [(30_000, true), (1_000, false)] {
        let dir = tempfile::tempdir().unwrap();
        let cfg = json!({
            "servers": {"slow_a": slow, "slow_b": slow, "quick": quick},
            "stateDir": dir.path().join("state"),
            "transcripts": [],
            "timeouts": {"listMs": 1000, "callMs": 20000, "firstStartMs": first_start_ms,
                "catalogTtlMs": 60000},
        });
        std::fs::write(dir.path().join("config.json"), cfg.to_string()).unwrap();
        let out = super::hostile::command(dir.path(), "doctor");
        let line = |name: &str| {
            out.lines()
                .find(|l| l.contains(&format!(" {name} (")))
                .unwrap_or_else(|| panic!("no line for {name}: {out}"))
                .to_string()
        };
        if waits {
            assert!(line("quick").contains(": reachable, "), "{out}");
        }
        for name in ["slow_a", "slow_b"] {
            let l = line(name);
            if waits {
                assert!(
                    l.contains(": reachable, ") && l.ends_with(", 4 tools"),
                    "{out}"
                );
            } else {
                assert!(l.contains(": not reachable"), "{out}");
                // The warning names the server it is about.
                let warning = format!(
                    "listing the tools of server \"{name}\" failed: upstream did not answer \
                     within 1s"
                );
                assert!(out.contains(&warning), "{out}");
            }
        }
    }
}

/// Threads kept busy while `mws doctor` runs, to load the machine's cores (it has two). Raising
/// it loads the machine harder; the doctor run stays correct, only slower.
const LOAD_THREADS: usize = 4;
/// Longest the load runs even if doctor hangs (the loop is bounded by this).
const LOAD_FOR: Duration = Duration::from_secs(120);

/// Busy-loops `LOAD_THREADS` threads until the returned flag is set or `LOAD_FOR` passes.
fn load_the_machine() -> (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    Vec<std::thread::JoinHandle<()>>,
) {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let threads = (0..LOAD_THREADS)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let until = Instant::now() + LOAD_FOR;
                let mut x: u64 = 1;
                while !stop.load(Ordering::Relaxed) && Instant::now() < until {
                    for _ in 0..100_000 {
                        x = std::hint::black_box(
                            x.wrapping_mul(6364136223846793005).wrapping_add(1),
                        );
                    }
                }
            })
        })
        .collect();
    (stop, threads)
}

/// A first start with six stdio servers at once, two of them slow to start (3 s before they
/// answer `initialize`), the rest a Node and three Python servers, with the default timeouts and
/// the machine's cores kept busy: `mws doctor` finds every one reachable with its tools.
#[test]
fn six_stdio_servers_two_slow_pass_doctor_on_a_loaded_machine() {
    let script = crate::support::root().join("tests/it/support/hostile_stdio.py");
    let slow = json!({"command": "python3", "args": [script, "slowstart"],
        "env": {"SLOW_START_S": "3"}});
    let plain = json!({"command": "python3", "args": [script, "plain"]});
    let everything = crate::support::server_everything();
    let time = crate::support::mcp_server_time();
    let dir = tempfile::tempdir().unwrap();
    let cfg = json!({
        "servers": {
            "slow_a": slow, "slow_b": slow, "plain_a": plain, "plain_b": plain,
            "everything": {"command": "node", "args": [everything, "stdio"]},
            "time": {"command": time, "args": ["--local-timezone", "UTC"]},
        },
        "stateDir": dir.path().join("state"),
        "transcripts": [],
    });
    std::fs::write(dir.path().join("config.json"), cfg.to_string()).unwrap();
    let (stop, threads) = load_the_machine();
    let out = super::hostile::command(dir.path(), "doctor");
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    for name in [
        "slow_a",
        "slow_b",
        "plain_a",
        "plain_b",
        "everything",
        "time",
    ] {
        let line = out
            .lines()
            .find(|l| l.contains(&format!(" {name} (")))
            .unwrap_or_else(|| panic!("no line for {name}: {out}"));
        assert!(
            line.starts_with("ok") && line.contains(": reachable, "),
            "{name}: {out}"
        );
    }
    assert!(!out.contains("not reachable"), "{out}");
}
