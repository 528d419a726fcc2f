//! `mws report` on a database with 1,000,000 calls: builds the database once (cached under
//! target/, keyed by its parameters), then times the whole report (every query, the hit rate, the
//! token counts and the rendering) with criterion. Figures are in the README's performance section.
//!
//! `cargo bench --bench report`; `MWS_BENCH_CALLS=200000` for a smaller database.

#[path = "common/history_db.rs"]
mod history_db;

use criterion::{Criterion, criterion_group, criterion_main};
use mws::clock;
use mws::cmd::report::gather;
use mws::config::Config;
use mws::report::render::{self, Style};
use mws::report::{Tokenizer, TokenizerKind, UpstreamInfo, Window};

use history_db::NOW;

fn bench(c: &mut Criterion) {
    let (calls, cat, store) = history_db::open();
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
