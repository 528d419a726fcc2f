//! The status page on a database with 1,000,000 calls (the history `benches/report.rs` builds,
//! same cache file): every figure the page shows and the HTML, timed with criterion. A page that
//! is open refreshes itself; each render reads the calls added since the last one, so the steady
//! state is `status_*_calls/render`. The first render after a start reads the whole 28-day window
//! once: it is printed, and timed as `first_render`.
//!
//! `cargo bench --bench status`; `MWS_BENCH_CALLS=200000` for a smaller database.

#[path = "common/history_db.rs"]
mod history_db;

use std::time::Instant;

use criterion::{Criterion, criterion_group, criterion_main};
use mws::clock;
use mws::config::Config;
use mws::report::UpstreamInfo;
use mws::server::status::{Daily, REFRESH_SECS, gather, page};

use history_db::NOW;

fn bench(c: &mut Criterion) {
    let (calls, cat, store) = history_db::open();
    store.trim_for_serving().unwrap();
    let config = Config {
        pins: vec!["read_text_file".into()],
        ..Config::default()
    };
    let upstream = UpstreamInfo {
        target: "bench".into(),
        reachable: true,
        catalog_source: "live".into(),
        ..UpstreamInfo::default()
    };
    let now = clock::parse(NOW).unwrap();
    let render = |daily: &mut Daily| {
        let s = gather(&store, daily, &config, &cat, &upstream, now).unwrap();
        page::html(&s, REFRESH_SECS)
    };
    let mut daily = Daily::default();
    let started = Instant::now();
    let html = render(&mut daily);
    eprintln!(
        "first render: {:.1?} ({} bytes of HTML)",
        started.elapsed(),
        html.len()
    );
    let mut group = c.benchmark_group(format!("status_{calls}_calls"));
    group.sample_size(20);
    group.bench_function("render", |b| b.iter(|| render(&mut daily)));
    group.sample_size(10);
    group.bench_function("first_render", |b| b.iter(|| render(&mut Daily::default())));
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
