//! The team database's benchmark (prints a table; not a test), on a real PostgreSQL server started
//! here (Debian's package, `initdb` into a temp dir, as the tests do) beside SQLite, with the same
//! generated history in both: 1,000,000 calls from 20 users (2,000 tools with a skewed
//! popularity, 20,000 sessions over 90 days, 10% failures).
//!
//! - promotion's usage SQL: over the whole history in one state.db (SQLite), and over one user's
//!   rows of the team database (PostgreSQL, what `mws promote` reads with `store.postgres`);
//!   what-if's history read oldest first, on both; team priors and the team report's figures
//!   over every member's rows (targets: 2 s for promotion, 3 s for report and what-if);
//! - the writer: 8 shippers at once, each from its own state.db, into one database (target:
//!   5,000 rows/s);
//! - retention: one member's rows older than `RETAIN_DAYS` deleted in batches
//!   (`team::retention::delete_before`) while 8 shippers write into the same database; every
//!   row the cutoff keeps and every row shipped meanwhile must be there after;
//! - the proxy's latency per call with and without a team database (the write is off the call
//!   path, so the two should match), alternating rounds of calls to two `mws serve` in front of
//!   the built-in demo upstream.
//!
//! Run: `cargo bench --bench team`.

#[path = "../tests/it/support/postgres.rs"]
#[allow(dead_code)]
mod postgres;

mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

use common::Rng;
use mws::call::{Call, Status};
use mws::store::team::{ShipRow, ShipSession};
use mws::store::{Store, log::insert_call};
use mws::team::ship::Shipper;
use mws::team::{Target, queries};
use serde_json::json;

const USERS: usize = 20;
const ROWS: usize = 1_000_000;
const TOOLS: u64 = 2_000;
const SESSIONS: u64 = 20_000;
const DAYS: i64 = 90;
/// Runs of each query; the table shows the mean.
const RUNS: u32 = 5;
/// Shippers at once, and rows each ships.
const WRITERS: usize = 8;
const WRITER_ROWS: usize = 25_000;
/// The retention part's horizon: the member's rows older than this many days go.
const RETAIN_DAYS: i64 = 45;
/// Calls per `mws serve` per round, and rounds.
const CALLS: usize = 500;
const ROUNDS: usize = 4;

/// Call `n` of the history: (user, row).
fn row(rng: &mut Rng, n: usize, now: time::OffsetDateTime) -> (usize, ShipRow) {
    let u = (rng.next() % 10_000) as f64 / 10_000.0;
    let tool = ((u * u) * TOOLS as f64) as u64;
    let user = (rng.next() % USERS as u64) as usize;
    let session = rng.next() % SESSIONS;
    let secs = (rng.next() % (DAYS as u64 * 86_400)) as i64;
    (
        user,
        ShipRow {
            id: n as i64 + 1,
            ts: mws::clock::fmt(now - time::Duration::seconds(secs)),
            session_id: format!("s{session}"),
            tool: format!("backend{}_tool_{tool}", tool % 12),
            via: "direct".into(),
            ok: !rng.next().is_multiple_of(10),
            error_kind: None,
            ms: Some(10),
            client: Some("bench".into()),
            client_call_id: None,
            source_key: format!("proxy:{n}"),
        },
    )
}

fn as_call(r: &ShipRow) -> Call {
    Call {
        ts: r.ts.clone(),
        session_id: r.session_id.clone(),
        tool: r.tool.clone(),
        via: r.via.clone(),
        status: Some(if r.ok { Status::Ok } else { Status::Error }),
        ms: r.ms,
        client: r.client.clone(),
        source_key: r.source_key.clone(),
        ..Call::default()
    }
}

/// The mean wall time of `RUNS` runs of `f`.
fn mean(mut f: impl FnMut()) -> Duration {
    f(); // warm caches, as a nightly run finds them after the day's calls
    let start = Instant::now();
    for _ in 0..RUNS {
        f();
    }
    start.elapsed() / RUNS
}

