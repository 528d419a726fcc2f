//! `state.db` used by others while `mws serve --demo` writes to it: the `sqlite3` CLI and Python's
//! `sqlite3` reading it (the README's own query), `mws promote` replacing the working set. Every
//! call row survives the readers coming and going, the WAL stays in place, and the promotion
//! reaches the running proxy's `tools/list`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::run::mws_config;
use crate::support::serve::{Served, names, post_modern, post_modern_as, start_in};

/// `mws --config <dir>/config.json serve --demo --port 0 --state-dir <dir>/state`, once the demo
/// catalog is listed.
pub async fn serve_demo() -> Served {
    let dir = tempfile::tempdir().unwrap();
    let served = start_in(dir, &json!({}), &["--demo"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while listed(&served).await.len() <= 2 {
        assert!(Instant::now() < deadline, "demo catalog never arrived");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    served
}

/// `mws promote --no-ingest` from another process on the state dir `state`, pinning `pin`: a
/// config `promote.json` beside `state`, HOME its parent. Fails the test unless it succeeds.
pub fn promote_pinning(state: &Path, pin: &str) {
    let home = state.parent().unwrap();
    let config = home.join("promote.json");
    std::fs::write(
        &config,
        json!({"stateDir": state, "pins": [pin]}).to_string(),
    )
    .unwrap();
    let out = mws_config(&config)
        .args(["promote", "--no-ingest"])
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
}

pub async fn listed(served: &Served) -> Vec<String> {
    names(&post_modern(&served.url, 1, "tools/list", json!({})).await)
}

/// The tools a new session is listed (each try another stateless client): a session that has
/// listed keeps its listing through a promotion.
async fn listed_to_new(served: &Served, tries: &mut u32) -> Vec<String> {
    *tries += 1;
    let client = format!("probe-{tries}");
    names(&post_modern_as(&client, &served.url, 1, "tools/list", json!({})).await)
}

/// One successful `call_tool` of a demo tool.
pub async fn call_demo(served: &Served, id: i64) {
    let params = json!({"name": "call_tool",
                        "arguments": {"name": "calendar_list_events", "arguments": {}}});
    let r: Value = post_modern(&served.url, id, "tools/call", params).await;
    assert_ne!(r["result"]["isError"], true, "{r}");
    assert!(r["result"].is_object(), "{r}");
}

/// `sqlite3 <db> "select count(*) from calls"`, the real CLI.
fn cli_count(db: &Path) -> i64 {
    let out = Command::new("sqlite3")
        .arg(db)
        .arg("select count(*) from calls")
        .output()
        .expect("the sqlite3 CLI is not installed: run scripts/setup-peers.sh");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// The same count read by Python's `sqlite3` module.
fn python_count(db: &Path) -> i64 {
    let python = crate::support::peer(".venv/bin/python");
    let out = Command::new(python)
        .args([
            "-c",
            "import sqlite3, sys\n\
             c = sqlite3.connect(sys.argv[1])\n\
             print(c.execute('select count(*) from calls').fetchone()[0])\n\
             c.close()",
        ])
        .arg(db)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).trim().parse().unwrap()
}

/// Polls `count` (bounded) until it says `want`.
fn wait_count(db: &Path, want: i64, count: fn(&Path) -> i64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let n = count(db);
        if n == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{} holds {n} calls, expected {want}",
            db.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn assert_wal_in_place(db: &Path, when: &str) {
    let wal = format!("{}-wal", db.display());
    assert!(
        Path::new(&wal).exists(),
        "{wal} vanished {when} while mws serve was running"
    );
}

/// Before the fix, `Store::open` opened and closed `state.db` through its own file descriptor;
/// the close dropped every POSIX lock the process held on the file, SQLite's included, so the
/// CLI believed it was the last connection, checkpointed and deleted the WAL the proxy kept
/// writing to: the table held 3 rows, not 6, and the promotion never reached the proxy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite3_readers_and_a_promotion_while_serving_lose_nothing() {
    let mut served = serve_demo().await;
    let db = served.db();
    for id in 0..3 {
        call_demo(&served, 10 + id).await;
    }
    wait_count(&db, 3, cli_count);
    assert_wal_in_place(&db, "after the sqlite3 CLI read it");
    assert_eq!(python_count(&db), 3);
    assert_wal_in_place(&db, "after a Python reader");

    // `mws promote` from another process, pinning a tool the demo does not pin.
    promote_pinning(db.parent().unwrap(), "drive_read_file");
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut tries = 0;
    while !listed_to_new(&served, &mut tries)
        .await
        .iter()
        .any(|n| n == "drive_read_file")
    {
        assert!(
            Instant::now() < deadline,
            "the running proxy never listed the promoted pin: {:?}",
            listed_to_new(&served, &mut tries).await
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    for id in 0..3 {
        call_demo(&served, 20 + id).await;
    }
    wait_count(&db, 6, python_count);
    assert_eq!(cli_count(&db), 6);
    assert_wal_in_place(&db, "after more readers");
    served.stop();
    assert_eq!(served.calls().len(), 6);
}

/// Random bytes over the first 8 KB of the live `state.db`: calls keep succeeding, stderr says
/// once that the database is corrupt and rows may be lost, and `mws doctor` reports it. Before,
/// nothing was said anywhere.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupted_live_database_is_reported_on_stderr_and_by_doctor() {
    let mut served = serve_demo().await;
    let db = served.db();
    for id in 0..3 {
        call_demo(&served, 10 + id).await;
    }
    wait_count(&db, 3, python_count);
    // A fixed pseudo-random pattern (xorshift), written in place as `dd conv=notrunc` would.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let junk: Vec<u8> = (0..8192)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect();
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::OpenOptions::new().write(true).open(&db).unwrap();
        f.write_all_at(&junk, 0).unwrap();
        f.sync_all().unwrap();
    }
    for id in 0..3 {
        call_demo(&served, 20 + id).await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    let line = loop {
        let found = served
            .stderr
            .lock()
            .unwrap()
            .iter()
            .find(|l| l.contains("is corrupt"))
            .cloned();
        if let Some(l) = found {
            break l;
        }
        assert!(
            Instant::now() < deadline,
            "stderr never said the database is corrupt"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let p = db.display();
    assert!(line.contains("ERROR"), "{line}");
    assert!(
        line.contains(&format!("call log: {p} is corrupt (")) && line.contains(&format!(
            "call rows logged from now on may be lost, and some already there may be too; calls \
             keep working. Stop mws, copy {p}* aside, then run `mws doctor` for what to do"
        )),
        "{line}"
    );
    call_demo(&served, 30).await;
    served.stop();
    let reports = served
        .stderr
        .lock()
        .unwrap()
        .iter()
        .filter(|l| l.contains("is corrupt"))
        .count();
    assert_eq!(reports, 1, "said more than once");

    let config = served.dir.path().join("doctor.json");
    std::fs::write(
        &config,
        json!({"stateDir": db.parent().unwrap()}).to_string(),
    )
    .unwrap();
    let out = crate::support::serve::mws()
        .arg("--config")
        .arg(&config)
        .arg("doctor")
        .env("HOME", served.dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!(
            "{p} is corrupt: its header does not start with \"SQLite format 3\""
        )),
        "{text}"
    );
}
