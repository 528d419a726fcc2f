//! Search cost: index build and query latency on the 527-tool LiveMCP catalog and on a
//! 10,000-tool catalog made by replicating real catalogs (fixtures/catalogs, the 60-tool fixture,
//! LiveMCP) under renamed backends. Criterion measures build and a typical query; a plain loop
//! prints p50/p99 over a mixed query set, and p50 of the longest query `search_tools` accepts.
//! Targets (issue 3): p50 < 50 µs at 527 tools and < 1 ms at 10,000; build < 20 ms at 10,000.
//! Run: `cargo bench --bench search`.

use std::collections::HashSet;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use mws::catalog::Catalog;
use mws::search::{MAX_QUERY_BYTES, MAX_QUERY_WORDS, SearchIndex, SearchOptions};
use serde_json::{Value, json};

/// Tools in the large catalog.
const LARGE: usize = 10_000;
/// Timed rounds over the query set for the percentiles.
const ROUNDS: usize = 40;

fn load(rel: &str) -> Catalog {
    Catalog::load_file(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(rel),
    )
    .unwrap()
}

/// `server__tool` names, with `copy` appended to the server so every replica is its own backend.
fn renamed(server: &str, copy: usize, tool: &Value) -> Value {
    let mut t = tool.clone();
    let name = t["name"].as_str().unwrap_or("");
    let (srv, local) = name.split_once("__").unwrap_or((server, name));
    t["name"] = json!(format!("{srv}{copy}__{local}"));
    t
}

fn large_catalog() -> Catalog {
    let sources: Vec<(&str, Catalog)> = [
        ("live", "livemcp-catalog.json"),
        ("demo", "catalog.json"),
        ("slack", "catalogs/slack.json"),
        ("playwright", "catalogs/playwright.json"),
        ("filesystem", "catalogs/filesystem.json"),
        ("github", "catalogs/github-official.json"),
        ("gitlab", "catalogs/gitlab.json"),
    ]
    .into_iter()
    .map(|(s, f)| (s, load(f)))
    .collect();
    let mut tools = Vec::with_capacity(LARGE);
    let mut seen = HashSet::new();
    'outer: for copy in 0.. {
        for (server, cat) in &sources {
            for t in cat.tools() {
                if tools.len() == LARGE {
                    break 'outer;
                }
                let t = renamed(server, copy, t);
                if seen.insert(t["name"].as_str().unwrap_or("").to_string()) {
                    tools.push(t);
                }
            }
        }
    }
    Catalog::new(tools)
}

const QUERIES: &[&str] = &[
    "share a file",
    "send an email to the team",
    "get the current stock price",
    "search the web for news",
    "create a github issue",
    "take a screenshot of the page",
    "list merge requests",
    "who last changed this line",
    "schedule a meeting on friday",
    "read a file from disk",
    "convert time zone",
    "post a message to a slack channel",
    "what does https://example.com/blog/post say",
];

/// p50 and p99 of one query over the set, `ROUNDS` times.
fn percentiles(ix: &SearchIndex) -> (Duration, Duration) {
    let listed = HashSet::new();
    let mut times = Vec::with_capacity(ROUNDS * QUERIES.len());
    for _ in 0..ROUNDS {
        for q in QUERIES {
            let t = Instant::now();
            black_box(ix.search(q, &listed));
            times.push(t.elapsed());
        }
    }
    times.sort();
    (times[times.len() / 2], times[times.len() * 99 / 100])
}

/// A query at the bounds `search_tools` accepts: `MAX_QUERY_WORDS` words (real ones, some
/// repeated, with synonyms), within `MAX_QUERY_BYTES`.
fn longest_query() -> String {
    let words: Vec<&str> = QUERIES
        .iter()
        .flat_map(|q| q.split_whitespace())
        .cycle()
        .take(MAX_QUERY_WORDS)
        .collect();
    let q = words.join(" ");
    assert!(q.len() <= MAX_QUERY_BYTES);
    q
}

/// p50 of the longest accepted query, `ROUNDS` times.
fn longest_p50(ix: &SearchIndex) -> Duration {
    let (q, listed) = (longest_query(), HashSet::new());
    let mut times: Vec<Duration> = (0..ROUNDS)
        .map(|_| {
            let t = Instant::now();
            black_box(ix.search(&q, &listed));
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

/// Best of 5 builds, each timed until the index is there (its drop is not timed: a replaced index
/// is freed wherever its last reader lets go of it).
fn min_build(c: &Arc<Catalog>) -> Duration {
    (0..5)
        .map(|_| {
            let t = Instant::now();
            let index = black_box(SearchIndex::build_shared(
                c.clone(),
                &SearchOptions::default(),
            ));
            let took = t.elapsed();
            drop(index);
            took
        })
        .min()
        .unwrap()
}

fn bench(c: &mut Criterion) {
    let opts = SearchOptions::default();
    for (label, cat) in [
        ("527", load("livemcp-catalog.json")),
        ("10000", large_catalog()),
    ] {
        let cat = Arc::new(cat);
        let ix = SearchIndex::build_shared(cat.clone(), &opts);
        let (p50, p99) = percentiles(&ix);
        let longest = longest_p50(&ix);
        let build = min_build(&cat);
        let t = Instant::now();
        black_box(SearchIndex::build(&cat, &opts));
        let with_copy = t.elapsed();
        println!(
            "search bench: {} tools, {} backends: build {:.2} ms (index; {:.2} ms with the catalog copy of `build`), query p50 {:.1} µs, p99 {:.1} µs; longest accepted query ({MAX_QUERY_WORDS} words) p50 {:.1} µs",
            cat.len(),
            ix.backends().len(),
            build.as_secs_f64() * 1e3,
            with_copy.as_secs_f64() * 1e3,
            p50.as_secs_f64() * 1e6,
            p99.as_secs_f64() * 1e6,
            longest.as_secs_f64() * 1e6
        );
        c.bench_function(&format!("build {label}"), |b| {
            b.iter(|| SearchIndex::build_shared(cat.clone(), &opts))
        });
        let listed = HashSet::new();
        c.bench_function(&format!("query {label} \"share a file\""), |b| {
            b.iter(|| ix.search(black_box("share a file"), &listed))
        });
        c.bench_function(&format!("query {label} empty"), |b| {
            b.iter(|| ix.search("", &listed))
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).measurement_time(Duration::from_secs(3));
    targets = bench
}
criterion_main!(benches);
