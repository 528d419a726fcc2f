//! The state dir failing under a running proxy: calls keep succeeding and the lost log rows are
//! reported on stderr. Tests run as root, where permission bits do not stop writes, so "cannot
//! write" is made with means root cannot bypass: `state.db` is a directory (cannot be opened),
//! and a file-size limit (RLIMIT_FSIZE, what a full disk looks like to SQLite: a write that fails).

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Serve, faulty, ok_text};

fn config(dir: &Path, url: &str) -> Value {
    json!({
        "upstream": {"url": url},
        "stateDir": dir.join("state"),
        "timeouts": {"listMs": 5000, "callMs": 10000, "catalogTtlMs": 60000},
    })
}

/// Rows in `calls`, read without writing (None while the file is missing or unreadable).
pub fn calls_in(db: &Path) -> Option<i64> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .ok()?;
    conn.query_row("SELECT count(*) FROM calls", [], |r| r.get(0))
        .ok()
}

fn wait_calls(db: &Path, want: i64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while calls_in(db) != Some(want) {
        assert!(
            Instant::now() < deadline,
            "{} holds {:?} calls, expected {want}",
            db.display(),
            calls_in(db)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unopenable_database_costs_log_rows_not_calls() {
    let up = faulty::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state/state.db");
    std::fs::create_dir_all(&db).unwrap();
    let mws = Serve::start(dir.path(), &config(dir.path(), &up.url));
    for _ in 0..3 {
        assert_eq!(ok_text(&mws.call("ok", json!({})).await), "fine");
    }
    let line = mws.wait_stderr("call log: cannot open", Duration::from_secs(10));
    assert!(
        line.contains(&format!("call log: cannot open {}", db.display()))
            && line.contains("record(s) not saved"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_disk_costs_log_rows_not_calls() {
    let up = faulty::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state/state.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    drop(mws::store::Store::open(&db).unwrap());
    // The database may not grow past its size plus a few pages: its log fills up after a few
    // calls, as on a full disk. SIGXFSZ is ignored so that the write fails instead of killing.
    let limit = std::fs::metadata(&db).unwrap().len() + 12 * 4096;
    let limiter = format!(
        "import os, resource, signal, sys\n\
         signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n\
         resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit}))\n\
         os.execv(sys.argv[1], sys.argv[1:])"
    );
    let mws = Serve::start_with(
        dir.path(),
        &config(dir.path(), &up.url),
        &["python3", "-c", &limiter],
    );
    let mut failed = None;
    for i in 0..200 {
        assert_eq!(
            ok_text(&mws.call("ok", json!({})).await),
            "fine",
            "call {i}"
        );
        failed = mws
            .stderr
            .lock()
            .unwrap()
            .iter()
            .find(|l| l.contains("call log: write to"))
            .cloned();
        if failed.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let line = failed.expect("the call log never hit the size limit");
    assert!(
        line.contains(&format!("call log: write to {} failed:", db.display()))
            && line.contains("record(s) not saved"),
        "{line}"
    );
    // Still serving after the failure.
    assert_eq!(ok_text(&mws.call("ok", json!({})).await), "fine");
}

/// `rm state.db*` under a running proxy: calls keep succeeding; the rows logged before are gone
/// with the file, and the log writer notices (the path no longer names the file it has open),
/// says so on stderr and starts a new database for the calls after. Before that check, SQLite
/// went on writing into the unlinked file and every later row was lost without a word.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_database_is_recreated_for_later_calls() {
    let up = faulty::start().await;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state/state.db");
    let mws = Serve::start(dir.path(), &config(dir.path(), &up.url));
    for _ in 0..2 {
        assert_eq!(ok_text(&mws.call("ok", json!({})).await), "fine");
    }
    wait_calls(&db, 2);
    for suffix in ["", "-wal", "-shm"] {
        let p = format!("{}{suffix}", db.display());
        let _ = std::fs::remove_file(p);
    }
    for _ in 0..3 {
        assert_eq!(ok_text(&mws.call("ok", json!({})).await), "fine");
    }
    wait_calls(&db, 3);
    let line = mws.wait_stderr("was deleted or replaced", Duration::from_secs(5));
    assert!(
        line.contains(&format!(
            "call log: {} was deleted or replaced under the running proxy; writing to a new database there",
            db.display()
        )),
        "{line}"
    );
}