fn main() {
    let Some(pg) = postgres::Postgres::start() else {
        eprintln!("PostgreSQL is not installed: apt-get install postgresql");
        return;
    };
    let now = mws::clock::now();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("state.db")).unwrap();
    let mut client = pg.client();
    Target::parse(&pg.url(), &|_| None)
        .unwrap()
        .connect()
        .unwrap();

    // The same history into both engines.
    let started = Instant::now();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut per_user: Vec<Vec<ShipRow>> = vec![Vec::new(); USERS];
    let tx = rusqlite::Transaction::new_unchecked(
        store.conn(),
        rusqlite::TransactionBehavior::Immediate,
    )
    .unwrap();
    let mut loaded = 0;
    let mut pg_time = Duration::ZERO;
    for n in 0..ROWS {
        let (user, r) = row(&mut rng, n, now);
        insert_call(&tx, &as_call(&r)).unwrap();
        per_user[user].push(r);
        if per_user[user].len() == 10_000 || n == ROWS - 1 {
            for (u, rows) in per_user.iter_mut().enumerate() {
                if rows.len() < 10_000 && n != ROWS - 1 {
                    continue;
                }
                let t = Instant::now();
                let sessions: Vec<ShipSession> = Vec::new();
                loaded += queries::ship(
                    &mut client,
                    &format!("user-{u:02}"),
                    true,
                    "bench",
                    rows,
                    &sessions,
                )
                .unwrap();
                pg_time += t.elapsed();
                rows.clear();
            }
        }
    }
    tx.commit().unwrap();
    assert_eq!(loaded as usize, ROWS);
    client.batch_execute("VACUUM ANALYZE calls").unwrap();
    eprintln!(
        "built {ROWS} rows in both engines in {:.1} s ({:.0} rows/s into PostgreSQL from one writer)",
        started.elapsed().as_secs_f64(),
        ROWS as f64 / pg_time.as_secs_f64()
    );

    let window = mws::promote::cutoff(now, 30);
    let since = mws::clock::fmt(now - time::Duration::days(30));
    let until = mws::clock::fmt(now);
    let sqlite_usage = mean(|| {
        black_box(store.usage(&window, &[]).unwrap().len());
    });
    let pg_usage = mean(|| {
        black_box(
            queries::usage(&mut client, "user-07", &window, &[])
                .unwrap()
                .len(),
        );
    });
    let pg_priors = mean(|| {
        black_box(
            queries::team_priors(&mut client, "user-07", &window, 3)
                .unwrap()
                .len(),
        );
    });
    let sqlite_whatif = mean(|| {
        let mut n = 0usize;
        store.whatif_scan_calls(|_, _, _, _| n += 1).unwrap();
        black_box(n);
    });
    let pg_whatif = mean(|| {
        let mut n = 0usize;
        queries::scan_calls(&mut client, "user-07", |_, _, _, _| n += 1).unwrap();
        black_box(n);
    });
    let pg_report = mean(|| {
        black_box(
            queries::team_rows(&mut client, &since, &until)
                .unwrap()
                .tools
                .len(),
        );
    });

    // 8 shippers at once into a fresh database.
    pg.sql("postgres", "CREATE DATABASE writers OWNER mws");
    let url = pg.url_as("mws", "mws-pw", "writers");
    Target::parse(&url, &|_| None).unwrap().connect().unwrap();
    let stores = shippers(&url, "writer", now);
    let start = Instant::now();
    std::thread::scope(|s| {
        for (d, shipper) in &stores {
            s.spawn(move || {
                let store = Store::open(&d.path().join("state.db")).unwrap();
                let n = shipper.ship_pending(&store, &mut None).unwrap();
                assert_eq!(n as usize, WRITER_ROWS);
            });
        }
    });
    let shipped = start.elapsed();
    let rate = (WRITERS * WRITER_ROWS) as f64 / shipped.as_secs_f64();

    let kept = retention(&pg, &mut client, now);

    let (plain, team) = latency(&pg);

    let s = |d: Duration| format!("{:.3} s", d.as_secs_f64());
    println!("| what | engine | rows read | mean of {RUNS} |");
    println!("|---|---|---|---|");
    println!(
        "| promotion's usage SQL (30d window) | SQLite, one state.db | {ROWS} | {} |",
        s(sqlite_usage)
    );
    println!(
        "| promotion's usage SQL, one member | PostgreSQL | {} of {ROWS} | {} |",
        ROWS / USERS,
        s(pg_usage)
    );
    println!(
        "| team priors (promote.team: 3) | PostgreSQL | {ROWS} | {} |",
        s(pg_priors)
    );
    println!(
        "| what-if's history, oldest first | SQLite, one state.db | {ROWS} | {} |",
        s(sqlite_whatif)
    );
    println!(
        "| what-if's history, one member | PostgreSQL | {} of {ROWS} | {} |",
        ROWS / USERS,
        s(pg_whatif)
    );
    println!(
        "| team report figures (30d) | PostgreSQL | {ROWS} | {} |",
        s(pg_report)
    );
    println!();
    println!(
        "writer: {WRITERS} shippers x {WRITER_ROWS} rows into one database in {:.2} s: {rate:.0} rows/s",
        shipped.as_secs_f64()
    );
    println!(
        "retention: {} of user-07's calls older than {RETAIN_DAYS} days deleted in {:.2} s while {WRITERS} shippers wrote {} rows ({:.0} rows/s); kept {} of {}, shipped {} of {}",
        kept.deleted,
        kept.pass.as_secs_f64(),
        WRITERS * WRITER_ROWS,
        (WRITERS * WRITER_ROWS) as f64 / kept.shipping.as_secs_f64(),
        kept.kept_after,
        kept.kept_before,
        kept.shipped,
        WRITERS * WRITER_ROWS
    );
    println!();
    println!("| mws serve | p50 | p99 | calls |");
    println!("|---|---|---|---|");
    for (name, mut v) in [("state.db only", plain), ("with store.postgres", team)] {
        v.sort();
        println!(
            "| {name} | {} | {} | {} |",
            common::ms(common::quantile(&v, 0.5)),
            common::ms(common::quantile(&v, 0.99)),
            v.len()
        );
    }
}

