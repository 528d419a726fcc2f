//! Issue 7's startup benchmark (prints figures; not a test): the time from spawning `mws serve`
//! to the first `tools/list` answer, when the state dir holds a stored catalog (`catalog.json`,
//! 1,000 tools) and the upstream's identity (`upstream.json`), and the upstream takes 5 s to
//! answer anything. Measured from just before `spawn` to the full reply, polling the port every
//! 0.5 ms; the reply must list the pinned tools, so it really came from the stored catalog.
//! Target: under 50 ms. `benches/upstream_startup.rs` measures the upstream layer's share alone.
//!
//! Run: `cargo bench --bench serve_startup`.

mod common;

use std::time::{Duration, Instant};

use common::{ms, quantile, request};
use serde_json::{Value, json};

/// Tools in the stored catalog.
const TOOLS: usize = 1_000;
/// Process starts measured; more gives a steadier median.
const STARTS: usize = 20;
/// How long the upstream holds every answer back (the "slow upstream").
const UPSTREAM_DELAY: Duration = Duration::from_secs(5);
/// Pause between connection attempts while the port is not yet open; smaller is finer.
const POLL: Duration = Duration::from_micros(500);
/// A start that has not answered in this long is a failure.
const GIVE_UP: Duration = Duration::from_secs(10);
const PINS: [&str; 2] = ["backend0_tool_0", "backend1_tool_1"];

/// Spawns `mws serve` on a fresh port and waits for the first `tools/list` answer.
async fn one_start(dir: &std::path::Path, upstream_url: &str, http: &reqwest::Client) -> Duration {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let body = request(1, "tools/list", json!({})).to_string();
    let config = json!({"upstream": {"url": upstream_url}, "pins": PINS});
    let t0 = Instant::now();
    let child = common::spawn_serve(dir, config, port);
    let reply: Value = loop {
        let sent = http
            .post(&url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", common::V)
            .header("mcp-method", "tools/list")
            .body(body.clone())
            .send()
            .await;
        match sent {
            Ok(r) => break r.json().await.expect("tools/list reply is JSON"),
            Err(e) if e.is_connect() && t0.elapsed() < GIVE_UP => tokio::time::sleep(POLL).await,
            Err(e) => panic!("mws serve did not answer tools/list: {e}"),
        }
    };
    let took = t0.elapsed();
    let names: Vec<&str> = reply["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {reply}"))
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    for pin in PINS {
        assert!(names.contains(&pin), "{pin} not listed: {names:?}");
    }
    drop(child);
    took
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let upstream = common::start_upstream(common::catalog(TOOLS), UPSTREAM_DELAY).await;
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(
            state.join("catalog.json"),
            json!({"tools": common::catalog(TOOLS)}).to_string(),
        )
        .unwrap();
        std::fs::write(
            state.join("upstream.json"),
            json!({"era": "modern", "protocolVersion": common::V,
                   "serverInfo": {"name": "bench-upstream", "version": "0.1"},
                   "capabilities": {"tools": {}}, "instructions": null})
            .to_string(),
        )
        .unwrap();
        // A fresh client per start would add its own setup; one client, no idle connections kept
        // (each start is a new server).
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .build()
            .unwrap();
        let first = one_start(dir.path(), &upstream.url, &http).await;
        let mut times = Vec::with_capacity(STARTS);
        for _ in 0..STARTS {
            times.push(one_start(dir.path(), &upstream.url, &http).await);
        }
        times.sort();
        println!("\nserve startup: spawn -> first tools/list answer, stored {TOOLS}-tool catalog, upstream answers after {UPSTREAM_DELAY:?}");
        println!("first start (creates state.db): {}", ms(first));
        println!(
            "restarts ({STARTS}): min {}  p50 {}  max {}   (target < 50 ms)",
            ms(times[0]),
            ms(quantile(&times, 0.5)),
            ms(times[times.len() - 1])
        );
    });
}
