//! `mws what-if` on a database with 1,000,000 calls over 45 days and the default 24-setting grid
//! (plus the config's own setting): loading every call, the replay and the token counts, timed
//! with criterion; and the config's own setting replayed with one working set for all and per
//! project (the sessions spread over about 20 projects). The database is the one `benches/report.rs` builds (same generator, same
//! parameters, same cache file under target/bench-report/).
//!
//! `cargo bench --bench whatif`; `MWS_BENCH_CALLS=200000` for a smaller database.

#[path = "common/history_db.rs"]
mod history_db;

use criterion::{Criterion, criterion_group, criterion_main};
use mws::clock;
use mws::cmd::whatif::{gather, gather_projects};
use mws::config::Config;
use mws::report::{Tokenizer, TokenizerKind, Window};
use mws::whatif::grid::{self, Axes};

use history_db::NOW;

fn bench(c: &mut Criterion) {
    let (calls, cat, store) = history_db::open();
    let config = Config {
        pins: vec!["read_text_file".into()],
        ..Config::default()
    };
    let settings = grid::settings(&config.promote, &Axes::default()).unwrap();
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
    group.bench_function("current_setting_with_and_without_projects", |b| {
        b.iter(|| gather_projects(&store, &config, Some(&cat), now, &w, &tok).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
