//! The generated history the database benches share (`report`, `whatif`, `status`): a 49-tool
//! catalog from the fixtures and a database of `MWS_BENCH_CALLS` (default 1,000,000) generated
//! calls over 45 days, built once and cached under target/bench-report/, keyed by its parameters.

use std::path::PathBuf;
use std::time::Instant;

use mws::catalog::Catalog;
use mws::clock;
use mws::store::Store;

#[path = "../../tests/it/report/history.rs"]
#[allow(dead_code)]
pub mod history;

/// The history's `now`.
pub const NOW: &str = "2026-11-29T12:00:00Z";

/// Calls in the database: `MWS_BENCH_CALLS`, else 1,000,000.
pub fn calls() -> usize {
    std::env::var("MWS_BENCH_CALLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

/// The fixtures' github, filesystem, memory and time catalogs together.
pub fn catalog() -> Catalog {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalogs");
    let mut tools = Vec::new();
    for f in ["github-npm", "filesystem", "memory", "time"] {
        let c = Catalog::load_file(&dir.join(format!("{f}.json"))).unwrap();
        tools.extend(c.tools().iter().cloned());
    }
    Catalog::new(tools)
}

/// `calls()`, the catalog, and the database of that many calls (built on first use), opened.
pub fn open() -> (usize, Catalog, Store) {
    let calls = calls();
    let cat = catalog();
    let store = Store::open(&database(calls, &cat)).unwrap();
    (calls, cat, store)
}

/// The database with `calls` generated calls, built on first use.
pub fn database(calls: usize, cat: &Catalog) -> PathBuf {
    build(
        &Spec {
            dir: "bench-report",
            name: format!("calls-{calls}-v2"),
            days: 45,
            calls,
            seed: 11,
            // Each session works in one of about 20 projects, picked from its id's last two
            // characters.
            sql: "UPDATE calls SET project = '/home/dev/src/project-' ||
                    ((unicode(substr(session_id, -1)) * 7 + unicode(substr(session_id, -2, 1))) % 20);",
        },
        cat,
    )
}

/// A generated history database: where it is cached, its size and what is run on it once seeded.
pub struct Spec {
    /// Under target/.
    pub dir: &'static str,
    /// The file's name without `.db`: it must change with any of the fields below.
    pub name: String,
    pub days: i64,
    pub calls: usize,
    pub seed: u64,
    /// Run after seeding, before the checkpoint and `ANALYZE`.
    pub sql: &'static str,
}

/// The database `spec` describes, built on first use and cached.
pub fn build(spec: &Spec, cat: &Catalog) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join(spec.dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("{}.db", spec.name));
    if path.exists() {
        return path;
    }
    let started = Instant::now();
    let h = history::generate(&history::Params {
        now: clock::parse(NOW).unwrap(),
        days: spec.days,
        calls: spec.calls,
        seed: spec.seed,
        tools: cat.names().map(str::to_string).collect(),
        pins: vec!["read_text_file".into()],
    });
    let tmp = dir.join(format!("{}.db.tmp", spec.name));
    let _ = std::fs::remove_file(&tmp);
    let mut store = Store::open(&tmp).unwrap();
    store
        .seed_history(&h.calls, &h.searches, &h.runs, &h.working_set)
        .unwrap();
    store
        .conn()
        .execute_batch(&format!(
            "{} PRAGMA wal_checkpoint(TRUNCATE); ANALYZE;",
            spec.sql
        ))
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
