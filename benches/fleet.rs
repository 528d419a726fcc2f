//! Issue 14's `servers` benchmark (prints figures; not a test), each figure beside its
//! single-upstream counterpart from the same run:
//!
//! 1. the first `tools/list` after a restart, from stored catalogs, when every upstream takes 5 s
//!    to answer: 10 servers of 100 tools (`stateDir/servers/<name>/`) against one upstream of
//!    1,000 (`stateDir/catalog.json`); measured from just before `spawn` to the full reply, which
//!    must list the pinned tools. Target: under 50 ms.
//! 2. `tools/call` latency through `mws serve` to the tenth of 10 fast loopback servers against a
//!    single-upstream mws in front of one such server, alternating rounds. Target: the same.
//! 3. `mws serve`'s own RSS with 10 stdio servers (`mws demo-upstream` children) after listing
//!    and calls, against one stdio server: right after the calls, once the proxy has gone quiet
//!    and given memory back (`server::give_back`), and serving again after as many calls and a
//!    `tools/list` more (the figure). Target: under 40 MB.
//!
//! Run: `cargo bench --bench fleet`. `MWS_BENCH_CALLS` sets the calls per round (default 500);
//! `MWS_BENCH_BASELINE=<path to another mws binary>` measures that build's RSS too, alternating.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::{Child, ms, quantile, request, rss_mb};
use serde_json::{Value, json};

const SERVERS: usize = 10;
const TOOLS_PER_SERVER: usize = 100;
/// Restarts measured per layout; more gives a steadier median.
const STARTS: usize = 10;
/// How long every upstream holds its answers back in part 1.
const UPSTREAM_DELAY: Duration = Duration::from_secs(5);
/// Pause between connection attempts while the port is not open yet.
const POLL: Duration = Duration::from_micros(500);
/// A start, or a server becoming ready, that takes longer than this is a failure.
const GIVE_UP: Duration = Duration::from_secs(60);
/// Calls per round and layout in part 2 when `MWS_BENCH_CALLS` is unset.
const DEFAULT_CALLS: usize = 500;
/// Single/fleet alternations in part 2; more spreads load spikes over both.
const ROUNDS: usize = 6;
/// Calls made before reading the RSS in part 3.
const RSS_CALLS: usize = 200;
/// Rounds of part 3 (each build, one server and ten, in turn).
const RSS_ROUNDS: usize = 3;

fn server(i: usize) -> String {
    format!("s{i}")
}

fn remembered() -> Value {
    json!({"era": "modern", "protocolVersion": common::V,
           "serverInfo": {"name": "bench-upstream", "version": "0.1"},
           "capabilities": {"tools": {}}, "instructions": null})
}

fn write(path: &Path, v: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, v.to_string()).unwrap();
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    id: u64,
    method: &str,
    params: Value,
) -> reqwest::Result<Value> {
    let mut req = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", common::V)
        .header("mcp-method", method);
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        req = req.header("mcp-name", name);
    }
    req.body(request(id, method, params).to_string())
        .send()
        .await?
        .json()
        .await
}

