//! Three writers on one `state.db` at once — the proxy's call log (`LogSink`, its own thread and
//! connection), `mws ingest` processes reading Claude Code transcripts as they grow, and
//! `mws promote` processes — lose no row and never fail with "database is locked".

use std::time::Duration;

use std::io::Write;

use mws::call::{Call, Status};
use mws::store::{LogSink, SearchRecord, Store};
use serde_json::json;

use crate::cli::mws;

/// Rows each in-process writer adds. Raising them makes the test longer and the overlap surer.
const SINK_CALLS: usize = 3_000;
const SINK_SEARCHES: usize = 300;
const INGEST_CALLS: usize = 3_000;
/// Calls per transcript file; one `mws ingest` process runs after each file is written.
const INGEST_BATCH: usize = 300;
const PROMOTE_RUNS: usize = 6;

fn record(key: String, session: String, tool: &str, via: &str) -> Call {
    Call {
        ts: mws::clock::fmt(mws::clock::now()),
        session_id: session,
        tool: tool.into(),
        via: via.into(),
        status: Some(Status::Ok),
        ms: Some(1),
        client: Some("writer-test".into()),
        client_call_id: None,
        source_key: key,
        ..Call::default()
    }
}

#[test]
fn three_writers_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let db = state.join("state.db");
    let config = json!({
        "stateDir": state,
        "timeouts": {"listMs": 100},
        "transcripts": [{"type": "claude-code", "root": dir.path().join("projects")}],
    });
    std::fs::write(dir.path().join("c.json"), config.to_string()).unwrap();
    Store::open(&db).unwrap();

    let sink_db = db.clone();
    let sink = std::thread::spawn(move || {
        let sink = LogSink::spawn(&sink_db);
        for i in 0..SINK_CALLS {
            sink.call(record(
                format!("proxy:{i}"),
                format!("p{}", i % 7),
                "mail_send",
                "direct",
            ));
            if i % 10 == 0 && i / 10 < SINK_SEARCHES {
                sink.search(SearchRecord {
                    ts: mws::clock::fmt(mws::clock::now()),
                    session_id: None,
                    client: None,
                    mode: "ranked".into(),
                    result_count: 3,
                    reply_bytes: 100,
                });
            }
            if i % 200 == 0 {
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        assert!(
            sink.flush(Duration::from_secs(120)),
            "log sink did not flush"
        );
    });

    let projects = dir.path().join("projects");
    let ingest_dir = dir.path().to_path_buf();
    let ingest = std::thread::spawn(move || {
        let mut outs = Vec::new();
        for batch in 0..INGEST_CALLS / INGEST_BATCH {
            let file = projects.join(format!("-home-dev/s{batch}.jsonl"));
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            let mut w = std::fs::File::create(&file).unwrap();
            let ts = mws::clock::fmt(mws::clock::now());
            for j in 0..INGEST_BATCH {
                let n = batch * INGEST_BATCH + j;
                let sid = format!("t{}", n % 5);
                writeln!(w, r#"{{"type":"assistant","sessionId":"{sid}","timestamp":"{ts}","uuid":"a{n}","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"toolu_{n}","name":"mcp__toolbox__drive_get","input":{{}}}}]}}}}"#).unwrap();
                writeln!(w, r#"{{"type":"user","sessionId":"{sid}","timestamp":"{ts}","uuid":"u{n}","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"toolu_{n}","content":"ok"}}]}}}}"#).unwrap();
            }
            drop(w);
            outs.push(
                mws()
                    .current_dir(&ingest_dir)
                    .env("HOME", &ingest_dir)
                    .args(["ingest", "--json", "--config", "c.json"])
                    .output()
                    .unwrap(),
            );
        }
        outs
    });

    let promote = || {
        mws()
            .current_dir(dir.path())
            .env("HOME", dir.path())
            .args(["promote", "--no-ingest", "--json", "--config", "c.json"])
            .output()
            .unwrap()
    };
    let mut promotes: Vec<_> = (0..PROMOTE_RUNS).map(|_| promote()).collect();
    sink.join().expect("log sink writer");
    let ingests = ingest.join().expect("ingest writer");
    // One more run once all rows are in, to check what it sees.
    promotes.push(promote());

    for out in promotes.iter().chain(&ingests) {
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("locked"), "{err}");
        assert_eq!(out.status.code(), Some(0), "{err}");
    }
    let store = Store::open(&db).unwrap();
    let count = |sql: &str| -> i64 { store.conn().query_row(sql, [], |r| r.get(0)).unwrap() };
    assert_eq!(
        count("SELECT COUNT(*) FROM calls WHERE via = 'direct'"),
        SINK_CALLS as i64
    );
    assert_eq!(
        count("SELECT COUNT(*) FROM calls WHERE via = 'transcript:claude-code'"),
        INGEST_CALLS as i64
    );
    assert_eq!(count("SELECT COUNT(*) FROM searches"), SINK_SEARCHES as i64);
    assert_eq!(
        count("SELECT COUNT(*) FROM promotion_runs"),
        PROMOTE_RUNS as i64 + 1
    );
    // The last run saw both tools in many sessions.
    assert_eq!(count("SELECT COUNT(*) FROM working_set"), 2);
}
