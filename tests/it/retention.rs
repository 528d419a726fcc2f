//! Retention through the real binaries: `mws promote` removes the history older than
//! `historyDays` from a state.db while 16 clients call through a running `mws serve`; no call
//! fails, every call is a row, every row inside the horizon is kept as it was, the removed calls
//! are summed per day, and a report over a longer window says what it covers.

use mws::call::{Call, Status};
use mws::store::Store;
use serde_json::json;

use crate::support::rmcp_upstream;
use crate::support::run::mws_config;
use crate::support::serve::{self, post_modern_as};

/// Clients calling at once, and the fewest calls each makes.
const CLIENTS: usize = 16;
const CALLS_EACH: usize = 60;
/// Seeded calls older than the horizon (90 days), and inside it.
const OLD: usize = 30_000;
const RECENT: usize = 2_000;

fn seeded(n: usize, days_ago: f64) -> Call {
    let ts = mws::clock::now() - time::Duration::seconds_f64(days_ago * 86_400.0);
    Call {
        source_key: format!("proxy:seed:{n}"),
        ts: mws::clock::fmt(ts),
        session_id: format!("seed-{}", n % 50),
        tool: format!("tool_{}", n % 7),
        via: "direct".into(),
        client: Some("seed".into()),
        status: Some(if n.is_multiple_of(5) {
            Status::Error
        } else {
            Status::Ok
        }),
        ms: Some(3),
        ..Call::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promote_removes_old_history_while_sixteen_clients_call() {
    let web = rmcp_upstream::start(false).await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = json!({
        "upstream": {"url": web.url},
        "stateDir": state,
        "transcripts": [],
        "historyDays": 90,
        "promote": {"schedule": "off"},
    });
    let config_path = dir.path().join("promote.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    {
        let mut store = Store::open(&state.join("state.db")).unwrap();
        let tx = store.conn_mut().transaction().unwrap();
        for n in 0..OLD {
            mws::store::log::insert_call(&tx, &seeded(n, 100.0 + (n % 200) as f64)).unwrap();
        }
        for n in OLD..OLD + RECENT {
            mws::store::log::insert_call(&tx, &seeded(n, 1.0 + (n % 80) as f64)).unwrap();
        }
        tx.commit().unwrap();
    }
    let dump = |db: &std::path::Path, sql: &str| -> Vec<String> {
        let store = Store::open(db).unwrap();
        let mut st = store.conn().prepare(sql).unwrap();
        st.query_map([], |r| r.get::<_, String>(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    let kept_sql = "SELECT id || ts || tool || session_id || ok || source_key FROM calls
                    WHERE client = 'seed' ORDER BY id";
    let db = state.join("state.db");
    let kept_before: Vec<String> = dump(&db, kept_sql)[OLD..].to_vec();

    let served = serve::start_in(dir, &config, &[]);
    let url = served.url.clone();
    // Each client calls until promote has ended (and at least CALLS_EACH times), so that the
    // whole retention pass runs under load.
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let url = url.clone();
            let done = done.clone();
            tokio::spawn(async move {
                let (mut made, mut failed) = (0usize, 0usize);
                while made < CALLS_EACH || !done.load(std::sync::atomic::Ordering::Acquire) {
                    let i = made;
                    made += 1;
                    let r = post_modern_as(
                        &format!("client-{c}"),
                        &url,
                        i as i64,
                        "tools/call",
                        json!({"name": "echo", "arguments": {"message": "hi"}}),
                    )
                    .await;
                    if r.get("error").is_some() || r["result"]["isError"] == json!(true) {
                        failed += 1;
                    }
                }
                (made, failed)
            })
        })
        .collect();
    let dir_config = config_path.clone();
    let promote = tokio::task::spawn_blocking(move || {
        mws_config(&config_path)
            .args(["promote", "--no-ingest"])
            .output()
            .unwrap()
    });
    let out = promote.await.unwrap();
    done.store(true, std::sync::atomic::Ordering::Release);
    let (mut made, mut failed) = (0, 0);
    for c in clients {
        let (m, f) = c.await.unwrap();
        made += m;
        failed += f;
    }
    let mut served = served;
    served.stop();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains(&format!("{OLD} call(s) (summed per day in call_days)")),
        "{stderr}"
    );
    assert_eq!(failed, 0);
    let db = served.db();
    assert_eq!(
        dump(&db, "SELECT COUNT(*) || '' FROM calls WHERE tool = 'echo'"),
        [made.to_string()]
    );
    assert_eq!(dump(&db, kept_sql), kept_before);
    assert_eq!(
        dump(
            &db,
            "SELECT SUM(calls) || ' ' || SUM(ok_calls) FROM call_days"
        ),
        [format!("{OLD} {}", OLD - OLD / 5)]
    );
    // A window past the horizon is said to cover the horizon only.
    let report = mws_config(&dir_config)
        .args(["report", "--since", "200d", "--json"])
        .output()
        .unwrap();
    assert_eq!(report.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&report.stderr).contains(
            "mws report: --since 200d reaches past historyDays (90): the figures cover the last \
             90 days"
        ),
        "{}",
        String::from_utf8_lossy(&report.stderr)
    );
}
