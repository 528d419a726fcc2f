//! `mws report`: figures on databases built here (a hand-computed case and a generated history),
//! snapshots of the text and the JSON at a fixed `now` and width, token counts on real catalogs,
//! and the command end to end.

pub mod history;

use std::path::Path;

use mws::call::{Call, Status};
use mws::catalog::Catalog;
use mws::clock;
use mws::cmd::report::{gather, json};
use mws::config::Config;
use mws::report::render::{self, Style};
use mws::report::{Report, Tokenizer, TokenizerKind, UpstreamInfo, Window};
use mws::store::Store;
use mws::store::report::WorkingSetRow;
use mws::store::seed::SeedRun;
use serde_json::Value;

use crate::support::run::{config_in, json_run, mws_config, offline_config};

const NOW: &str = "2026-11-29T12:00:00Z";

pub fn fixture(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// The tools of several fixture catalogs, one after the other: a multi-backend upstream.
pub fn catalog(files: &[&str]) -> Catalog {
    let mut tools = Vec::new();
    for f in files {
        let c = Catalog::load_file(&fixture(&format!("catalogs/{f}.json"))).unwrap();
        tools.extend(c.tools().iter().cloned());
    }
    Catalog::new(tools)
}

fn unreachable_upstream() -> UpstreamInfo {
    UpstreamInfo {
        target: "http://127.0.0.1:4483/mcp".into(),
        reachable: false,
        era: None,
        protocol_version: None,
        server_name: None,
        server_version: None,
        error: Some("connection refused".into()),
        catalog_source: "catalog.json".into(),
        servers: Vec::new(),
    }
}

/// The report with `listing: "working-set"`: these catalogs are small enough that "auto" would
/// list them whole, and the report is about a working set.
fn report_of(store: &Store, catalog: &Catalog, window: &str, kind: TokenizerKind) -> Report {
    let config = Config {
        listing: mws::config::Listing::WorkingSet,
        ..Config::default()
    };
    gather(
        store,
        &config,
        catalog,
        &unreachable_upstream(),
        clock::parse(NOW).unwrap(),
        &Window::parse(window).unwrap(),
        &Tokenizer::load(kind),
    )
    .unwrap()
}

fn call(ts: &str, session: &str, tool: &str, via: &str, ok: bool, key: &str) -> Call {
    Call {
        ts: clock::normalize(ts).unwrap(),
        session_id: session.into(),
        tool: tool.into(),
        via: via.into(),
        status: Some(if ok { Status::Ok } else { Status::Error }),
        ms: Some(10),
        client: Some("claude-code".into()),
        client_call_id: None,
        source_key: key.into(),
        ..Call::default()
    }
}

fn run(ts: &str, rows: &[(&str, bool, bool)]) -> SeedRun {
    SeedRun {
        ts: clock::normalize(ts).unwrap(),
        transitions: rows
            .iter()
            .map(|(t, b, a)| (t.to_string(), *b, *a, "test".into(), "test".into()))
            .collect(),
    }
}

/// The working set changes mid-window; every call's fate is worked out by hand below.
#[test]
fn hit_rate_follows_the_transition_log() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("state.db")).unwrap();
    // Window: 7d before NOW = from 2026-11-22T12:00.
    // read_file: listed before run 1 (its `before`), demoted by run 2 on 11-25.
    // write_file: promoted by run 2 on 11-25.
    // list_directory: pinned, never in the log: listed from its working_set.since (11-01).
    // search_files: never listed.
    let runs = vec![
        run("2026-11-20T00:00:00Z", &[("read_file", true, true)]),
        run(
            "2026-11-25T00:00:00Z",
            &[("read_file", true, false), ("write_file", false, true)],
        ),
    ];
    let ws = vec![
        ws_row("list_directory", 1, "pin", "2026-11-01T00:00:00.000Z"),
        ws_row("write_file", 2, "promoted", "2026-11-25T00:00:00.000Z"),
    ];
    let calls = vec![
        // before the window: not counted at all
        call(
            "2026-11-21T00:00:00Z",
            "s1",
            "read_file",
            "direct",
            true,
            "k1",
        ),
        // read_file while listed: hit
        call(
            "2026-11-23T00:00:00Z",
            "s2",
            "read_file",
            "direct",
            true,
            "k2",
        ),
        // read_file after its demotion (an older listing): ok, not a hit
        call(
            "2026-11-26T00:00:00Z",
            "s3",
            "read_file",
            "direct",
            true,
            "k3",
        ),
        // write_file before its promotion, through call_tool: not a hit
        call(
            "2026-11-24T00:00:00Z",
            "s2",
            "write_file",
            "call_tool",
            true,
            "k4",
        ),
        // write_file after: hit (twice), and one failure that does not count
        call(
            "2026-11-26T00:00:00Z",
            "s3",
            "write_file",
            "direct",
            true,
            "k5",
        ),
        call(
            "2026-11-27T00:00:00Z",
            "s4",
            "write_file",
            "transcript:claude-code",
            true,
            "k6",
        ),
        call(
            "2026-11-27T00:00:01Z",
            "s4",
            "write_file",
            "direct",
            false,
            "k7",
        ),
        // the pin: hit; a pin called through call_tool: not a hit
        call(
            "2026-11-28T00:00:00Z",
            "s4",
            "list_directory",
            "direct",
            true,
            "k8",
        ),
        call(
            "2026-11-28T00:00:01Z",
            "s4",
            "list_directory",
            "call_tool",
            true,
            "k9",
        ),
        // never listed: not a hit
        call(
            "2026-11-28T00:00:02Z",
            "s4",
            "search_files",
            "call_tool",
            true,
            "k10",
        ),
        // in the future of NOW: not counted
        call(
            "2026-11-30T00:00:00Z",
            "s5",
            "write_file",
            "direct",
            true,
            "k11",
        ),
    ];
    store.seed_history(&calls, &[], &runs, &ws).unwrap();
    let r = report_of(
        &store,
        &catalog(&["filesystem"]),
        "7d",
        TokenizerKind::O200k,
    );
    let h = r.hit_rate;
    // ok calls in the window: k2 k3 k4 k5 k6 k8 k9 k10 = 8; hits: k2 k5 k6 k8 = 4;
    // via call_tool: k4 k9 k10 = 3; direct to a tool not listed then: k3 = 1.
    assert_eq!(
        (h.ok_calls, h.hits, h.via_call_tool, h.unlisted_direct),
        (8, 4, 3, 1)
    );
    assert_eq!(h.rate, Some(0.5));
    // Judged by the current set alone (list_directory, write_file), k2 would be a miss (read_file
    // is not listed now) and the rate 3/8: the transition log is what makes it 4/8.
    assert_eq!(r.calls.total, 9);
    assert_eq!(r.calls.errors, 1);
}

