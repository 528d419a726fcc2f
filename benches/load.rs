//! Load and soak (prints figures; not a test): `mws serve --demo` on loopback, CLIENTS concurrent
//! clients of both eras (modern stateless requests, legacy `initialize` sessions) making REQUESTS
//! mixed calls, searches and lists, while `mws ingest` and `mws promote` run in a loop against the
//! same database and the `sqlite3` CLI reads it (a user's query, each run opening and closing the
//! file). Prints failed requests, lost `calls` rows (rows in the database vs forwarded
//! calls made), RSS samples of the proxy and latency percentiles.
//!
//! `cargo bench --bench load --profile dev` (the debug build; drop `--profile dev` for release).
//! `-- 20000` for another request count (or `MWS_LOAD_REQUESTS`).

#[path = "load/client.rs"]
mod client;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use client::{Client, Era, Kind, Tally};

/// Concurrent clients; half modern, half legacy.
const CLIENTS: usize = 64;
/// Requests in all when no count is given.
const DEFAULT_REQUESTS: u64 = 100_000;
/// How often the proxy's RSS is sampled.
const RSS_EVERY: Duration = Duration::from_secs(2);
/// Share of the run counted as warm-up for the RSS verdict.
const WARM_UP: f64 = 0.2;

/// Pause between two runs of the `sqlite3` CLI reader. Lowering it opens and closes the database
/// more often under the load.
const READER_PAUSE: Duration = Duration::from_millis(50);

fn mws() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mws"))
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

