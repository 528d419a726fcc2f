//! Big results (prints figures; not a test). In process: shaping a 1 MB text result and a 1 MB
//! JSON array result to `results.maxTokens` (default), and a result under the limit through the
//! same call as through nothing, side by side. With `-- load`: the real `mws serve` (bench
//! profile) in front of `tests/it/support/big_stdio.py`, 64 clients each fetching 1 MiB results
//! over loopback with `results.memoryMb` at 16, and the proxy's RSS sampled against cap + 40 MB,
//! first with shaping off (`maxTokens: 0`, the baseline), then on.
//!
//! `cargo bench --bench results` and `cargo bench --bench results -- load`.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mws::config;
use mws::results::Results;
use serde_json::{Value, json};

/// Runs of each in-process figure; the median is printed.
const RUNS: usize = 50;
/// Clients of the load mode, and 1 MiB results each fetches.
const CLIENTS: usize = 64;
const CALLS_EACH: usize = 4;
/// `results.memoryMb` of the load mode.
const CAP_MB: f64 = 16.0;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Median time to shape `result` (what the client waits for), the bytes saved, and the median
/// time to free what was cut from a parsed array (the proxy does it after answering).
fn time(results: &Results, result: &Value) -> (Duration, Option<usize>, Duration) {
    let mut saved = None;
    let mut frees = Vec::new();
    let runs = (0..RUNS)
        .map(|_| {
            let r = result.clone();
            let start = Instant::now();
            let (out, s, leftover) = results.shape_deferred(r, "bench", Instant::now());
            let took = start.elapsed();
            std::hint::black_box(out);
            let start = Instant::now();
            drop(leftover);
            frees.push(start.elapsed());
            saved = s;
            took
        })
        .collect();
    (median(runs), saved, median(frees))
}

fn clone_only(result: &Value) -> Duration {
    median(
        (0..RUNS)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(result.clone());
                start.elapsed()
            })
            .collect(),
    )
}

fn in_process() {
    let results = Results::new(&config::Results::default());
    // Loads the tokenizer once, as the first shaped result of a proxy does.
    let warm = "word ".repeat(20_000);
    results.shape(
        json!({"content": [{"type": "text", "text": warm}]}),
        "bench",
        Instant::now(),
    );
    let line = "2026-11-29T10:00:00Z INFO request served path=/api/v1/items status=200 ms=12\n";
    let text = line.repeat(1024 * 1024 / line.len());
    let items: Vec<Value> = (0..12_000)
        .map(|i| json!({"id": i, "name": format!("item {i}"), "tags": ["a", "b"], "ok": true}))
        .collect();
    let array = serde_json::to_string(&items).unwrap();
    let small = json!({"content": [{"type": "text", "text": line.repeat(20)}]});
    println!(
        "results.maxTokens {} (default), median of {RUNS} runs",
        config::Results::default().max_tokens
    );
    for (what, r) in [
        (
            "1 MB text",
            json!({"content": [{"type": "text", "text": text}]}),
        ),
        (
            "1 MB JSON array (text)",
            json!({"content": [{"type": "text", "text": array}]}),
        ),
        (
            "1 MB JSON array (structuredContent)",
            json!({"content": [], "structuredContent": {"items": items}}),
        ),
    ] {
        let (t, saved, free) = time(&results, &r);
        println!(
            "shape {what:<36} {:>8.2} ms   ({} bytes cut; freeing the cut values after: {:.2} ms; \
             clone alone {:.2} ms)",
            t.as_secs_f64() * 1e3,
            saved.unwrap_or(0),
            free.as_secs_f64() * 1e3,
            clone_only(&r).as_secs_f64() * 1e3
        );
    }
    let (t, saved, _) = time(&results, &small);
    assert!(saved.is_none());
    println!(
        "under the limit ({} bytes)           {:>8.2} µs   (clone alone {:.2} µs)",
        mws::mcp::json_len(&small),
        t.as_secs_f64() * 1e6,
        clone_only(&small).as_secs_f64() * 1e6
    );
}

fn rss_kb(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    s.lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// One load run through `mws serve` with `results.maxTokens` at `max_tokens` (0: results pass
/// whole, the baseline).
fn load(max_tokens: u32) {
    let dir = tempfile::tempdir().unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let cfg = json!({
        "upstream": {"command": "python3", "args": [root.join("tests/it/support/big_stdio.py")]},
        "timeouts": {"listMs": 20000, "callMs": 60000},
        "results": {"memoryMb": CAP_MB, "maxTokens": max_tokens},
    });
    let path = dir.path().join("config.json");
    std::fs::write(&path, cfg.to_string()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mws"))
        .arg("--config")
        .arg(&path)
        .args(["serve", "--port", "0", "--state-dir"])
        .arg(dir.path().join("state"))
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = {
        use std::io::BufRead;
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let url = loop {
            let line = lines.next().expect("no URL on stderr").unwrap();
            if let Some(rest) = line.split("serving MCP at ").nth(1) {
                break rest.split_whitespace().next().unwrap().to_string();
            }
        };
        std::thread::spawn(move || lines.for_each(drop));
        url
    };
    let pid = child.id();
    let idle = rss_kb(pid).unwrap_or(0);
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = {
        let (done, peak) = (done.clone(), peak.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(rss_kb(pid).unwrap_or(0), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(50));
            }
        })
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let start = Instant::now();
    let (ok, failed) = rt.block_on(async {
        let http = reqwest::Client::new();
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|c| {
                let (http, url) = (http.clone(), url.clone());
                tokio::spawn(async move {
                    let mut ok = 0;
                    for i in 0..CALLS_EACH {
                        let body = json!({"jsonrpc": "2.0", "id": c * 100 + i, "method": "tools/call",
                            "params": {"name": "one_mb", "arguments": {}, "_meta": {
                                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
                                "io.modelcontextprotocol/clientCapabilities": {}}}});
                        let r = http
                            .post(&url)
                            .header("content-type", "application/json")
                            .header("accept", "application/json, text/event-stream")
                            .header("mcp-protocol-version", "2026-07-28")
                            .header("mcp-method", "tools/call")
                            .header("mcp-name", "one_mb")
                            .body(body.to_string())
                            .send()
                            .await;
                        let Ok(r) = r else { continue };
                        let text = r.text().await.unwrap_or_default();
                        let shaped = text.contains("bytes cut here");
                        if shaped == (max_tokens > 0) && text.contains("end\\n") {
                            ok += 1;
                        }
                    }
                    ok
                })
            })
            .collect();
        let mut ok = 0;
        for t in tasks {
            ok += t.await.unwrap();
        }
        (ok, CLIENTS * CALLS_EACH - ok)
    });
    let took = start.elapsed();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let after = rss_kb(pid).unwrap_or(0);
    let _ = child.kill();
    let _ = child.wait();
    let peak_mb = peak.load(Ordering::Relaxed) as f64 / 1024.0;
    let limit = CAP_MB + 40.0;
    println!(
        "load, maxTokens {max_tokens}: {CLIENTS} clients x {CALLS_EACH} 1 MiB results in {:.1} s: \
         {ok} answered, {failed} failed; RSS idle {:.1} MB, peak {peak_mb:.1} MB, after {:.1} MB; cap {CAP_MB} MB + 40 \
         MB = {limit} MB: {}",
        took.as_secs_f64(),
        idle as f64 / 1024.0,
        after as f64 / 1024.0,
        if peak_mb <= limit { "met" } else { "NOT MET" }
    );
}

fn main() {
    if std::env::args().any(|a| a == "load") {
        load(0);
        load(config::Results::default().max_tokens);
    } else {
        in_process();
    }
}
