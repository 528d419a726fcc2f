//! Promotion over 1,000,000 call rows (target: under 1 s): the usage SQL plus the rules, as
//! `mws promote` runs them, on a generated history (2,000 tools with a skewed popularity, 20,000
//! sessions over 90 days in 100 projects, 10% failures), user-wide and per project (each project's
//! sums and rules, and the projects each tool was used in). Prints criterion's timing.

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use common::Rng;
use criterion::{Criterion, criterion_group, criterion_main};
use mws::call::{Call, Status};
use mws::config::Promote;
use mws::promote::{self, Inputs};
use mws::store::{Store, log::insert_call};

/// Rows in the generated `calls` table.
const ROWS: usize = 1_000_000;
const TOOLS: u64 = 2_000;
const SESSIONS: u64 = 20_000;
const DAYS: i64 = 90;
/// Projects the sessions are spread over (a session works in one).
const PROJECTS: u64 = 100;

fn build(store: &Store, now: time::OffsetDateTime) {
    let started = Instant::now();
    let tx = rusqlite::Transaction::new_unchecked(
        store.conn(),
        rusqlite::TransactionBehavior::Immediate,
    )
    .unwrap();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for n in 0..ROWS {
        // Squaring a uniform draw skews popularity towards low tool numbers.
        let u = (rng.next() % 10_000) as f64 / 10_000.0;
        let tool = ((u * u) * TOOLS as f64) as u64;
        let session = rng.next() % SESSIONS;
        let secs = (rng.next() % (DAYS as u64 * 86_400)) as i64;
        let rec = Call {
            ts: mws::clock::fmt(now - time::Duration::seconds(secs)),
            session_id: format!("s{session}"),
            tool: format!("backend{}_tool_{tool}", tool % 12),
            via: "direct".into(),
            status: Some(if !rng.next().is_multiple_of(10) {
                Status::Ok
            } else {
                Status::Error
            }),
            ms: Some(10),
            client: Some("bench".into()),
            client_call_id: None,
            source_key: format!("proxy:{n}"),
            project: Some(format!("/home/dev/src/project-{}", session % PROJECTS)),
            ..Call::default()
        };
        insert_call(&tx, &rec).unwrap();
    }
    tx.commit().unwrap();
    eprintln!(
        "built {ROWS} call rows in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// CPU seconds this process has used (user + system), from /proc/self/stat (Linux, 100 Hz ticks).
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after = stat.rsplit_once(')')?.1;
    let f: Vec<&str> = after.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state.db")).unwrap();
    let now = mws::clock::now();
    build(&store, now);
    let rules = Promote::default();
    let before = Vec::new();
    let mut g = c.benchmark_group("promote");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("usage_and_rules_1M_rows", |b| {
        b.iter(|| {
            let usage = store
                .usage(&promote::cutoff(now, rules.window_days), &[])
                .unwrap();
            let out = promote::decide(&Inputs {
                now,
                rules: &rules,
                pins: &[],
                declared: &[],
                before: &before,
                usage: &usage,
                catalog: None,
                team: &[],
            });
            black_box(out.listing.len())
        })
    });
    g.bench_function("per_project_100_projects_1M_rows", |b| {
        b.iter(|| {
            let window = promote::cutoff(now, rules.window_days);
            let before = std::collections::BTreeMap::new();
            let usage = store.project_usage(&window, &before).unwrap();
            let out = promote::projects::decide_projects(now, &rules, &before, &usage, None);
            let per_tool = mws::store::projects::projects_per_tool(&usage, &out);
            black_box((out.len(), per_tool.len()))
        })
    });
    g.finish();
    // Wall time on a shared machine includes waiting for a core; CPU time is the work itself.
    let runs = 5;
    let (wall, cpu0) = (Instant::now(), cpu_seconds());
    for _ in 0..runs {
        let usage = store
            .usage(&promote::cutoff(now, rules.window_days), &[])
            .unwrap();
        black_box(usage.len());
    }
    if let (Some(a), Some(b)) = (cpu0, cpu_seconds()) {
        eprintln!(
            "promotion over {ROWS} rows: {:.3} s wall, {:.3} s CPU per run (mean of {runs})",
            wall.elapsed().as_secs_f64() / runs as f64,
            (b - a) / runs as f64
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
