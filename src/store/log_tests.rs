//! Tests of the call log: batching, session spans, the sink and its flush.

use super::*;
use crate::call::Status;

fn call(key: &str, call_id: Option<&str>) -> Call {
    Call {
        ts: "2026-11-29T10:00:00.000Z".into(),
        session_id: "proxy:claude-code:1".into(),
        tool: "mail_send".into(),
        via: "direct".into(),
        status: Some(Status::Ok),
        ms: Some(3),
        client: Some("claude-code".into()),
        client_call_id: call_id.map(Into::into),
        source_key: key.into(),
        ..Call::default()
    }
}

/// One batch, calls out of time order: each session row spans the batch's first to last call
/// and keeps the first client name seen, as a row-by-row upsert would.
#[test]
fn a_batch_upserts_each_session_once_with_its_span() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = Store::open(&dir.path().join("state.db")).unwrap();
    // (source key, session, ts, client)
    let rows = [
        ("p1", "s1", "2026-11-29T10:00:05.000Z", None),
        ("p2", "s1", "2026-11-29T10:00:01.000Z", Some("codex")),
        ("p3", "s2", "2026-11-29T10:00:02.000Z", Some("claude-code")),
        ("p4", "s1", "2026-11-29T10:00:09.000Z", Some("other")),
    ];
    let batch: Vec<LogEvent> = rows
        .iter()
        .map(|(key, session, ts, client)| {
            let mut c = call(key, None);
            c.session_id = (*session).into();
            c.ts = (*ts).into();
            c.client = client.map(Into::into);
            LogEvent::Call(c)
        })
        .collect();
    store.write_log(&batch).unwrap();
    // A later batch only moves last_seen forward.
    let mut late = call("p5", None);
    late.session_id = "s2".into();
    late.ts = "2026-11-29T11:00:00.000Z".into();
    store.write_log(&[LogEvent::Call(late)]).unwrap();
    let got: Vec<(String, Option<String>, String, String)> = store
        .conn
        .prepare("SELECT id, client, first_seen, last_seen FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want = [
        (
            "s1",
            Some("codex"),
            "2026-11-29T10:00:01.000Z",
            "2026-11-29T10:00:09.000Z",
        ),
        (
            "s2",
            Some("claude-code"),
            "2026-11-29T10:00:02.000Z",
            "2026-11-29T11:00:00.000Z",
        ),
    ];
    let want: Vec<_> = want
        .iter()
        .map(|(i, c, f, l)| {
            (
                i.to_string(),
                c.map(String::from),
                f.to_string(),
                l.to_string(),
            )
        })
        .collect();
    assert_eq!(got, want);
    let n: i64 = store
        .conn
        .query_row("SELECT COUNT(*) FROM calls", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 5);
}

#[test]
fn sink_writes_and_flushes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let sink = LogSink::spawn(&path);
    for i in 0..100 {
        sink.call(call(&format!("proxy:{i}"), None));
    }
    sink.search(SearchRecord {
        ts: "2026-11-29T10:00:00.000Z".into(),
        session_id: None,
        client: None,
        mode: "ranked".into(),
        result_count: 3,
        reply_bytes: 900,
    });
    assert!(sink.flush(Duration::from_secs(10)));
    let store = Store::open(&path).unwrap();
    let n: i64 = store
        .conn
        .query_row("SELECT COUNT(*) FROM calls", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 100);
    let n: i64 = store
        .conn
        .query_row("SELECT COUNT(*) FROM searches", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

/// Rows in `calls`, read from a connection of the test's own.
fn count_calls(path: &std::path::Path) -> i64 {
    Store::open(path)
        .ok()
        .and_then(|s| {
            s.conn
                .query_row("SELECT COUNT(*) FROM calls", [], |r| r.get(0))
                .ok()
        })
        .unwrap_or(0)
}

/// Polls (every 10 ms, 10 s at most) until `calls` holds `n` rows.
fn wait_for_rows(path: &std::path::Path, n: i64) -> i64 {
    let mut got = 0;
    for _ in 0..1000 {
        got = count_calls(path);
        if got >= n {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    got
}

#[test]
fn a_written_through_log_commits_a_lone_row_and_a_burst_without_a_flush() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let sink = LogSink::spawn_write_through(&path);
    sink.call(call("proxy:lone", None));
    assert_eq!(wait_for_rows(&path, 1), 1, "a lone row was never committed");
    // A burst right after the first commit: some rows wait out the linger, none is left behind.
    for i in 0..300 {
        sink.call(call(&format!("proxy:{i}"), None));
    }
    assert_eq!(
        wait_for_rows(&path, 301),
        301,
        "rows of a burst were left uncommitted"
    );
    // After a pause, a row is again committed without a flush.
    std::thread::sleep(THROUGH_LINGER * 2);
    sink.call(call("proxy:after", None));
    assert_eq!(wait_for_rows(&path, 302), 302);
}
