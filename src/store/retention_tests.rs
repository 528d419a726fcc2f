//! Retention over small generated histories: rows before the cutoff removed and summed per day,
//! every row at or after it kept exactly, runs a listing refers to kept, the file given back its
//! pages, and nothing the proxy logs during a pass lost.

use std::time::Duration;

use super::*;
use crate::call::{Call, Status};
use crate::store::{LogSink, SearchRecord};

const CUTOFF: &str = "2026-03-01T00:00:00.000Z";

fn call(n: usize, ts: &str, tool: &str, ok: bool) -> Call {
    Call {
        source_key: format!("proxy:t:{n}"),
        ts: ts.into(),
        session_id: format!("s-{}", &ts[..10]),
        tool: tool.into(),
        via: "direct".into(),
        client: Some("claude-code".into()),
        status: Some(if ok { Status::Ok } else { Status::Error }),
        ms: Some(5),
        ..Call::default()
    }
}

/// `per_day` calls a day from `first` for `days` days, on three tools, one in four failing.
fn history(first: time::OffsetDateTime, days: i64, per_day: usize) -> Vec<Call> {
    let mut out = Vec::new();
    for d in 0..days {
        for i in 0..per_day {
            let ts = first + time::Duration::days(d) + time::Duration::seconds(i as i64 * 7);
            let n = out.len();
            out.push(call(
                n,
                &crate::clock::fmt(ts),
                ["a", "b", "c"][i % 3],
                i % 4 != 0,
            ));
        }
    }
    out
}

fn seed(store: &mut Store, calls: &[Call]) {
    let tx = store.conn.transaction().unwrap();
    for c in calls {
        crate::store::log::insert_call(&tx, c).unwrap();
    }
    tx.commit().unwrap();
}

fn rows(store: &Store, sql: &str) -> Vec<Vec<String>> {
    let mut st = store.conn.prepare(sql).unwrap();
    let width = st.column_count();
    st.query_map([], |r| {
        (0..width)
            .map(|i| {
                Ok(match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => "NULL".to_string(),
                    rusqlite::types::ValueRef::Integer(n) => n.to_string(),
                    v => v.as_str().unwrap_or("?").to_string(),
                })
            })
            .collect::<rusqlite::Result<Vec<_>>>()
    })
    .unwrap()
    .collect::<Result<_, _>>()
    .unwrap()
}

fn start() -> time::OffsetDateTime {
    crate::clock::parse("2026-01-01T08:00:00.000Z").unwrap()
}

#[test]
fn calls_before_the_cutoff_are_summed_per_day_and_the_rest_kept_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("state.db")).unwrap();
    // 120 days of 300 calls: Jan and Feb (59 days) before the cutoff.
    seed(&mut store, &history(start(), 120, 300));
    let kept_before = rows(
        &store,
        "SELECT * FROM calls WHERE ts >= '2026-03-01' ORDER BY id",
    );
    let daily_before = rows(&store, "SELECT * FROM daily_calls ORDER BY day, tool");
    let last_before = store.report_last_success(&["a", "b", "c"]).unwrap();

    let removed = store.retain(CUTOFF).unwrap();

    assert_eq!(removed.calls, 59 * 300);
    assert_eq!(
        rows(&store, "SELECT COUNT(*) FROM calls WHERE ts < '2026-03-01'"),
        [["0"]]
    );
    assert_eq!(
        rows(&store, "SELECT * FROM calls ORDER BY id"),
        kept_before,
        "every row at or after the cutoff is kept as it was"
    );
    // The per-day view reads the sums where the rows are gone: the same figures.
    assert_eq!(
        rows(&store, "SELECT * FROM daily_calls ORDER BY day, tool"),
        daily_before
    );
    assert_eq!(
        rows(
            &store,
            "SELECT day, tool, calls, ok_calls, last_success FROM call_days
             WHERE day = '2026-01-01' ORDER BY tool"
        ),
        [
            ["2026-01-01", "a", "100", "75", "2026-01-01T08:34:39.000Z"],
            ["2026-01-01", "b", "100", "75", "2026-01-01T08:34:46.000Z"],
            ["2026-01-01", "c", "100", "75", "2026-01-01T08:34:53.000Z"],
        ]
    );
    assert_eq!(
        store.report_last_success(&["a", "b", "c"]).unwrap(),
        last_before
    );
    // Sessions of the removed days went with them; the kept days' sessions stay.
    assert_eq!(removed.sessions, 59);
    assert_eq!(rows(&store, "SELECT COUNT(*) FROM sessions"), [["61"]]);
    // A second pass finds nothing.
    assert!(store.retain(CUTOFF).unwrap().is_empty());
}