/// `WRITERS` state.dbs of `WRITER_ROWS` generated calls each, with a shipper to `url` as
/// `{user}-{w}`.
fn shippers(url: &str, user: &str, now: time::OffsetDateTime) -> Vec<(tempfile::TempDir, Shipper)> {
    (0..WRITERS)
        .map(|w| {
            let d = tempfile::tempdir().unwrap();
            let s = Store::open(&d.path().join("state.db")).unwrap();
            let tx = rusqlite::Transaction::new_unchecked(
                s.conn(),
                rusqlite::TransactionBehavior::Immediate,
            )
            .unwrap();
            let mut rng = Rng(w as u64 + 1);
            for n in 0..WRITER_ROWS {
                insert_call(&tx, &as_call(&row(&mut rng, n, now).1)).unwrap();
            }
            tx.commit().unwrap();
            let shipper = Shipper {
                target: Target::parse(url, &|_| None).unwrap(),
                user: format!("{user}-{w}"),
                in_team_figures: true,
                spool_max_rows: 1_000_000,
            };
            (d, shipper)
        })
        .collect()
}

/// What the retention part saw.
struct Retained {
    deleted: u64,
    pass: Duration,
    shipping: Duration,
    kept_before: i64,
    kept_after: i64,
    shipped: i64,
}