fn ws_row(tool: &str, position: i64, reason: &str, since: &str) -> WorkingSetRow {
    WorkingSetRow {
        tool: tool.into(),
        position,
        reason: reason.into(),
        since: since.into(),
        sessions: None,
        calls: None,
        last_success: None,
    }
}

/// A generated history: 45 days, weekly promotion runs, a tool the upstream no longer lists.
fn generated(calls: usize) -> (tempfile::TempDir, Store, Catalog, history::History) {
    let cat = catalog(&["github-npm", "filesystem", "memory"]);
    let mut tools: Vec<String> = cat.names().map(str::to_string).collect();
    tools.insert(5, "legacy_export".into());
    let h = history::generate(&history::Params {
        now: clock::parse(NOW).unwrap(),
        days: 45,
        calls,
        seed: 7,
        tools,
        pins: vec!["read_text_file".into()],
    });
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("state.db")).unwrap();
    store
        .seed_history(&h.calls, &h.searches, &h.runs, &h.working_set)
        .unwrap();
    (dir, store, cat, h)
}

#[test]
fn hit_rate_matches_the_generators_own_truth() {
    let (_dir, store, cat, h) = generated(20_000);
    for window in ["24h", "7d", "30d"] {
        let r = report_of(&store, &cat, window, TokenizerKind::O200k);
        let (ok, hits) = h.hits(&r.window.since, &r.window.until);
        assert_eq!(
            (r.hit_rate.ok_calls, r.hit_rate.hits),
            (ok, hits),
            "{window}"
        );
        assert!(hits > 0, "{window}");
        if window == "30d" {
            assert!(
                hits < ok,
                "30d has misses, so the check can fail: {hits}/{ok}"
            );
        }
    }
}