#[test]
fn a_tool_last_used_past_the_horizon_keeps_its_last_success() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("state.db")).unwrap();
    seed(
        &mut store,
        &[
            call(1, "2026-01-05T10:00:00.000Z", "old", true),
            call(2, "2026-01-06T10:00:00.000Z", "old", false),
            call(3, "2026-04-01T10:00:00.000Z", "new", true),
        ],
    );
    store.retain(CUTOFF).unwrap();
    let usage = store.usage("2026-03-15T00:00:00.000Z", &["old"]).unwrap();
    let old = usage.iter().find(|u| u.tool == "old").unwrap();
    assert_eq!(
        old.last_success.as_deref(),
        Some("2026-01-05T10:00:00.000Z")
    );
    assert_eq!(
        rows(&store, "SELECT name FROM never_called"),
        Vec::<Vec<String>>::new()
    );
}

#[test]
fn searches_scripts_and_unreferenced_runs_before_the_cutoff_go() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("state.db")).unwrap();
    for (ts, n) in [
        ("2026-02-01T00:00:00.000Z", 3),
        ("2026-03-02T00:00:00.000Z", 2),
    ] {
        for _ in 0..n {
            crate::store::log::insert_search(
                &store.conn,
                &SearchRecord {
                    ts: ts.into(),
                    session_id: None,
                    client: None,
                    mode: "ranked".into(),
                    result_count: 3,
                    reply_bytes: 900,
                },
            )
            .unwrap();
        }
    }
    store
        .conn
        .execute_batch(
            "INSERT INTO script_runs (ts, outcome, ms, calls, memory_bytes, output_bytes)
             VALUES ('2026-01-10T00:00:00.000Z', 'ok', 1, 1, 1, 1),
                    ('2026-03-10T00:00:00.000Z', 'ok', 1, 1, 1, 1);
             INSERT INTO promotion_runs (id, ts, catalog_source, listed, promoted, demoted, dropped)
             VALUES (1, '2026-01-02T04:00:00.000Z', 'live', 1, 1, 0, 0),
                    (2, '2026-01-03T04:00:00.000Z', 'live', 1, 0, 0, 0),
                    (3, '2026-03-05T04:00:00.000Z', 'live', 1, 0, 0, 0);
             INSERT INTO transitions (run_id, tool, before, after, action, reason)
             VALUES (1, 'a', 0, 1, 'promoted', 'r'), (1, 'b', 0, 1, 'promoted', 'r'),
                    (2, 'b', 1, 1, 'kept', 'r'), (3, 'b', 1, 1, 'kept', 'r');
             INSERT INTO working_set (tool, position, reason, since, run_id)
             VALUES ('a', 0, 'promoted', '2026-01-02T04:00:00.000Z', 1);",
        )
        .unwrap();
    let removed = store.retain(CUTOFF).unwrap();
    assert_eq!(
        (
            removed.searches,
            removed.script_runs,
            removed.promotion_runs
        ),
        (3, 1, 1)
    );
    assert_eq!(rows(&store, "SELECT COUNT(*) FROM searches"), [["2"]]);
    // Run 1 wrote a listed tool's row: kept with its decisions; run 2 went with its own.
    assert_eq!(
        rows(
            &store,
            "SELECT run_id, tool FROM transitions ORDER BY run_id, tool"
        ),
        [["1", "a"], ["1", "b"], ["3", "b"]]
    );
    assert_eq!(rows(&store, "SELECT COUNT(*) FROM working_set"), [["1"]]);
}

#[test]
fn a_new_file_gives_its_freed_pages_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let mut store = Store::open(&path).unwrap();
    assert!(store.returns_free_pages().unwrap());
    seed(&mut store, &history(start(), 90, 400));
    store
        .conn
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let before = std::fs::metadata(&path).unwrap().len();
    let removed = store.retain(CUTOFF).unwrap();
    store
        .conn
        .execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
        .unwrap();
    let after = std::fs::metadata(&path).unwrap().len();
    assert!(removed.bytes_returned > 0, "{removed:?}");
    assert_eq!(removed.bytes_free, 0);
    // Two thirds of the rows went; the file shrank by at least half.
    assert!(after * 2 < before, "{before} -> {after}");
}

#[test]
fn calls_the_proxy_logs_during_a_pass_are_all_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let mut store = Store::open(&path).unwrap();
    seed(&mut store, &history(start(), 59, 500));
    let log = LogSink::spawn(&path);
    let writer = {
        let log = log.clone();
        std::thread::spawn(move || {
            for n in 0..3_000usize {
                let ts = format!("2026-05-01T00:{:02}:{:02}.000Z", n / 60 % 60, n % 60);
                log.call(call(100_000 + n, &ts, "live", true));
                if n % 100 == 0 {
                    std::thread::sleep(Duration::from_millis(2));
                }
            }
        })
    };
    let removed = store.retain(CUTOFF).unwrap();
    writer.join().unwrap();
    assert!(log.flush(Duration::from_secs(30)));
    assert_eq!(removed.calls, 59 * 500);
    assert_eq!(
        rows(
            &store,
            "SELECT COUNT(*), COUNT(DISTINCT source_key) FROM calls"
        ),
        [["3000", "3000"]]
    );
}
