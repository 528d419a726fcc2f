//! A year of heavy use: `MWS_BENCH_CALLS` (default 5,000,000) generated calls over 365 days with
//! their searches and weekly promotion runs (the generator of `benches/report.rs`), built once and
//! cached under target/bench-retention/. Times one retention pass at the default `historyDays`
//! while 16 threads log calls through the proxy's `LogSink` (rows lost, the longest a flush
//! waited), the file's size before and after, and promotion, `mws report` (30 days), `mws what-if`
//! (the default grid) and a status-page refresh on the year and on what the horizon keeps. Prints
//! figures (docs/performance.md#retention), with the size of a fresh copy of what is kept for
//! comparison; asserts only that no logged row is lost.
//!
//! `cargo bench --bench retention`; `MWS_BENCH_CALLS=1000000` for a smaller history.

#[path = "common/history_db.rs"]
#[allow(dead_code)]
mod history_db;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use mws::call::{Call, Status};
use mws::catalog::Catalog;
use mws::clock;
use mws::config::Config;
use mws::report::{Tokenizer, TokenizerKind, UpstreamInfo, Window};
use mws::server::status::{Daily, REFRESH_SECS, gather as status_gather, page};
use mws::store::{LogSink, Store};
use mws::whatif::grid::{self, Axes};

use history_db::{NOW, Spec};

/// Days the generated history covers.
const DAYS: i64 = 365;
/// Threads logging calls during the pass, and the pause between two calls of one thread.
const LOGGERS: usize = 16;
const LOG_EVERY: Duration = Duration::from_millis(10);
/// How often the flush latency is sampled during the pass.
const FLUSH_EVERY: Duration = Duration::from_millis(50);
/// Runs of each timed command; the median is printed.
const RUNS: usize = 3;

fn calls() -> usize {
    std::env::var("MWS_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5_000_000)
}

/// The cached year of history with `calls` calls, built on first use.
fn year(calls: usize, cat: &Catalog) -> PathBuf {
    history_db::build(
        &Spec {
            dir: "bench-retention",
            name: format!("year-{calls}-v3"),
            days: DAYS,
            calls,
            seed: 17,
            sql: "",
        },
        cat,
    )
}

/// The database file and its WAL, in MB.
fn size_mb(db: &Path) -> f64 {
    let len = |p: PathBuf| std::fs::metadata(p).map_or(0, |m| m.len());
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    (len(db.to_path_buf()) + len(wal)) as f64 / 1_048_576.0
}

fn median(mut f: impl FnMut()) -> Duration {
    let mut t: Vec<Duration> = (0..RUNS)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed()
        })
        .collect();
    t.sort();
    t[RUNS / 2]
}

/// Median seconds of promotion, report, what-if and a status-page refresh on `db`.
fn timings(db: &Path, cat: &Catalog) -> [Duration; 4] {
    let store = Store::open(db).unwrap();
    let config = Config {
        pins: vec!["read_text_file".into()],
        ..Config::default()
    };
    let now = clock::parse(NOW).unwrap();
    let tok = Tokenizer::load(TokenizerKind::O200k);
    tok.count("warm the tokenizer up");
    let w = Window::parse("30d").unwrap();
    let upstream = UpstreamInfo {
        target: "bench".into(),
        reachable: true,
        catalog_source: "live".into(),
        ..UpstreamInfo::default()
    };
    let settings = grid::settings(&config.promote, &Axes::default()).unwrap();
    let promote = median(|| {
        mws::cmd::promote::decide_now(&config, &store, Some(cat), now, false).unwrap();
    });
    let report = median(|| {
        mws::cmd::report::gather(&store, &config, cat, &upstream, now, &w, &tok).unwrap();
    });
    let whatif = median(|| {
        mws::cmd::whatif::gather(&store, &config, Some(cat), now, &w, &tok, &settings).unwrap();
    });
    let serving = Store::open(db).unwrap();
    serving.trim_for_serving().unwrap();
    let mut daily = Daily::default();
    status_gather(&serving, &mut daily, &config, cat, &upstream, now).unwrap();
    let status = median(|| {
        let s = status_gather(&serving, &mut daily, &config, cat, &upstream, now).unwrap();
        page::html(&s, REFRESH_SECS);
    });
    [promote, report, whatif, status]
}