#[test]
fn snapshot_text() {
    let (_dir, store, cat, _) = generated(3_000);
    let r = report_of(&store, &cat, "30d", TokenizerKind::O200k);
    let text = render::text(
        &r,
        Style {
            width: Some(110),
            color: false,
        },
    );
    insta::assert_snapshot!("report_text", text);
}

#[test]
fn snapshot_json() {
    let (_dir, store, cat, _) = generated(3_000);
    let r = report_of(&store, &cat, "7d", TokenizerKind::Cl100k);
    let v: Value = serde_json::from_str(&json(&r)).unwrap();
    insta::assert_json_snapshot!("report_json", v);
}

#[test]
fn empty_database_and_no_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state.db")).unwrap();
    let mut up = unreachable_upstream();
    up.catalog_source = "none".into();
    let r = gather(
        &store,
        &Config::default(),
        &Catalog::default(),
        &up,
        clock::parse(NOW).unwrap(),
        &Window::parse("30d").unwrap(),
        &Tokenizer::load(TokenizerKind::O200k),
    )
    .unwrap();
    let text = render::text(
        &r,
        Style {
            width: Some(110),
            color: false,
        },
    );
    insta::assert_snapshot!("report_empty", text);
}

/// The counts are tiktoken's own: a fresh encoder (not the report's shared one) on the compact
/// JSON of each real catalog gives the same number, and the bytes are that JSON's length. Runs on
/// the copies in fixtures/catalogs, and on every catalog in ../shared/catalogs when it is there
/// (635 tools in 25 catalogs; the largest is 200 KB).
#[test]
fn token_counts_match_tiktoken_on_real_catalogs() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state.db")).unwrap();
    let own_o200k = tiktoken_rs::o200k_base().unwrap();
    let own_cl100k = tiktoken_rs::cl100k_base().unwrap();
    let mut files: Vec<std::path::PathBuf> = ["filesystem", "github-npm", "memory", "time"]
        .iter()
        .map(|n| fixture(&format!("catalogs/{n}.json")))
        .collect();
    // ../shared beside a clone (CI), or two levels up from a work tree.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = [
        root.join("../shared/catalogs"),
        root.join("../../shared/catalogs"),
    ]
    .into_iter()
    .find(|p| p.is_dir());
    if let Some(Ok(entries)) = shared.map(std::fs::read_dir) {
        let mut more: Vec<_> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                let n = p.file_name().unwrap().to_string_lossy();
                n.ends_with(".json") && !n.ends_with(".meta.json")
            })
            .collect();
        more.sort();
        files.extend(more);
    }
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        let compact =
            serde_json::to_string(&serde_json::from_str::<Value>(&text).unwrap()).unwrap();
        let cat = Catalog::load_file(path).unwrap();
        let name = path.display();
        for (kind, bpe) in [
            (TokenizerKind::O200k, &own_o200k),
            (TokenizerKind::Cl100k, &own_cl100k),
        ] {
            let r = report_of(&store, &cat, "30d", kind);
            let want = bpe.encode_with_special_tokens(&compact).len();
            assert_eq!(r.sizes.upstream.tokens, want, "{name} {kind}");
            assert_eq!(r.sizes.upstream.bytes, compact.len(), "{name}");
            assert_eq!(r.sizes.upstream.tools, cat.len(), "{name}");
            // Nothing promoted: only the meta-tools are listed (`call_read_only_tool` when the
            // catalog has a read-only tool, `run_script` in code mode, the default); saved is the
            // difference.
            let read_only = cat.tools().iter().any(|t| mws::policy::read_only(Some(t)));
            let meta = 3 + usize::from(read_only);
            assert_eq!(r.sizes.listed.tools, meta, "{name}");
            assert_eq!(
                r.sizes.saved.tools,
                cat.len().saturating_sub(meta),
                "{name}"
            );
            assert_eq!(
                r.sizes.saved.tokens,
                want.saturating_sub(r.sizes.listed.tokens)
            );
        }
        eprintln!(
            "{name}: {} tools, {} bytes, {} o200k tokens",
            cat.len(),
            compact.len(),
            own_o200k.encode_with_special_tokens(&compact).len()
        );
    }
}