/// A Claude Code transcript line pair (one MCP call) for the ingest loop to find.
fn append_session_call(path: &Path, n: u64) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    let sid = r#""sessionId":"load-1","cwd":"/home/dev""#;
    let ts = format!(
        r#""timestamp":"2026-11-29T10:{:02}:{:02}.000Z""#,
        n / 60 % 60,
        n % 60
    );
    writeln!(f, r#"{{{sid},{ts},"type":"assistant","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_load{n}","name":"mcp__toolbox__calendar_list_events","input":{{}}}}]}}}}"#).unwrap();
    writeln!(f, r#"{{{sid},{ts},"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"toolu_load{n}","type":"tool_result","content":[{{"type":"text","text":"ok"}}]}}]}}}}"#).unwrap();
}

/// Runs ingest and promote alternately until `stop`; returns (runs, failures).
fn background_writers(config: PathBuf, transcript: PathBuf, stop: Arc<AtomicBool>) -> (u64, u64) {
    let (mut runs, mut failures) = (0, 0);
    while !stop.load(Ordering::Relaxed) {
        append_session_call(&transcript, runs);
        let sub: &[&str] = if runs % 2 == 0 {
            &["ingest", "--json"]
        } else {
            &["promote", "--json"]
        };
        let out = mws()
            .arg("--config")
            .arg(&config)
            .args(sub)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        runs += 1;
        if !out.status.success() {
            failures += 1;
            eprintln!(
                "mws {}: {}",
                sub[0],
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
    }
    (runs, failures)
}

/// Runs `sqlite3 <db> "select count(*) from calls"` until `stop`; returns (runs, failures, runs
/// after which `state.db-wal` was missing: a reader that believed itself the last connection).
fn sqlite3_readers(db: PathBuf, stop: Arc<AtomicBool>) -> (u64, u64, u64) {
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    let (mut runs, mut failures, mut wal_gone) = (0, 0, 0);
    while !stop.load(Ordering::Relaxed) {
        let out = Command::new("sqlite3")
            .arg(&db)
            .arg("select count(*) from calls")
            .stdin(Stdio::null())
            .output()
            .expect("the sqlite3 CLI is not installed: run scripts/setup-peers.sh");
        runs += 1;
        if !out.status.success() {
            failures += 1;
            eprintln!("sqlite3: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        if !wal.exists() {
            wal_gone += 1;
        }
        std::thread::sleep(READER_PAUSE);
    }
    (runs, failures, wal_gone)
}

fn percentile(sorted: &[u32], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    f64::from(sorted[i]) / 1000.0
}

fn main() {
    let requests = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<u64>().ok())
        .or_else(|| std::env::var("MWS_LOAD_REQUESTS").ok()?.parse().ok())
        .unwrap_or(DEFAULT_REQUESTS);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let projects = dir.path().join("claude/projects/-home-dev-load");
    std::fs::create_dir_all(&projects).unwrap();
    let transcript = projects.join("00000000-0000-4000-8000-00000000load.jsonl");
    let config = dir.path().join("config.json");
    let text = serde_json::json!({
        "stateDir": state,
        "serverName": "toolbox",
        "transcripts": [{"type": "claude-code", "root": dir.path().join("claude/projects")}],
    });
    std::fs::write(&config, text.to_string()).unwrap();

    let mut serve = mws()
        .arg("--config")
        .arg(&config)
        .args(["serve", "--demo", "--port", "0", "--state-dir"])
        .arg(&state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = serve.id();
    let mut lines = BufReader::new(serve.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines.next().expect("mws serve exited").unwrap();
        if let Some(u) = line.split_whitespace().find(|w| w.starts_with("http://")) {
            break u.to_string();
        }
    };
    // Anything else mws says (warnings, errors) is shown, and counted.
    let warnings = Arc::new(AtomicU64::new(0));
    let w = warnings.clone();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            w.fetch_add(1, Ordering::Relaxed);
            eprintln!("[mws serve] {line}");
        }
    });

    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let writers = {
        let (c, t, s) = (config.clone(), transcript.clone(), stop.clone());
        std::thread::spawn(move || background_writers(c, t, s))
    };
    let readers = {
        let (db, s) = (state.join("state.db"), stop.clone());
        std::thread::spawn(move || sqlite3_readers(db, s))
    };
    let issued = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let (tallies, rss) = rt.block_on(async {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(CLIENTS)
            .build()
            .unwrap();
        // Warm the catalog so that the first calls do not all wait for the upstream's start.
        Client::new(http.clone(), url.clone(), Era::Modern, 0)
            .wait_ready()
            .await;
        let sampler = {
            let issued = issued.clone();
            tokio::spawn(async move {
                let mut samples = Vec::new();
                loop {
                    let done = issued.load(Ordering::Relaxed);
                    if let Some(kb) = rss_kb(pid) {
                        samples.push((done, kb));
                    }
                    if done >= requests {
                        return samples;
                    }
                    tokio::time::sleep(RSS_EVERY).await;
                }
            })
        };
        let mut tasks = Vec::new();
        for i in 0..CLIENTS {
            let era = if i % 2 == 0 { Era::Modern } else { Era::Legacy };
            let mut c = Client::new(http.clone(), url.clone(), era, i as u64);
            let issued = issued.clone();
            tasks.push(tokio::spawn(async move {
                let mut tally = Tally::default();
                c.open(&mut tally).await;
                loop {
                    let n = issued.fetch_add(1, Ordering::Relaxed);
                    if n >= requests {
                        return tally;
                    }
                    c.one(Kind::pick(n), &mut tally).await;
                }
            }));
        }
        let mut tallies = Vec::new();
        for t in tasks {
            tallies.push(t.await.unwrap());
        }
        (tallies, sampler.await.unwrap())
    });
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let (bg_runs, bg_failures) = writers.join().unwrap();
    let (reads, read_failures, wal_gone) = readers.join().unwrap();

    // SIGTERM: the proxy flushes its call log before exiting.
    Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    let status = serve.wait().unwrap();

    let mut all = Tally::default();
    for t in tallies {
        all.merge(t);
    }
    let conn = rusqlite::Connection::open(state.join("state.db")).unwrap();
    let rows: u64 = conn
        .query_row(
            "SELECT count(*) FROM calls WHERE source_key LIKE 'proxy:%'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .unwrap() as u64;
    let searches: u64 = conn
        .query_row("SELECT count(*) FROM searches", [], |r| r.get::<_, i64>(0))
        .unwrap() as u64;
    let mut lat = all.latencies_us.clone();
    lat.sort_unstable();
    println!(
        "load: {} requests by {CLIENTS} clients ({} modern, {} legacy) in {:.1} s = {:.0} req/s; mws exited {status}",
        all.requests,
        CLIENTS / 2,
        CLIENTS / 2,
        elapsed.as_secs_f64(),
        all.requests as f64 / elapsed.as_secs_f64()
    );
    println!(
        "mix: {} forwarded calls, {} searches, {} tools/list; legacy sessions opened: {}",
        all.calls, all.searches, all.lists, all.sessions
    );
    println!("failed requests: {}", all.failed);
    for f in all.failures.iter().take(5) {
        println!("  e.g. {f}");
    }
    println!(
        "calls rows: {rows} in the database for {} forwarded calls: lost {}",
        all.calls,
        all.calls.saturating_sub(rows)
    );
    println!("searches rows: {searches} for {} searches", all.searches);
    println!(
        "latency ms: p50 {:.2}, p90 {:.2}, p99 {:.2}, max {:.2}",
        percentile(&lat, 0.5),
        percentile(&lat, 0.9),
        percentile(&lat, 0.99),
        percentile(&lat, 1.0)
    );
    println!("background: {bg_runs} ingest/promote runs, {bg_failures} failed");
    println!(
        "sqlite3 CLI readers: {reads} runs, {read_failures} failed, WAL missing after {wal_gone}"
    );
    println!(
        "stderr lines from mws serve: {}",
        warnings.load(Ordering::Relaxed)
    );
    let samples: Vec<String> = rss
        .iter()
        .map(|(n, kb)| format!("{n}:{}", kb / 1024))
        .collect();
    println!("RSS MB by requests done: {}", samples.join(" "));
    let after: Vec<u64> = rss
        .iter()
        .filter(|(n, _)| *n as f64 >= requests as f64 * WARM_UP)
        .map(|(_, kb)| *kb)
        .collect();
    if let (Some(lo), Some(hi)) = (after.iter().min(), after.iter().max()) {
        println!(
            "RSS after warm-up: {} to {} MB, spread {:.1}% of the low",
            lo / 1024,
            hi / 1024,
            (*hi - *lo) as f64 * 100.0 / *lo as f64
        );
    }
}