/// Spawns `mws serve` and times spawn → the first `tools/list` answer, which must list `pins`.
async fn first_list(
    dir: &Path,
    config: &Value,
    pins: &[String],
    http: &reqwest::Client,
) -> Duration {
    let port = common::free_port();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let t0 = Instant::now();
    let child = common::spawn_serve(dir, config.clone(), port);
    let reply = loop {
        match post(http, &url, 1, "tools/list", json!({})).await {
            Ok(r) => break r,
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
    for p in pins {
        assert!(names.contains(&p.as_str()), "{p} not listed: {names:?}");
    }
    drop(child);
    took
}

async fn restarts(
    dir: &Path,
    config: &Value,
    pins: &[String],
    http: &reqwest::Client,
) -> Vec<Duration> {
    first_list(dir, config, pins, http).await; // creates state.db
    let mut times = Vec::with_capacity(STARTS);
    for _ in 0..STARTS {
        times.push(first_list(dir, config, pins, http).await);
    }
    times.sort();
    times
}

async fn part1(http: &reqwest::Client) {
    let total = SERVERS * TOOLS_PER_SERVER;
    let single_up = common::start_upstream(common::catalog(total), UPSTREAM_DELAY).await;
    let single = tempfile::tempdir().unwrap();
    let state = single.path().join("state");
    write(
        &state.join("catalog.json"),
        &json!({"tools": common::catalog(total)}),
    );
    write(&state.join("upstream.json"), &remembered());
    let pins = vec!["backend0_tool_0".to_string(), "backend1_tool_1".to_string()];
    let cfg = json!({"upstream": {"url": single_up.url}, "pins": pins, "transcripts": []});
    let one = restarts(single.path(), &cfg, &pins, http).await;

    let mut ups = Vec::new();
    let mut servers = serde_json::Map::new();
    let fleet = tempfile::tempdir().unwrap();
    for i in 0..SERVERS {
        let up = common::start_upstream(common::catalog(TOOLS_PER_SERVER), UPSTREAM_DELAY).await;
        servers.insert(server(i), json!({"url": up.url}));
        let dir = fleet.path().join(format!("state/servers/{}", server(i)));
        write(
            &dir.join("catalog.json"),
            &json!({"tools": common::catalog(TOOLS_PER_SERVER)}),
        );
        write(&dir.join("upstream.json"), &remembered());
        ups.push(up);
    }
    let pins = vec![
        format!("{}__backend0_tool_0", server(0)),
        format!("{}__backend1_tool_1", server(SERVERS - 1)),
    ];
    let cfg = json!({"servers": servers, "pins": pins, "transcripts": []});
    let ten = restarts(fleet.path(), &cfg, &pins, http).await;
    println!(
        "\n1. first tools/list after a restart, stored catalogs, every upstream answers after {UPSTREAM_DELAY:?} ({STARTS} restarts)"
    );
    for (label, t) in [
        (format!("1 upstream, {total} tools"), &one),
        (
            format!("{SERVERS} servers x {TOOLS_PER_SERVER} tools"),
            &ten,
        ),
    ] {
        println!(
            "   {label:<26} min {}  p50 {}  max {}   (target < 50 ms)",
            ms(t[0]),
            ms(quantile(t, 0.5)),
            ms(t[t.len() - 1])
        );
    }
}

/// A running `mws serve` for parts 2 and 3, ready once `tool` answers.
struct Served {
    child: Child,
    url: String,
    _dir: tempfile::TempDir,
}

async fn serve_ready(config: Value, tool: &str, args: &Value, http: &reqwest::Client) -> Served {
    serve_ready_bin(common::mws_bin(), config, tool, args, http).await
}

/// `serve_ready` with another `mws` binary (`MWS_BENCH_BASELINE`).
async fn serve_ready_bin(
    bin: &str,
    config: Value,
    tool: &str,
    args: &Value,
    http: &reqwest::Client,
) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let child = common::spawn_serve_bin(bin, dir.path(), config, port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let t0 = Instant::now();
    loop {
        let r = post(
            http,
            &url,
            1,
            "tools/call",
            json!({"name": tool, "arguments": args}),
        )
        .await;
        if let Ok(r) = &r
            && r.get("result").is_some()
        {
            break;
        }
        assert!(t0.elapsed() < GIVE_UP, "{tool} never answered: {r:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Served {
        child,
        url,
        _dir: dir,
    }
}

async fn timed_calls(
    s: &Served,
    tool: &str,
    args: &Value,
    n: usize,
    http: &reqwest::Client,
    out: &mut Vec<Duration>,
) {
    for i in 0..n {
        let t = Instant::now();
        let r = post(
            http,
            &s.url,
            i as u64 + 2,
            "tools/call",
            json!({"name": tool, "arguments": args}),
        )
        .await
        .expect("call");
        assert!(r.get("result").is_some(), "{r}");
        out.push(t.elapsed());
    }
}

async fn part2(http: &reqwest::Client) {
    let calls = std::env::var("MWS_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_CALLS);
    let mut ups = Vec::new();
    let mut servers = serde_json::Map::new();
    for i in 0..SERVERS {
        let up = common::start_upstream(common::catalog(TOOLS_PER_SERVER), Duration::ZERO).await;
        servers.insert(server(i), json!({"url": up.url}));
        ups.push(up);
    }
    let tool = "backend3_tool_3";
    let args = json!({"id": "x"});
    let tenth = format!("{}__{tool}", server(SERVERS - 1));
    let single = serve_ready(
        json!({"upstream": {"url": ups[SERVERS - 1].url}, "transcripts": []}),
        tool,
        &args,
        http,
    )
    .await;
    let fleet = serve_ready(
        json!({"servers": servers, "transcripts": []}),
        &tenth,
        &args,
        http,
    )
    .await;
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        timed_calls(&single, tool, &args, calls, http, &mut a).await;
        timed_calls(&fleet, &tenth, &args, calls, http, &mut b).await;
    }
    a.sort();
    b.sort();
    println!(
        "\n2. tools/call through mws serve, sequential, {} calls each",
        a.len()
    );
    println!(
        "   single upstream             p50 {}  p99 {}",
        ms(quantile(&a, 0.5)),
        ms(quantile(&a, 0.99))
    );
    println!(
        "   tenth of {SERVERS} servers          p50 {}  p99 {}",
        ms(quantile(&b, 0.5)),
        ms(quantile(&b, 0.99))
    );
    let d = quantile(&b, 0.5).as_secs_f64() - quantile(&a, 0.5).as_secs_f64();
    println!(
        "   difference at p50: {:+.3} ms (target: the same)",
        d * 1e3
    );
    drop((single, fleet));
}

/// One reading of part 3, in MB.
struct Rss {
    /// Right after the calls.
    busy: f64,
    /// Once quiet, after giving memory back.
    quiet: f64,
    /// After as many calls and a `tools/list` more.
    again: f64,
    /// `VmHWM`.
    peak: f64,
}

/// Serves `config` with `bin`, calls `name` and reads RSS at each point of [`Rss`].
async fn rss_readings(bin: &str, config: Value, name: &str, http: &reqwest::Client) -> Rss {
    let none = json!({});
    let s = serve_ready_bin(bin, config, name, &none, http).await;
    let _ = post(http, &s.url, 1, "tools/list", json!({})).await;
    let mut sink = Vec::new();
    timed_calls(&s, name, &none, RSS_CALLS, http, &mut sink).await;
    let (busy, _) = rss_mb(s.child.0.id());
    common::wait_until_quiet().await;
    let (quiet, _) = rss_mb(s.child.0.id());
    // Serving again: what the serving path maps back.
    timed_calls(&s, name, &none, RSS_CALLS, http, &mut sink).await;
    let _ = post(http, &s.url, 2, "tools/list", json!({})).await;
    let (again, peak) = rss_mb(s.child.0.id());
    Rss {
        busy,
        quiet,
        again,
        peak,
    }
}

async fn part3(http: &reqwest::Client) {
    // With MWS_BENCH_BASELINE, that build is measured too, alternating with this one; each
    // serve runs its own binary as its demo upstreams.
    let mut bins = vec![("mws".to_string(), common::mws_bin().to_string())];
    if let Ok(b) = std::env::var("MWS_BENCH_BASELINE") {
        bins.push(("baseline".to_string(), b));
    }
    let tool = "mail_list_labels";
    let mut rows: Vec<(String, String, Vec<Rss>)> = Vec::new();
    for _ in 0..RSS_ROUNDS {
        for (who, bin) in &bins {
            let demo = json!({"command": bin, "args": ["demo-upstream"]});
            let mut servers = serde_json::Map::new();
            for i in 0..SERVERS {
                servers.insert(server(i), demo.clone());
            }
            for (label, config, name) in [
                (
                    "1 stdio upstream".to_string(),
                    json!({"upstream": demo, "transcripts": []}),
                    tool.to_string(),
                ),
                (
                    format!("{SERVERS} stdio servers"),
                    json!({"servers": servers, "transcripts": []}),
                    format!("{}__{tool}", server(SERVERS - 1)),
                ),
            ] {
                let reading = rss_readings(bin, config, &name, http).await;
                match rows.iter_mut().find(|r| r.0 == *who && r.1 == label) {
                    Some(r) => r.2.push(reading),
                    None => rows.push((who.clone(), label, vec![reading])),
                }
            }
        }
    }
    println!(
        "\n3. mws serve's own RSS after tools/list and {RSS_CALLS} calls ({RSS_ROUNDS} alternating rounds, min–max)"
    );
    let span = |v: &[Rss], f: fn(&Rss) -> f64| {
        let lo = v.iter().map(f).fold(f64::INFINITY, f64::min);
        let hi = v.iter().map(f).fold(0.0, f64::max);
        format!("{lo:.1}–{hi:.1}")
    };
    for (who, label, v) in rows {
        println!(
            "   {who:<9} {label:<18} {} MB serving after a quiet spell (target < 40 MB); right after the calls {} MB, once quiet {} MB, peak {} MB",
            span(&v, |r| r.again),
            span(&v, |r| r.busy),
            span(&v, |r| r.quiet),
            span(&v, |r| r.peak),
        );
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let http = reqwest::Client::builder().build().unwrap();
        part1(
            &reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .unwrap(),
        )
        .await;
        part2(&http).await;
        part3(&http).await;
    });
}
