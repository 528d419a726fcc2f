//! Tests of the ingest SQL: dedupe, pending calls, aborts, and one row per call when the proxy
//! logged it too (both orders).

use super::*;
use crate::store::log::LogEvent;

fn store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let s = Store::open(&dir.path().join("state.db")).unwrap();
    (dir, s)
}

fn row(id: &str, session: &str, ok: bool) -> Call {
    let ts = "2026-11-29T10:00:00.000Z";
    let mut c = Call::from_transcript("claude-code", id, session.into(), ts, "s", "echo".into());
    c.status = Some(if ok { Status::Ok } else { Status::Error });
    c
}

fn file(path: &str) -> Option<FileRow> {
    Some(FileRow {
        path: path.into(),
        adapter: "claude-code".into(),
        offset: 10,
        size: 12,
        mtime_ns: 1,
        head_hash: "h".into(),
        lines: 2,
        calls: 0,
        skipped: 0,
        ingested_at: "2026-11-29T10:00:00.000Z".into(),
    })
}

fn calls(s: &Store) -> Vec<(String, String, String, bool, Option<String>)> {
    s.conn
        .prepare("SELECT source_key, session_id, via, ok, error_kind FROM calls ORDER BY id")
        .unwrap()
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn proxy_call(id: &str) -> LogEvent {
    LogEvent::Call(Call {
        ts: "2026-11-29T10:00:00.100Z".into(),
        session_id: "proxy:claude-code:1".into(),
        tool: "echo".into(),
        via: "direct".into(),
        status: Some(Status::Ok),
        ms: Some(4),
        client: Some("claude-code".into()),
        client_call_id: Some(id.into()),
        source_key: format!("proxy:{id}"),
        ..Call::default()
    })
}

#[test]
fn new_then_duplicate() {
    let (_d, mut s) = store();
    let batch = FileBatch {
        file: file("/a.jsonl"),
        calls: vec![row("t1", "s1", true), row("t1", "s2", true)],
        ..FileBatch::default()
    };
    let c = s.write_ingest_batch(&batch).unwrap();
    assert_eq!((c.new, c.duplicates), (1, 1));
    // `calls` is the file's running total: what the batch says came before, plus what it added.
    assert_eq!(s.ingest_files().unwrap()["/a.jsonl"].calls, 1);
    let c = s.write_ingest_batch(&batch).unwrap();
    assert_eq!((c.new, c.duplicates), (0, 2));
    assert_eq!(calls(&s).len(), 1);
    let sessions: i64 = s
        .conn
        .query_row(
            "SELECT COUNT(*) FROM sessions WHERE source = 'transcript:claude-code'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sessions, 1);
}

#[test]
fn pending_then_resolved_keeps_first_sighting() {
    let (_d, mut s) = store();
    let first = FileBatch {
        file: file("/a.jsonl"),
        pending: vec![row("t1", "s1", false), row("t2", "s1", false)],
        ..FileBatch::default()
    };
    assert_eq!(s.write_ingest_batch(&first).unwrap().pending, 2);
    assert_eq!(
        s.pending_call_ids("claude-code").unwrap(),
        HashSet::from(["t1".to_string(), "t2".to_string()])
    );
    assert!(s.pending_call_ids("codex").unwrap().is_empty());
    // A later run finds t1's result; another file replays t2 with its result under another session.
    let later = FileBatch {
        file: file("/a.jsonl"),
        resolved: vec![Resolution {
            source_key: "claude-code:t1".into(),
            status: Status::Ok,
            tool: Some("get-sum".into()),
            ms: Some(7),
        }],
        ..FileBatch::default()
    };
    assert_eq!(s.write_ingest_batch(&later).unwrap().new, 1);
    let replay = FileBatch {
        file: file("/b.jsonl"),
        calls: vec![row("t2", "s9", true)],
        ..FileBatch::default()
    };
    assert_eq!(s.write_ingest_batch(&replay).unwrap().new, 1);
    let got = calls(&s);
    assert_eq!(got[0].0, "claude-code:t1");
    assert_eq!(got[1].1, "s1", "first sighting's session wins");
    assert!(s.pending_call_ids("claude-code").unwrap().is_empty());
}

#[test]
fn abort_ends_the_files_pending_calls() {
    let (_d, mut s) = store();
    let first = FileBatch {
        file: file("/r.jsonl"),
        pending: vec![row("c1", "s1", false)],
        ..FileBatch::default()
    };
    s.write_ingest_batch(&first).unwrap();
    let abort = FileBatch {
        file: file("/r.jsonl"),
        abort_pending: Some(Status::Aborted),
        ..FileBatch::default()
    };
    assert_eq!(s.write_ingest_batch(&abort).unwrap().new, 1);
    assert_eq!(calls(&s)[0].4.as_deref(), Some("aborted"));
}

#[test]
fn restart_drops_the_files_pending_rows() {
    let (_d, mut s) = store();
    let first = FileBatch {
        file: file("/r.jsonl"),
        pending: vec![row("c1", "s1", false)],
        ..FileBatch::default()
    };
    s.write_ingest_batch(&first).unwrap();
    let again = FileBatch {
        file: file("/r.jsonl"),
        restart: true,
        ..FileBatch::default()
    };
    s.write_ingest_batch(&again).unwrap();
    assert!(s.pending_call_ids("claude-code").unwrap().is_empty());
}

#[test]
fn proxy_then_transcript_is_one_row_in_the_transcript_session() {
    let (_d, mut s) = store();
    s.write_log(&[proxy_call("toolu_1")]).unwrap();
    let batch = FileBatch {
        file: file("/a.jsonl"),
        calls: vec![row("toolu_1", "sess-A", true)],
        ..FileBatch::default()
    };
    assert_eq!(s.write_ingest_batch(&batch).unwrap().merged, 1);
    assert_eq!(s.write_ingest_batch(&batch).unwrap().duplicates, 1);
    let got = calls(&s);
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].1.as_str(), got[0].2.as_str()), ("sess-A", "direct"));
    let sessions: Vec<(String, String)> = s
        .conn
        .prepare("SELECT id, source FROM sessions ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        sessions,
        [("sess-A".to_string(), "transcript:claude-code".to_string())]
    );
}