/// One retention pass over user-07's rows of the loaded history while `WRITERS` shippers write
/// into the same database; asserts that nothing the cutoff keeps, and nothing shipped, is lost.
fn retention(
    pg: &postgres::Postgres,
    client: &mut ::postgres::Client,
    now: time::OffsetDateTime,
) -> Retained {
    let cutoff = mws::clock::fmt(now - time::Duration::days(RETAIN_DAYS));
    let count = |c: &mut ::postgres::Client, sql: &str| -> i64 {
        c.query_one(sql, &[&cutoff]).unwrap().get(0)
    };
    const OLD: &str = "SELECT COUNT(*) FROM calls WHERE user_name = 'user-07' AND ts < $1";
    const KEPT: &str = "SELECT COUNT(*) FROM calls WHERE user_name = 'user-07' AND ts >= $1";
    const BUSY: &str = "SELECT COUNT(*) FROM calls WHERE user_name LIKE 'busy-%'";
    let (old, kept_before) = (count(client, OLD), count(client, KEPT));
    let stores = shippers(&pg.url(), "busy", now);
    let (deleted, pass, shipping) = std::thread::scope(|s| {
        let started = Instant::now();
        let stores = &stores;
        let writers = s.spawn(move || {
            std::thread::scope(|w| {
                for (d, shipper) in stores {
                    w.spawn(move || {
                        let store = Store::open(&d.path().join("state.db")).unwrap();
                        shipper.ship_pending(&store, &mut None).unwrap();
                    });
                }
            });
            started.elapsed()
        });
        let t = Instant::now();
        let deleted = mws::team::retention::delete_before(client, "user-07", &cutoff).unwrap();
        let pass = t.elapsed();
        (deleted, pass, writers.join().unwrap())
    });
    let kept_after = count(client, KEPT);
    let shipped: i64 = client.query_one(BUSY, &[]).unwrap().get(0);
    assert_eq!(deleted as i64, old, "every call older than the cutoff went");
    assert_eq!(count(client, OLD), 0);
    assert_eq!(kept_after, kept_before, "no call the cutoff keeps was lost");
    assert_eq!(
        shipped as usize,
        WRITERS * WRITER_ROWS,
        "no shipped call was lost"
    );
    Retained {
        deleted,
        pass,
        shipping,
        kept_before,
        kept_after,
        shipped,
    }
}

/// Per-call latency of two `mws serve` in front of the demo upstream, one shipping to the team
/// database, in alternating rounds.
fn latency(pg: &postgres::Postgres) -> (Vec<Duration>, Vec<Duration>) {
    let upstream = json!({"command": common::mws_bin(), "args": ["demo-upstream"]});
    let base = json!({"upstream": upstream, "transcripts": [], "promote": {"schedule": "off"}});
    let mut with_team = base.clone();
    with_team["store"] = json!({"postgres": pg.url()});
    with_team["user"] = json!("bench");
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let ports = [common::free_port(), common::free_port()];
    let _children = [
        common::spawn_serve(dirs[0].path(), base, ports[0]),
        common::spawn_serve(dirs[1].path(), with_team, ports[1]),
    ];
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let http = reqwest::Client::new();
        let urls = ports.map(|p| format!("http://127.0.0.1:{p}/mcp"));
        for url in &urls {
            let deadline = Instant::now() + Duration::from_secs(30);
            while http.get(url).send().await.is_err() {
                assert!(Instant::now() < deadline, "mws serve did not start");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        let mut out = [Vec::new(), Vec::new()];
        let mut id = 0;
        for _ in 0..ROUNDS {
            for (i, url) in urls.iter().enumerate() {
                for _ in 0..CALLS {
                    id += 1;
                    let body = common::request(
                        id,
                        "tools/call",
                        json!({"name": "mail_list_messages", "arguments": {}}),
                    );
                    let t = Instant::now();
                    let r = http
                        .post(url)
                        .header("content-type", "application/json")
                        .header("accept", "application/json, text/event-stream")
                        .header("mcp-protocol-version", "2026-07-28")
                        .header("mcp-method", "tools/call")
                        .header("mcp-name", "mail_list_messages")
                        .body(body.to_string())
                        .send()
                        .await
                        .unwrap();
                    assert!(r.status().is_success());
                    r.bytes().await.unwrap();
                    out[i].push(t.elapsed());
                }
            }
        }
        let [a, b] = out;
        (a, b)
    })
}
