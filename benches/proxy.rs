//! Issue 4's proxy benchmark (prints a table; not a test): `tools/call` latency direct to a fast
//! loopback upstream and through the real `mws serve` binary in front of it, p50/p99 over
//! `MWS_BENCH_CALLS` calls per path (default 10,000) at concurrency 1 and 16, the added latency,
//! throughput, and the proxy's RSS with a 1,000-tool catalog (search index built, every call
//! logged to its database). Direct and proxied rounds alternate so machine load hits both alike.
//!
//! Run: `cargo bench --bench proxy` (builds `mws` in the bench profile first).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{Child, ms, quantile, request, rss_mb};
use serde_json::{Value, json};

/// Tools in the upstream's catalog (the RSS target is stated at 1,000).
const TOOLS: usize = 1_000;
/// Calls per path and concurrency when `MWS_BENCH_CALLS` is unset; more gives steadier p99s.
const DEFAULT_CALLS: usize = 10_000;
/// Direct/proxied alternations per concurrency level; more spreads load spikes more evenly.
const ROUNDS: usize = 10;
/// How long `mws serve` gets to start and fetch the catalog.
const READY_WITHIN: Duration = Duration::from_secs(60);

struct Target {
    url: String,
    http: reqwest::Client,
    ids: AtomicU64,
}

impl Target {
    /// One `tools/call`; `Err` with what went wrong when the reply is not a successful result.
    async fn call(&self, tool: &str) -> Result<(), String> {
        let id = self.ids.fetch_add(1, Ordering::Relaxed);
        let body = request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": {"id": format!("x{id}")}}),
        );
        let r = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", common::V)
            .header("mcp-method", "tools/call")
            .header("mcp-name", tool)
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| e.to_string())?;
        let v: Value = r.json().await.map_err(|e| e.to_string())?;
        if v["result"]["isError"] == false {
            Ok(())
        } else {
            Err(v.to_string())
        }
    }
}

/// `calls` calls at `concurrency`; per-call latencies, wall time and failures.
async fn run(
    t: &Arc<Target>,
    calls: usize,
    concurrency: usize,
) -> (Vec<Duration>, Duration, usize) {
    let start = Instant::now();
    let tasks: Vec<_> = (0..concurrency)
        .map(|w| {
            let t = t.clone();
            // Worker `w` makes calls w, w + concurrency, w + 2 * concurrency, ...
            let mine: Vec<usize> = (w..calls).step_by(concurrency).collect();
            tokio::spawn(async move {
                let mut lat = Vec::with_capacity(mine.len());
                let mut failed = 0;
                for i in mine {
                    let k = i % TOOLS;
                    let tool = format!("backend{}_tool_{k}", k % 25);
                    let t0 = Instant::now();
                    if t.call(&tool).await.is_err() {
                        failed += 1;
                    }
                    lat.push(t0.elapsed());
                }
                (lat, failed)
            })
        })
        .collect();
    let mut all = Vec::with_capacity(calls);
    let mut failed = 0;
    for task in tasks {
        let (lat, f) = task.await.unwrap();
        all.extend(lat);
        failed += f;
    }
    (all, start.elapsed(), failed)
}

fn target(url: String) -> Arc<Target> {
    Arc::new(Target {
        url,
        http: reqwest::Client::builder()
            .pool_max_idle_per_host(64)
            .build()
            .unwrap(),
        ids: AtomicU64::new(1),
    })
}

fn main() {
    let calls: usize = std::env::var("MWS_BENCH_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_CALLS);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let upstream = common::start_upstream(common::catalog(TOOLS), Duration::ZERO).await;
        let dir = tempfile::tempdir().unwrap();
        let port = common::free_port();
        let child: Child = common::spawn_serve(dir.path(), json!({"upstream": {"url": upstream.url}}), port);
        let pid = child.0.id();
        let direct = target(upstream.url.clone());
        let proxied = target(format!("http://127.0.0.1:{port}/mcp"));

        // Ready once a catalog tool answers through the proxy; then one search builds the index.
        let deadline = Instant::now() + READY_WITHIN;
        while proxied.call("backend0_tool_0").await.is_err() {
            assert!(Instant::now() < deadline, "mws serve never answered a call");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let search = proxied
            .http
            .post(&proxied.url)
            .header("mcp-protocol-version", common::V)
            .header("mcp-method", "tools/call")
            .header("mcp-name", "search_tools")
            .body(request(0, "tools/call", json!({"name": "search_tools", "arguments": {"query": "thing number 7"}})).to_string())
            .send()
            .await
            .unwrap();
        assert!(search.status().is_success());
        // Warm-up: connections, allocator, the call log's writer.
        run(&direct, 500, 16).await;
        run(&proxied, 500, 16).await;
        let (rss_idle, _) = rss_mb(pid);

        println!("\nproxy benchmark: {calls} tools/call per path and concurrency, {TOOLS}-tool catalog, {ROUNDS} alternating rounds");
        println!("{:<8} {:>5} {:>8} {:>11} {:>11} {:>10} {:>7}", "path", "conc", "calls", "p50", "p99", "calls/s", "failed");
        let mut summary = Vec::new();
        for conc in [1usize, 16] {
            let per_round = calls / ROUNDS;
            let mut d_lat = Vec::new();
            let mut p_lat = Vec::new();
            let (mut d_wall, mut p_wall) = (Duration::ZERO, Duration::ZERO);
            let (mut d_fail, mut p_fail) = (0, 0);
            for round in 0..ROUNDS {
                let order = if round % 2 == 0 { [&direct, &proxied] } else { [&proxied, &direct] };
                for t in order {
                    let (lat, wall, failed) = run(t, per_round, conc).await;
                    if Arc::ptr_eq(t, &direct) {
                        d_lat.extend(lat);
                        d_wall += wall;
                        d_fail += failed;
                    } else {
                        p_lat.extend(lat);
                        p_wall += wall;
                        p_fail += failed;
                    }
                }
            }
            d_lat.sort();
            p_lat.sort();
            for (name, lat, wall, failed) in [("direct", &d_lat, d_wall, d_fail), ("mws", &p_lat, p_wall, p_fail)] {
                println!(
                    "{:<8} {:>5} {:>8} {:>11} {:>11} {:>10.0} {:>7}",
                    name,
                    conc,
                    lat.len(),
                    ms(quantile(lat, 0.5)),
                    ms(quantile(lat, 0.99)),
                    lat.len() as f64 / wall.as_secs_f64(),
                    failed
                );
            }
            let added = |q| quantile(&p_lat, q).as_secs_f64() * 1e3 - quantile(&d_lat, q).as_secs_f64() * 1e3;
            summary.push((conc, added(0.5), added(0.99)));
        }
        println!();
        for (conc, p50, p99) in summary {
            println!("added by mws at concurrency {conc:>2}: p50 {p50:+.3} ms (target < 0.2), p99 {p99:+.3} ms (target < 1)");
        }
        let (rss, hwm) = rss_mb(pid);
        println!("mws RSS: {rss:.1} MB after the runs ({rss_idle:.1} MB before them, peak {hwm:.1} MB; target < 30 MB)");
        drop(child);
    });
}
