//! Issue 4's proxy benchmark (prints a table; not a test): `tools/call` latency direct to a fast
//! loopback upstream and through the real `mws serve` binary in front of it, p50/p99 over
//! `MWS_BENCH_CALLS` calls per path (default 10,000) at concurrency 1 and 16, the added latency,
//! throughput, and the proxy's RSS with a 1,000-tool catalog (search index built, every call
//! logged to its database): after the runs, once quiet, and serving again. Direct and proxied rounds alternate so machine load hits both alike.
//! A `floor` path runs in the same rounds: a bare pass-through on the same stack, in a process of
//! its own (`start_floor`), so the table shows what any proxy of this kind adds on this machine,
//! and its CPU per call, next to what mws adds.
//! A second `mws serve` with `validation: "off"` runs in the same rounds, so the cost of checking
//! each call's arguments against its schema (the catalog's typical three-property schema) is the
//! difference between the `mws` and `mws-no-validation` rows.
//!
//! Run: `cargo bench --bench proxy` (builds `mws` in the bench profile first). With
//! `MWS_BENCH_BASELINE=<path to another mws binary>` that build runs too, in the same alternating
//! rounds against the same upstream, so before/after figures come from one run under one load.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::response::IntoResponse;
use common::{Child, cpu_secs, ms, quantile, request, rss_mb};
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

/// A proxy under test: its name in the table, its client side and its process.
struct Proxied {
    name: String,
    target: Arc<Target>,
    child: Child,
    _dir: tempfile::TempDir,
}