/// The command itself: a config, a state dir with catalog.json, an upstream that is not there.
#[test]
fn command_prints_json_and_refuses_bad_flags() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = offline_config(dir.path(), "catalogs/time.json");
    let v = json_run(mws_config(&config).args(["report", "--json", "--since", "24h"]));
    assert_eq!(v["tokenizer"], "o200k_base");
    assert_eq!(v["window"]["label"], "24h");
    assert_eq!(v["upstream"]["catalogSource"], "catalog.json");
    assert_eq!(v["upstream"]["reachable"], false);
    assert_eq!(v["sizes"]["upstream"]["tools"], 2);
    assert_eq!(v["hitRate"]["rate"], Value::Null);

    let out = mws_config(&config).args(["report"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("upstream catalog"), "{text}");
    assert!(!text.contains('\x1b'), "colour on a pipe:\n{text}");

    // A broken database: exit 1, and the message points at doctor.
    let db = state.join("state.db");
    std::fs::write(&db, b"not a database\n".repeat(100)).unwrap();
    let out = mws_config(&config).arg("report").output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.lines()
            .last()
            .map(|l| format!("{l}\n"))
            .unwrap_or_default(),
        format!(
            "mws: cannot open the database (`mws doctor` says how to fix it): {}: file is not a database\n",
            db.display()
        )
    );

    // A config error exits 2 and names the field.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"stateDir": 3}"#).unwrap();
    let out = mws_config(&bad).arg("report").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with(&format!(
            "mws: {}:1:14: `stateDir`: expected path string, found integer `3`",
            bad.display()
        )),
        "{err}"
    );

    for (args, want) in [
        (
            vec!["report", "--since", "3x"],
            "mws: --since \"3x\": expected a number and a unit h, d or w, like 24h, 7d or 30d\n",
        ),
        (
            vec!["report", "--tokenizer", "gpt2"],
            "mws: unknown tokenizer \"gpt2\": expected o200k (default) or cl100k\n",
        ),
    ] {
        let out = mws_config(&config).args(&args).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&out.stderr), want, "{args:?}");
    }
}

/// The one-pass aggregate the report uses and the plain SQL aggregates agree on every figure.
#[test]
fn one_pass_aggregate_agrees_with_sql() {
    let (_dir, store, _cat, _) = generated(20_000);
    for window in ["24h", "7d", "30d", "60d"] {
        let span = Window::parse(window)
            .unwrap()
            .span(clock::parse(NOW).unwrap());
        let ws = store.report_working_set().unwrap();
        let intervals = mws::report::hit_rate::listed_intervals(
            &store.report_transitions().unwrap(),
            &ws,
            &[],
            &span,
        );
        let mut agg = mws::report::aggregate::Aggregate::new(&intervals);
        store.report_scan_calls(&span, |c| agg.add(c)).unwrap();
        let scan = agg.finish();
        let mut sql_tools = store.report_tool_usage(&span).unwrap();
        sql_tools.sort_by(|a, b| a.tool.cmp(&b.tool));
        assert_eq!(scan.tools, sql_tools, "{window}");
        assert_eq!(
            scan.clients,
            store.report_clients(&span).unwrap(),
            "{window}"
        );
        assert_eq!(
            scan.sessions,
            store.report_sessions(&span).unwrap(),
            "{window}"
        );
        assert_eq!(
            scan.hits,
            store.report_calls_in_intervals(&intervals, &span).unwrap(),
            "{window}"
        );
        assert!(scan.tools.len() > 5 && scan.hits > 0, "{window}");
    }
}

/// Against a live upstream (the built-in demo, a stdio child): the catalog is live and the era known.
#[test]
fn command_against_the_live_demo_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(
        dir.path(),
        serde_json::json!({
            "upstream": {"command": env!("CARGO_BIN_EXE_mws"), "args": ["demo-upstream"]},
            "transcripts": [],
        }),
    );
    let v = json_run(mws_config(&config).args(["report", "--json"]));
    assert_eq!(v["upstream"]["reachable"], true, "{v}");
    assert_eq!(v["upstream"]["catalogSource"], "live");
    assert_eq!(v["upstream"]["era"], "2026-07-28 (stateless)");
    let tools = v["sizes"]["upstream"]["tools"].as_u64().unwrap();
    assert!(tools >= 50, "{tools}");
    // The demo has read-only tools: the four meta-tools, `run_script` included.
    assert_eq!(v["sizes"]["listed"]["tools"], 4);
}
