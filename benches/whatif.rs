//! `mws what-if` on a database with 1,000,000 calls over 45 days and the default 24-setting grid
//! (plus the config's own setting): loading every call, the replay and the token counts, timed
//! with criterion. The database is the one `benches/report.rs` builds (same generator, same
//! parameters, same cache file under target/bench-report/).
//!
//! `cargo bench --bench whatif`; `MWS_BENCH_CALLS=200000` for a smaller database.

#[path = "../tests/it/report/history.rs"]
#[allow(dead_code)]
mod history;

use std::path::PathBuf;
use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use mws::catalog::Catalog;
use mws::clock;
use mws::cmd::whatif::gather;
use mws::config::Config;
use mws::report::{Tokenizer, TokenizerKind, Window};
use mws::store::Store;
use mws::whatif::grid::{self, Axes};

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
    let config = Config {
        pins: vec!["read_text_file".into()],
        ..Config::default()
    };
    let settings = grid::settings(
        &config.promote,
        &Axes {
            min_sessions: None,
            min_calls: None,
            window_days: None,
            keep_days: None,
        },
    )
    .unwrap();
    let now = clock::parse(NOW).unwrap();
    let tok = Tokenizer::load(TokenizerKind::O200k);
    tok.count("warm the tokenizer up");
    let w = Window::parse("30d").unwrap();
    let figures = gather(&store, &config, Some(&cat), now, &w, &tok, &settings).unwrap();
    eprintln!(
        "{} settings; current: hit rate {:?}, {:?} tokens listed on average",
        figures.len(),
        figures[0].hit_rate,
        figures[0].avg_listed_tokens
    );
    let mut group = c.benchmark_group(format!("whatif_{calls}_calls"));
    group.sample_size(10);
    group.bench_function(format!("grid_{}", settings.len()), |b| {
        b.iter(|| gather(&store, &config, Some(&cat), now, &w, &tok, &settings).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
