//! `mws report` on a database with 1,000,000 calls: builds the database once (cached under
//! target/, keyed by its parameters), then times the whole report (every query, the hit rate, the
//! token counts and the rendering) with criterion. Figures are in the README's performance section.
//!
//! `cargo bench --bench report`; `MWS_BENCH_CALLS=200000` for a smaller database.

#[path = "../tests/it/report/history.rs"]
#[allow(dead_code)]
mod history;

use std::path::PathBuf;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use mws::catalog::Catalog;
use mws::clock;
use mws::cmd::report::gather;
use mws::config::Config;
use mws::report::render::{self, Style};
use mws::report::{Tokenizer, TokenizerKind, UpstreamInfo, Window};
use mws::store::Store;

const NOW: &str = "2026-11-29T12:00:00Z";

fn catalog() -> Catalog {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogs");
    let mut tools = Vec::new();
    for f in ["github-npm", "filesystem", "memory", "time"] {
        let c = Catalog::load_file(&dir.join(format!("{f}.json"))).unwrap();
        tools.extend(c.tools().iter().cloned());
    }
    Catalog::new(tools)
}

/// The database with `calls` generated calls, built on first use.
fn database(calls: usize, cat: &Catalog) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-report");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("calls-{calls}-v1.db"));
    if path.exists() {
        return path;
    }
    let started = Instant::now();
    let h = history::generate(&history::Params {
        now: clock::parse(NOW).unwrap(),
        days: 45,
        calls,
        seed: 11,
        tools: cat.names().map(str::to_string).collect(),
        pins: vec!["read_text_file".into()],
    });
    let tmp = dir.join(format!("calls-{calls}-v1.db.tmp"));
    let _ = std::fs::remove_file(&tmp);
    let mut store = Store::open(&tmp).unwrap();
    store
        .seed_history(&h.calls, &h.searches, &h.runs, &h.working_set)
        .unwrap();
    store
        .conn()
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE); ANALYZE;")
        .unwrap();
    drop(store);
    std::fs::rename(&tmp, &path).unwrap();
    eprintln!(
        "built {} ({} calls, {} searches, {} promotion runs) in {:.1?}",
        path.display(),
        h.calls.len(),
        h.searches.len(),
        h.runs.len(),
        started.elapsed()
    );
    path
}

fn bench(c: &mut Criterion) {
    let calls = std::env::var("MWS_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let cat = catalog();
    let path = database(calls, &cat);
    let store = Store::open(&path).unwrap();
    let config = Config::default();
    let upstream = UpstreamInfo {
        target: "bench".into(),
        catalog_source: "catalog.json".into(),
        ..UpstreamInfo::default()
    };
    let now = clock::parse(NOW).unwrap();
    let tok = Tokenizer::load(TokenizerKind::O200k);
    tok.count("warm the tokenizer up");
    for window in ["30d", "7d"] {
        let w = Window::parse(window).unwrap();
        let mut group = c.benchmark_group(format!("report_{calls}_calls"));
        group.sample_size(10);
        group.bench_function(format!("window_{window}"), |b| {
            b.iter(|| {
                let r = gather(&store, &config, &cat, &upstream, now, &w, &tok).unwrap();
                render::text(&r, Style::default())
            })
        });
        group.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