#[test]
fn transcript_then_proxy_is_one_row_in_the_transcript_session() {
    let (_d, mut s) = store();
    let batch = FileBatch {
        file: file("/a.jsonl"),
        calls: vec![row("toolu_1", "sess-A", true)],
        ..FileBatch::default()
    };
    s.write_ingest_batch(&batch).unwrap();
    s.write_log(&[proxy_call("toolu_1")]).unwrap();
    assert_eq!(s.write_ingest_batch(&batch).unwrap().duplicates, 1);
    let got = calls(&s);
    assert_eq!(got.len(), 1);
    assert_eq!((got[0].1.as_str(), got[0].2.as_str()), ("sess-A", "direct"));
}

#[test]
fn pending_call_the_proxy_logged_takes_the_transcript_session_at_once() {
    let (_d, mut s) = store();
    s.write_log(&[proxy_call("toolu_1")]).unwrap();
    let batch = FileBatch {
        file: file("/a.jsonl"),
        pending: vec![row("toolu_1", "sess-A", false)],
        ..FileBatch::default()
    };
    assert_eq!(s.write_ingest_batch(&batch).unwrap().merged, 1);
    let got = calls(&s);
    assert_eq!(
        (got.len(), got[0].1.as_str(), got[0].3),
        (1, "sess-A", true)
    );
    assert!(s.pending_call_ids("claude-code").unwrap().is_empty());
}

/// Every column of every row, and every session: what "the same single row" is compared on.
type Rows = (
    Vec<Vec<rusqlite::types::Value>>,
    Vec<Vec<rusqlite::types::Value>>,
);

fn everything(s: &Store) -> Rows {
    let all = |sql: &str| -> Vec<Vec<rusqlite::types::Value>> {
        let mut stmt = s.conn.prepare(sql).unwrap();
        let n = stmt.column_count();
        stmt.query_map([], |r| (0..n).map(|i| r.get(i)).collect())
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    (
        all(
            "SELECT ts, session_id, tool, via, ok, error_kind, ms, client, client_call_id,
                    source_key FROM calls ORDER BY id",
        ),
        all("SELECT * FROM sessions ORDER BY id"),
    )
}

/// Proxy then transcript, and transcript then proxy, leave the same one row (`call::merge`'s: the
/// proxy's outcome, time, tool and key, in the transcript's session) and the same sessions, even
/// when the two sightings disagree on the outcome, the tool name and the duration.
#[test]
fn both_arrival_orders_make_the_same_one_row() {
    let mut transcript = row("toolu_1", "sess-A", false);
    transcript.tool = "echo_2".into();
    transcript.ms = Some(9);
    let batch = FileBatch {
        file: file("/a.jsonl"),
        calls: vec![transcript],
        ..FileBatch::default()
    };
    let (_d1, mut proxy_first) = store();
    proxy_first.write_log(&[proxy_call("toolu_1")]).unwrap();
    assert_eq!(proxy_first.write_ingest_batch(&batch).unwrap().merged, 1);
    let (_d2, mut transcript_first) = store();
    transcript_first.write_ingest_batch(&batch).unwrap();
    transcript_first
        .write_log(&[proxy_call("toolu_1")])
        .unwrap();
    let got = everything(&proxy_first);
    assert_eq!(got, everything(&transcript_first));
    let want = calls(&proxy_first);
    assert_eq!(
        want,
        [(
            "proxy:toolu_1".to_string(),
            "sess-A".to_string(),
            "direct".to_string(),
            true,
            None
        )]
    );
    // The merged row is recognised on every later run, in either store.
    for s in [&mut proxy_first, &mut transcript_first] {
        assert_eq!(s.write_ingest_batch(&batch).unwrap().duplicates, 1);
        assert_eq!(everything(s), got);
    }
}