fn main() {
    let calls = calls();
    let cat = history_db::catalog();
    let cached = year(calls, &cat);
    let dir = cached.parent().unwrap();
    let db = dir.join("work.db");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    std::fs::copy(&cached, &db).unwrap();
    let before_mb = size_mb(&db);
    let before = timings(&db, &cat);

    let config = Config::default();
    let now = clock::parse(NOW).unwrap();
    let cutoff = mws::config::history::cutoff(config.history_days(), now).unwrap();
    let sink = LogSink::spawn(&db);
    let done = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let loggers: Vec<_> = (0..LOGGERS)
        .map(|t| {
            let (sink, done, sent) = (sink.clone(), done.clone(), sent.clone());
            std::thread::spawn(move || {
                let mut n = 0u64;
                while !done.load(Ordering::Acquire) {
                    sink.call(Call {
                        source_key: format!("proxy:bench:{t}:{n}"),
                        ts: clock::fmt(clock::now()),
                        session_id: format!("bench-{t}"),
                        tool: "read_text_file".into(),
                        via: "direct".into(),
                        client: Some("bench".into()),
                        status: Some(Status::Ok),
                        ms: Some(1),
                        ..Call::default()
                    });
                    n += 1;
                    sent.fetch_add(1, Ordering::AcqRel);
                    std::thread::sleep(LOG_EVERY);
                }
            })
        })
        .collect();
    let flusher = {
        let (sink, done) = (sink.clone(), done.clone());
        std::thread::spawn(move || {
            let mut longest = Duration::ZERO;
            while !done.load(Ordering::Acquire) {
                let s = Instant::now();
                assert!(sink.flush(Duration::from_secs(60)), "a flush timed out");
                longest = longest.max(s.elapsed());
                std::thread::sleep(FLUSH_EVERY);
            }
            longest
        })
    };
    // Let the loggers start before the pass.
    std::thread::sleep(Duration::from_millis(500));
    let mut store = Store::open(&db).unwrap();
    let started = Instant::now();
    let removed = store.retain(&cutoff).unwrap();
    let pass = started.elapsed();
    done.store(true, Ordering::Release);
    for l in loggers {
        l.join().unwrap();
    }
    let longest_flush = flusher.join().unwrap();
    assert!(sink.flush(Duration::from_secs(60)));
    let logged: i64 = store
        .conn()
        .query_row(
            "SELECT COUNT(*) FROM calls WHERE client = 'bench'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let sent = sent.load(Ordering::Acquire);
    assert_eq!(logged as u64, sent, "logged rows lost");
    store
        .conn()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let left: i64 = store
        .conn()
        .query_row("SELECT COUNT(*) FROM calls", [], |r| r.get(0))
        .unwrap();
    drop(store);
    let after_mb = size_mb(&db);
    let after = timings(&db, &cat);
    // The smallest file for what is kept: a fresh copy written by SQLite.
    let fresh = dir.join("fresh.db");
    let _ = std::fs::remove_file(&fresh);
    Store::open(&db)
        .unwrap()
        .conn()
        .execute("VACUUM INTO ?1", [fresh.to_str().unwrap()])
        .unwrap();
    let fresh_mb = size_mb(&fresh);
    let _ = std::fs::remove_file(&fresh);

    println!(
        "history: {calls} calls over {DAYS} days; historyDays {}",
        config.history_days()
    );
    println!(
        "retention pass: {pass:.1?}: removed {} calls, {} searches, {} sessions, {} runs; {} calls \
         left; {:.1} MB given back",
        removed.calls,
        removed.searches,
        removed.sessions,
        removed.promotion_runs,
        left,
        removed.bytes_returned as f64 / 1_048_576.0
    );
    println!(
        "during the pass: {sent} calls logged by {LOGGERS} threads, 0 lost; longest flush {longest_flush:.1?}"
    );
    println!(
        "file: {before_mb:.0} MB before, {after_mb:.0} MB after; a fresh copy of what is kept \
         (VACUUM INTO): {fresh_mb:.0} MB"
    );
    println!("| | year | after retention |");
    for (i, name) in ["promote", "report 30d", "what-if", "status refresh"]
        .iter()
        .enumerate()
    {
        println!("| {name} | {:.3?} | {:.3?} |", before[i], after[i]);
    }
}