/// Starts `bin serve` in front of `upstream` and waits until a catalog tool answers through it;
/// then one search builds its index.
async fn start_proxy(name: &str, bin: &str, upstream: &str, validation: &str) -> Proxied {
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let mut config = json!({"upstream": {"url": upstream}});
    if validation != "enforce" {
        config["validation"] = json!(validation);
    }
    let child = common::spawn_serve_bin(bin, dir.path(), config, port);
    let target = target(format!("http://127.0.0.1:{port}/mcp"));
    let deadline = Instant::now() + READY_WITHIN;
    while target.call("backend0_tool_0").await.is_err() {
        assert!(
            Instant::now() < deadline,
            "{name}: mws serve never answered a call"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let search = target
        .http
        .post(&target.url)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", common::V)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "search_tools")
        .body(
            request(
                0,
                "tools/call",
                json!({"name": "search_tools", "arguments": {"query": "thing number 7"}}),
            )
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert!(search.status().is_success());
    Proxied {
        name: name.to_string(),
        target,
        child,
        _dir: dir,
    }
}

/// The argument that makes this binary the floor (`floor_main`).
const FLOOR_ARG: &str = "--floor";

/// Starts the floor as a child process (this bench binary re-run with `FLOOR_ARG`), so its CPU
/// per call is read from /proc like a proxy's. Returns the process and its `/mcp` URL.
fn start_floor(upstream: &str) -> (Child, String) {
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([FLOOR_ARG, upstream])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start the floor");
    let mut line = String::new();
    let out = child.stdout.take().unwrap();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(out), &mut line).unwrap();
    assert!(
        line.starts_with("http://"),
        "the floor did not start: {line:?}"
    );
    (Child(child), line.trim().to_string())
}

/// The floor: a bare pass-through on mws's own stack (axum server, reqwest client, one runtime
/// worker, nodelay) that forwards the body and the MCP headers as bytes and the reply likewise:
/// nothing parsed, validated or logged. What any proxy built this way adds on this machine; what
/// mws adds beyond it is its own work. Prints its `/mcp` URL on stdout, then serves until killed.
fn floor_main(upstream: &str) -> ! {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    println!("http://{}/mcp", listener.local_addr().unwrap());
    let upstream = upstream.to_string();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let client = reqwest::Client::new();
        let forward = move |headers: HeaderMap, body: Bytes| {
            let (client, upstream) = (client.clone(), upstream.clone());
            async move {
                let mut req = client.post(&upstream).body(body);
                for (k, v) in &headers {
                    if k == "content-type" || k == "accept" || k.as_str().starts_with("mcp-") {
                        req = req.header(k, v);
                    }
                }
                let Ok(resp) = req.send().await else {
                    return StatusCode::BAD_GATEWAY.into_response();
                };
                let status = resp.status();
                let ctype = resp.headers().get("content-type").cloned();
                let Ok(bytes) = resp.bytes().await else {
                    return StatusCode::BAD_GATEWAY.into_response();
                };
                let mut out = (status, bytes).into_response();
                if let Some(c) = ctype {
                    out.headers_mut().insert("content-type", c);
                }
                out
            }
        };
        let app = axum::Router::new().route("/mcp", axum::routing::post(forward));
        let listener = tokio::net::TcpListener::from_std(listener).unwrap();
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
            let _ = tcp.set_nodelay(true);
        });
        let _ = axum::serve(listener, app).await;
    });
    std::process::exit(0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == FLOOR_ARG) {
        floor_main(&args[i + 1]);
    }
    let calls: usize = std::env::var("MWS_BENCH_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_CALLS);
    // Another `mws` binary (an older build) measured in the same rounds, for before/after figures.
    let baseline = std::env::var("MWS_BENCH_BASELINE")
        .ok()
        .filter(|s| !s.is_empty());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let upstream = common::start_upstream(common::catalog(TOOLS), Duration::ZERO).await;
        let direct = target(upstream.url.clone());
        let mut proxies = vec![
            start_proxy("mws", common::mws_bin(), &upstream.url, "enforce").await,
            start_proxy("mws-no-validation", common::mws_bin(), &upstream.url, "off").await,
        ];
        if let Some(bin) = &baseline {
            // An older build may not know `validation`: its config leaves the field out.
            proxies.push(start_proxy("baseline", bin, &upstream.url, "enforce").await);
        }
        let (floor_child, floor_url) = start_floor(&upstream.url);
        let floor = target(floor_url);
        // Warm-up: connections, allocator, the call log's writer, and one call of every tool, so
        // that each tool's argument validator (compiled on its first call and kept while the
        // catalog stays) is ready: the rounds measure the steady state.
        run(&direct, 500, 16).await;
        run(&floor, 500, 16).await;
        for p in &proxies {
            run(&p.target, TOOLS.max(500), 16).await;
        }
        let rss_idle: Vec<f64> = proxies.iter().map(|p| rss_mb(p.child.0.id()).0).collect();
        let cpu_before: Vec<f64> = proxies.iter().map(|p| cpu_secs(p.child.0.id())).collect();
        let floor_cpu_before = cpu_secs(floor_child.0.id());

        println!("\nproxy benchmark: {calls} tools/call per path and concurrency, {TOOLS}-tool catalog, {ROUNDS} alternating rounds");
        if let Some(bin) = &baseline {
            println!("baseline: {bin}");
        }
        println!("{:<17} {:>5} {:>8} {:>11} {:>11} {:>10} {:>7}", "path", "conc", "calls", "p50", "p99", "calls/s", "failed");
        let mut paths: Vec<(&str, Arc<Target>)> = vec![("direct", direct.clone())];
        paths.extend(proxies.iter().map(|p| (p.name.as_str(), p.target.clone())));
        paths.push(("floor", floor.clone()));
        let mut summary = Vec::new();
        for conc in [1usize, 16] {
            let per_round = calls / ROUNDS;
            let mut lat: Vec<Vec<Duration>> = vec![Vec::new(); paths.len()];
            let mut wall = vec![Duration::ZERO; paths.len()];
            let mut fail = vec![0; paths.len()];
            for round in 0..ROUNDS {
                // Each round starts with the next path, so no path always runs first.
                for k in 0..paths.len() {
                    let i = (round + k) % paths.len();
                    let (l, w, f) = run(&paths[i].1, per_round, conc).await;
                    lat[i].extend(l);
                    wall[i] += w;
                    fail[i] += f;
                }
            }
            for (i, (name, _)) in paths.iter().enumerate() {
                lat[i].sort();
                println!(
                    "{:<17} {:>5} {:>8} {:>11} {:>11} {:>10.0} {:>7}",
                    name,
                    conc,
                    lat[i].len(),
                    ms(quantile(&lat[i], 0.5)),
                    ms(quantile(&lat[i], 0.99)),
                    lat[i].len() as f64 / wall[i].as_secs_f64(),
                    fail[i]
                );
            }
            for (i, (name, _)) in paths.iter().enumerate().skip(1) {
                let added = |q| quantile(&lat[i], q).as_secs_f64() * 1e3 - quantile(&lat[0], q).as_secs_f64() * 1e3;
                summary.push((name.to_string(), conc, added(0.5), added(0.99)));
            }
        }
        println!();
        for (name, conc, p50, p99) in summary {
            let targets = if name == "floor" { ["", ""] } else { [" (target < 0.2)", " (target < 1)"] };
            println!("added by {name:<17} at concurrency {conc:>2}: p50 {p50:+.3} ms{}, p99 {p99:+.3} ms{}", targets[0], targets[1]);
        }
        for ((p, idle), cpu0) in proxies.iter().zip(rss_idle).zip(cpu_before) {
            let (rss, hwm) = rss_mb(p.child.0.id());
            println!("{} RSS: {rss:.1} MB after the runs ({idle:.1} MB before them, peak {hwm:.1} MB; target < 30 MB)", p.name);
            // CPU per call is what queues calls at concurrency 16 on a small machine, and it is
            // much less disturbed by other load than latency is.
            let cpu = cpu_secs(p.child.0.id()) - cpu0;
            println!("{} CPU: {:.1} µs per proxied call ({cpu:.2} s over {} calls)", p.name, cpu * 1e6 / (2 * calls) as f64, 2 * calls);
        }
        let cpu = cpu_secs(floor_child.0.id()) - floor_cpu_before;
        println!("floor CPU: {:.1} µs per proxied call ({cpu:.2} s over {} calls)", cpu * 1e6 / (2 * calls) as f64, 2 * calls);
        // Once quiet, serve gives memory back (`server::give_back`); serving maps some back.
        common::wait_until_quiet().await;
        for p in &proxies {
            let (quiet, _) = rss_mb(p.child.0.id());
            run(&p.target, 500, 16).await;
            let (again, _) = rss_mb(p.child.0.id());
            println!("{} RSS: {quiet:.1} MB once quiet, {again:.1} MB serving again (500 calls)", p.name);
        }
        drop(proxies);
    });
}
