//! How long a fresh process takes to have a catalog to serve when `catalog.json` holds 1,000
//! tools and the upstream is slow (it accepts connections and never answers): `connect` plus the
//! first `catalog()`. Issue 7's target for the whole proxy is 50 ms to the first `tools/list`;
//! this is the upstream side's share. Run: `cargo bench --bench upstream_startup`.

use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use mws::config::{Config, HttpUpstream, Upstream};
use serde_json::json;

/// Tools in the stored catalog; raising it shows how parse time grows with catalog size.
const TOOLS: usize = 1_000;

fn stored_catalog() -> String {
    let tools: Vec<_> = (0..TOOLS)
        .map(|i| {
            json!({
                "name": format!("backend{}_tool_{i}", i % 25),
                "description": format!("Does thing number {i} on the backend; a sentence or two of description text as real servers write them."),
                "inputSchema": {"type": "object", "properties": {
                    "id": {"type": "string", "description": "The id"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    "filter": {"type": "object", "properties": {"q": {"type": "string"}}}
                }, "required": ["id"]},
                "annotations": {"readOnlyHint": i % 2 == 0},
                "execution": {"taskSupport": "forbidden"}
            })
        })
        .collect();
    json!({ "tools": tools }).to_string()
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("catalog.json"), stored_catalog()).unwrap();
    // An upstream that accepts and never answers.
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    rt.spawn(async move {
        let mut held = Vec::new();
        while let Ok((sock, _)) = listener.accept().await {
            held.push(sock);
        }
    });
    let config = Config {
        upstream: Upstream::Http(HttpUpstream {
            url,
            headers: Default::default(),
            oauth: None,
        }),
        state_dir: dir.path().to_path_buf(),
        ..Config::default()
    };
    let mut g = c.benchmark_group("startup");
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("connect_and_first_catalog_1000_tools", |b| {
        b.iter(|| {
            rt.block_on(async {
                let up = mws::upstream::fleet::connect(&config);
                let snap = up.catalog().await;
                assert_eq!(snap.catalog.len(), TOOLS);
            })
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
