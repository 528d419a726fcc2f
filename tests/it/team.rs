//! A team's shared history on a real PostgreSQL server (`support::postgres`, Debian's package):
//! the same history sums the same on both engines, every member's `mws serve` ships every row
//! once through an outage and a restart, a new member's first `mws promote` lists the team's
//! tools, `mws report --team` matches figures computed by hand, and each bad URL, password,
//! right, schema and outage gets a message that says what to do.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use mws::call::{Call, Status};
use mws::promote::{self, Inputs, Usage};
use mws::store::{LogEvent, Store};
use mws::team::ship::Shipper;
use mws::team::{Target, queries};
use serde_json::{Value, json};

use crate::support::postgres::Postgres;
use crate::support::run::{config_in, json_run, mws_config};
use crate::support::serve::mws;

/// A fixed `now`, so that windows and cutoffs are the same on every run.
const NOW: &str = "2026-06-01T12:00:00.000Z";

fn now() -> time::OffsetDateTime {
    mws::clock::parse(NOW).unwrap()
}

/// A small deterministic generator (no randomness crate needed for a fixed history).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

/// `count` calls of one user over the 60 days before `NOW`: 15 tools used unevenly, 40
/// sessions, one call in six failed.
fn history(seed: u64, count: usize, user: &str) -> Vec<Call> {
    let mut g = Lcg(seed);
    let now = now();
    (0..count)
        .map(|n| {
            let tool = g.next(15);
            let tool = g.next(tool + 1); // low numbers more often
            let minutes = g.next(60 * 24 * 60) as i64;
            let status = if g.next(6) == 0 {
                Status::Error
            } else {
                Status::Ok
            };
            Call {
                ts: mws::clock::fmt(now - time::Duration::minutes(minutes)),
                session_id: format!("{user}-s{}", g.next(40)),
                tool: format!("tool_{tool:02}"),
                via: if n % 3 == 0 { "call_tool" } else { "direct" }.into(),
                client: Some("claude-code".into()),
                status: Some(status),
                ms: Some(g.next(900) as i64),
                source_key: format!("proxy:{user}:{n}"),
                ..Call::default()
            }
        })
        .collect()
}

fn store_with(dir: &std::path::Path, calls: Vec<Call>) -> Store {
    let mut store = Store::open(&dir.join("state.db")).unwrap();
    let events: Vec<LogEvent> = calls.into_iter().map(LogEvent::Call).collect();
    for chunk in events.chunks(500) {
        let chunk: Vec<LogEvent> = chunk
            .iter()
            .map(|e| match e {
                LogEvent::Call(c) => LogEvent::Call(c.clone()),
                _ => unreachable!(),
            })
            .collect();
        store.write_log(&chunk).unwrap();
    }
    store
}

fn shipper(pg: &Postgres, user: &str) -> Shipper {
    Shipper {
        target: Target::parse(&pg.url(), &|_| None).unwrap(),
        user: user.into(),
        in_team_figures: true,
        spool_max_rows: 1_000_000,
    }
}

fn sorted(mut u: Vec<Usage>) -> Vec<Usage> {
    u.sort_by(|a, b| a.tool.cmp(&b.tool));
    u
}

/// The same history on SQLite and on PostgreSQL: the same usage sums (the one promotion SQL on
/// both engines), the same working set, the same history for what-if, the same report figures
/// and working-set hits; shipping twice, even after
/// the spool's mark is lost, stores each row once.
#[test]
fn both_engines_give_the_same_sums_working_sets_and_figures() {
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), history(7, 3_000, "ada"));
    let ada = shipper(&pg, "ada");
    assert_eq!(ada.ship_pending(&store, &mut None).unwrap(), 3_000);
    assert_eq!(ada.ship_pending(&store, &mut None).unwrap(), 0);
    // As if mws crashed after the database committed and before the spool's mark moved.
    store
        .conn()
        .execute("UPDATE team_shipping SET shipped_through = 0", [])
        .unwrap();
    assert_eq!(ada.ship_pending(&store, &mut None).unwrap(), 0);
    let mut client = pg.client();
    let rows: i64 = client
        .query_one("SELECT COUNT(*) FROM calls", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 3_000);

    let rules = mws::config::Promote::default();
    let window = promote::cutoff(now(), rules.window_days);
    let also = ["tool_14", "never_called"];
    let here = sorted(store.usage(&window, &also).unwrap());
    let there = sorted(queries::usage(&mut client, "ada", &window, &also).unwrap());
    assert!(here.len() >= 10, "{here:?}");
    assert_eq!(here, there);
    let decide = |usage: &[Usage]| {
        promote::decide(&Inputs {
            now: now(),
            rules: &rules,
            pins: &[],
            declared: &[],
            before: &[],
            usage,
            catalog: None,
            team: &[],
        })
    };
    let (a, b) = (decide(&here), decide(&there));
    assert!(!a.listing.is_empty());
    assert_eq!(a, b);

    // What-if replays the same history from either engine (rows of one millisecond in any order).
    let mut local = Vec::new();
    store
        .whatif_scan_calls(|ts, tool, s, ok| {
            local.push((ts.to_string(), tool.to_string(), s.to_string(), ok))
        })
        .unwrap();
    let mut shared = Vec::new();
    queries::scan_calls(&mut client, "ada", |ts, tool, s, ok| {
        shared.push((ts.to_string(), tool.to_string(), s.to_string(), ok))
    })
    .unwrap();
    assert!(
        shared.windows(2).all(|w| w[0].0 <= w[1].0),
        "not oldest first"
    );
    local.sort();
    shared.sort();
    assert_eq!(local.len(), 3_000);
    assert_eq!(local, shared);

    // The personal report's scan over either engine: the same usage, clients, sessions and
    // working-set hits (tool_00 to tool_04 listed since 20 days ago, tool_05 until 10 days ago).
    let span = mws::store::report::Span {
        since: mws::clock::fmt(now() - time::Duration::days(30)),
        until: NOW.to_string(),
    };
    let day = |d: i64| mws::clock::fmt(now() - time::Duration::days(d));
    let mut intervals: Vec<mws::store::report::Interval> = (0..5)
        .map(|t| mws::store::report::Interval {
            tool: format!("tool_{t:02}"),
            from: day(20),
            to: None,
        })
        .collect();
    intervals.push(mws::store::report::Interval {
        tool: "tool_05".into(),
        from: day(40),
        to: Some(day(10)),
    });
    let mut a = mws::report::aggregate::Aggregate::new(&intervals);
    store.report_scan_calls(&span, |c| a.add(c)).unwrap();
    let mut b = mws::report::aggregate::Aggregate::new(&intervals);
    queries::report_scan_calls(&mut client, "ada", &span.since, &span.until, |c| b.add(c)).unwrap();
    let (a, b) = (a.finish(), b.finish());
    assert!(
        a.hits > 100 && a.sessions == 40,
        "{} hits, {} sessions",
        a.hits,
        a.sessions
    );
    assert_eq!(a, b);

    // The report's figures for the last 7 days, by hand on SQLite and from the team database.
    let since = mws::clock::fmt(now() - time::Duration::days(7));
    let by_hand: (i64, i64, i64, i64) = store
        .conn()
        .query_row(
            "SELECT COUNT(*), SUM(ok), COUNT(DISTINCT session_id), COUNT(DISTINCT tool)
             FROM calls WHERE ts >= ?1 AND ts < ?2",
            [&since, NOW],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    let team = queries::team_rows(&mut client, &since, NOW).unwrap();
    let f = &team.members[0].1;
    assert_eq!(team.members[0].0, "ada");
    assert_eq!(
        (
            f.calls as i64,
            f.ok_calls as i64,
            f.sessions as i64,
            f.tools as i64
        ),
        by_hand
    );
    assert_eq!(&team.team, f);
}

/// Each bad input names itself and says what to do; the password is never echoed.
#[test]
fn bad_urls_passwords_rights_schemas_and_a_stopped_server_are_named() {
    let Some(pg) = Postgres::start() else { return };
    let connect = |url: &str| {
        Target::parse(url, &|_| None)
            .unwrap()
            .connect()
            .err()
            .unwrap()
            .0
    };
    let e = connect(&pg.url_as("mws", "wrong-pw", "team"));
    assert_eq!(
        e,
        format!(
            "team database 127.0.0.1:{}/team: password authentication failed for user \"mws\": \
             check the password in store.postgres (or the ${{VAR}} it names)",
            pg.port
        )
    );
    assert!(!e.contains("wrong-pw"));
    let e = connect(&pg.url_as("mws", "mws-pw", "nosuchdb"));
    assert!(
        e.contains("database \"nosuchdb\" does not exist (create it: createdb"),
        "{e}"
    );
    let e = connect(&pg.url_as("reader", "reader-pw", "locked"));
    assert!(
        e.contains("mws may not create its tables there (")
            && e.contains("GRANT CREATE ON SCHEMA public TO the role in store.postgres"),
        "{e}"
    );
    // A schema from a newer mws.
    Target::parse(&pg.url(), &|_| None)
        .unwrap()
        .connect()
        .unwrap();
    pg.sql(
        "team",
        "INSERT INTO refinery_schema_history (version, name, applied_on, checksum) \
         VALUES (99, 'future', 'now', '0')",
    );
    let e = connect(&pg.url());
    assert!(
        e.ends_with(
            "its tables are from a newer mws (schema version 99; this mws knows up to 1): \
             upgrade mws on this machine"
        ),
        "{e}"
    );
    pg.stop_server();
    let e = connect(&pg.url());
    assert!(
        e.starts_with(&format!(
            "cannot reach the team database 127.0.0.1:{}/team: ",
            pg.port
        )),
        "{e}"
    );
}

/// `sslmode=require`: TLS, and the server's certificate is checked (a private CA through
/// `store.caFile`); without the CA the connection is refused and the message says why.
#[test]
fn tls_connections_check_the_certificate() {
    let Some(pg) = Postgres::start_with_tls() else {
        return;
    };
    let url = format!(
        "postgres://mws:mws-pw@localhost:{}/team?sslmode=require",
        pg.port
    );
    let target = Target::parse(&url, &|_| None).unwrap();
    let e = target.clone().connect().err().unwrap().0;
    assert!(
        e.starts_with(&format!(
            "cannot reach the team database localhost:{}/team: ",
            pg.port
        )) && e.contains("UnknownIssuer"),
        "{e}"
    );
    let mut client = target.with_ca_file(pg.ca.clone()).connect().unwrap();
    let ssl: bool = client
        .query_one(
            "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0);
    assert!(ssl);
    let ca_error = |path: std::path::PathBuf| {
        Target::parse(&url, &|_| None)
            .unwrap()
            .with_ca_file(Some(path))
            .connect()
            .err()
            .unwrap()
            .0
    };
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.pem");
    let e = ca_error(missing.clone());
    assert!(
        e.starts_with(&format!("store.caFile {}: ", missing.display())),
        "{e}"
    );
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    assert_eq!(
        ca_error(empty.clone()),
        format!("store.caFile {}: no PEM certificate in it", empty.display())
    );
}

/// The database away mid-batch and the spool over its bound: calls stay in state.db, the oldest
/// past the bound are given up (said loudly, counted in the spool), the rest arrive once when the
/// server is back.
#[test]
fn a_stopped_server_keeps_rows_in_the_spool_and_a_full_spool_gives_up_the_oldest() {
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let store = store_with(dir.path(), history(3, 500, "bo"));
    let mut bo = shipper(&pg, "bo");
    let mut client = None;
    assert_eq!(bo.ship_pending(&store, &mut client).unwrap(), 500);
    let more: Vec<Call> = history(4, 300, "bo")
        .into_iter()
        .map(|mut c| {
            c.source_key = format!("{}:later", c.source_key);
            c
        })
        .collect();
    let mut store = store;
    let events: Vec<LogEvent> = more.into_iter().map(LogEvent::Call).collect();
    store.write_log(&events).unwrap();
    pg.stop_server();
    let e = bo.ship_pending(&store, &mut client).unwrap_err().0;
    assert!(e.contains("/team: "), "{e}");
    let label = bo.target.label.clone();
    let spool = store.spool(&label).unwrap();
    assert_eq!(spool.pending, 300);
    assert_eq!(spool.last_error.as_deref(), Some(e.as_str()));
    bo.spool_max_rows = 200;
    assert!(bo.ship_pending(&store, &mut client).is_err());
    let spool = store.spool(&label).unwrap();
    assert_eq!((spool.pending, spool.given_up), (200, 100));
    pg.start_server();
    assert_eq!(bo.ship_pending(&store, &mut client).unwrap(), 200);
    let spool = store.spool(&label).unwrap();
    assert_eq!((spool.pending, spool.last_error), (0, None));
    let rows: i64 = pg
        .client()
        .query_one("SELECT COUNT(*) FROM calls", &[])
        .unwrap()
        .get(0);
    assert_eq!(rows, 700);
    // The connection dropped under the shipper (as a network or a pooler does): the next batch
    // goes over a new one, at the first attempt.
    pg.sql(
        "postgres",
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'mws'",
    );
    let last: Vec<LogEvent> = history(5, 50, "bo")
        .into_iter()
        .map(|mut c| {
            c.source_key = format!("{}:last", c.source_key);
            LogEvent::Call(c)
        })
        .collect();
    store.write_log(&last).unwrap();
    assert!(client.is_some());
    assert_eq!(bo.ship_pending(&store, &mut client).unwrap(), 50);
}

/// The config of one member's `mws serve` on the built-in demo upstream.
fn member_config(url: &str, user: &str) -> Value {
    json!({
        "upstream": {"command": env!("CARGO_BIN_EXE_mws"), "args": ["demo-upstream"]},
        "store": {"postgres": url},
        "user": user,
        "transcripts": [],
        "promote": {"schedule": "off", "team": 3}
    })
}

/// Calls per member and members at once.
const MEMBERS: usize = 8;
const CALLS: usize = 10_000;

/// `n` direct calls to `url` over one keep-alive connection, 4 at a time.
async fn call_many(url: &str, member: usize, from: usize, n: usize) {
    let http = reqwest::Client::new();
    let body = |id: usize| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "mail_list_messages", "arguments": {},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": format!("member-{member}"), "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }
        }})
        .to_string()
    };
    let mut ids = (from..from + n).peekable();
    while ids.peek().is_some() {
        let batch: Vec<usize> = ids.by_ref().take(4).collect();
        let sent = batch.iter().map(|id| {
            http.post(url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "mail_list_messages")
                .body(body(*id))
                .send()
        });
        for r in futures_util::future::join_all(sent).await {
            let r = r.unwrap();
            assert!(r.status().is_success(), "{}", r.status());
            let text = r.text().await.unwrap();
            assert!(!text.contains("\"isError\":true"), "{text}");
        }
    }
}

/// 8 real `mws serve` processes, 10,000 calls each, into one database; the server is stopped
/// for 30 s in the middle and one mws is restarted while it is away: every row arrives once.
#[test]
fn eight_members_ship_every_row_once_through_an_outage_and_a_restart() {
    let Some(pg) = Postgres::start() else { return };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut served: Vec<_> = (0..MEMBERS)
        .map(|m| {
            crate::support::serve::start(&member_config(&pg.url(), &format!("member-{m}")), &[])
        })
        .collect();
    let third = CALLS / 3;
    let phase = |served: &Vec<crate::support::serve::Served>, from: usize, n: usize| {
        rt.block_on(futures_util::future::join_all(
            served
                .iter()
                .enumerate()
                .map(|(m, s)| call_many(&s.url, m, from, n)),
        ));
    };
    phase(&served, 0, third);
    pg.stop_server();
    let away = Instant::now();
    phase(&served, third, third);
    // One member restarts while the database is away: its spool is in its state.db.
    served[0].stop();
    let dir = std::mem::replace(&mut served[0].dir, tempfile::tempdir().unwrap());
    served[0] = crate::support::serve::start_in(dir, &member_config(&pg.url(), "member-0"), &[]);
    std::thread::sleep(Duration::from_secs(30).saturating_sub(away.elapsed()));
    pg.start_server();
    phase(&served, 2 * third, CALLS - 2 * third);
    for s in &mut served {
        s.stop();
    }
    // The restarted processes ship what their spools hold, each once.
    let served: Vec<_> = served
        .into_iter()
        .enumerate()
        .map(|(m, s)| {
            crate::support::serve::start_in(
                s.dir,
                &member_config(&pg.url(), &format!("member-{m}")),
                &[],
            )
        })
        .collect();
    let mut client = pg.client();
    let deadline = Instant::now() + Duration::from_secs(120);
    let total = (MEMBERS * CALLS) as i64;
    loop {
        let n: i64 = client
            .query_one("SELECT COUNT(*) FROM calls", &[])
            .unwrap()
            .get(0);
        if n >= total {
            break;
        }
        assert!(Instant::now() < deadline, "{n} of {total} rows arrived");
        std::thread::sleep(Duration::from_millis(200));
    }
    let per_user: BTreeMap<String, i64> = client
        .query(
            "SELECT user_name, COUNT(*) FROM calls GROUP BY user_name",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let want: BTreeMap<String, i64> = (0..MEMBERS)
        .map(|m| (format!("member-{m}"), CALLS as i64))
        .collect();
    assert_eq!(per_user, want);
    let keys: i64 = client
        .query_one(
            "SELECT COUNT(DISTINCT (user_name, source_key)) FROM calls",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(keys, total);
    for s in &served {
        let local = s.calls().len();
        assert_eq!(local, CALLS, "{}", s.url);
    }
    drop(served);
}

/// A new member's first `mws promote` lists the tools at least 3 teammates use (and only those
/// their catalog has); `mws report --team --json` matches figures computed from the history.
#[test]
fn a_new_member_starts_with_the_team_working_set_and_the_team_report_adds_up() {
    let Some(pg) = Postgres::start() else { return };
    let mut client = pg.client();
    Target::parse(&pg.url(), &|_| None)
        .unwrap()
        .connect()
        .unwrap();
    // Five teammates; three use mail_send_message, two calendar_list_events, four a tool of
    // another server; the fifth keeps out of team figures.
    let uses: &[(&str, &[&str])] = &[
        (
            "ann",
            &[
                "mail_send_message",
                "calendar_list_events",
                "github_create_issue",
            ],
        ),
        ("ben", &["mail_send_message", "github_create_issue"]),
        (
            "cat",
            &[
                "mail_send_message",
                "calendar_list_events",
                "github_create_issue",
            ],
        ),
        ("dan", &["github_create_issue"]),
        ("eve", &["calendar_list_events", "drive_search_files"]),
    ];
    let day = |d: i64| mws::clock::fmt(mws::clock::now() - time::Duration::days(d));
    for (u, tools) in uses {
        let mut rows = Vec::new();
        for (i, t) in tools.iter().enumerate() {
            for k in 0..3 {
                rows.push(mws::store::team::ShipRow {
                    id: rows.len() as i64 + 1,
                    ts: day(1 + k),
                    session_id: format!("{u}-s{k}"),
                    tool: t.to_string(),
                    via: "direct".into(),
                    ok: !(i == 0 && k == 2),
                    error_kind: None,
                    ms: Some(5),
                    client: Some("claude-code".into()),
                    client_call_id: None,
                    source_key: format!("proxy:{u}:{t}:{k}"),
                });
            }
        }
        let sessions: Vec<_> = (0..3)
            .map(|k| mws::store::team::ShipSession {
                id: format!("{u}-s{k}"),
                source: "proxy".into(),
                client: Some("claude-code".into()),
                first_seen: day(1 + k),
                last_seen: day(1 + k),
            })
            .collect();
        queries::ship(&mut client, u, *u != "eve", &day(0), &rows, &sessions).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = config_in(dir.path(), member_config(&pg.url(), "newbie"));
    let table = json_run(mws_config(&path).args(["promote", "--json", "--no-ingest"]));
    let listed: Vec<(&str, &str)> = table
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["after"] == true)
        .map(|d| (d["tool"].as_str().unwrap(), d["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        listed,
        [(
            "mail_send_message",
            "promoted: team prior: 3 teammate(s) used it in 30d (promote.team: 3)"
        )],
        "{table}"
    );
    let ws: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("state/working-set.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(ws["tools"], json!(["mail_send_message"]));

    let r = json_run(mws_config(&path).args(["report", "--team", "--json", "--since", "7d"]));
    // By hand: ann 9 calls (8 ok, 3 sessions, 3 tools), ben 6 (5, 3, 2), cat 9 (8, 3, 3),
    // dan 3 (2, 3, 1); eve is named, not counted; newbie has no calls.
    let members: Vec<(String, u64, u64, u64, u64)> = r["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let n = |k: &str| m[k].as_u64().unwrap();
            (
                m["user"].as_str().unwrap().to_string(),
                n("calls"),
                n("okCalls"),
                n("sessions"),
                n("tools"),
            )
        })
        .collect();
    assert_eq!(
        members,
        [
            ("ann".into(), 9, 8, 3, 3),
            ("ben".into(), 6, 5, 3, 2),
            ("cat".into(), 9, 8, 3, 3),
            ("dan".into(), 3, 2, 3, 1)
        ]
    );
    assert_eq!(
        r["team"],
        json!({"calls": 27, "okCalls": 23, "sessions": 12, "tools": 3})
    );
    assert_eq!(r["excluded"], json!(["eve"]));
    let tools: Vec<(&str, u64, u64)> = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["tool"].as_str().unwrap(),
                t["users"].as_u64().unwrap(),
                t["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tools,
        [
            ("github_create_issue", 4, 11),
            ("mail_send_message", 3, 6),
            ("calendar_list_events", 2, 6)
        ]
    );
    let unused = r["unused"].as_array().unwrap();
    assert!(unused.contains(&json!("drive_search_files")), "{r}");
    assert!(!unused.contains(&json!("mail_send_message")), "{r}");
    let k = &r["tokens"];
    assert_eq!(k["sessions"], 12);
    let per = k["catalogPerSession"].as_u64().unwrap();
    assert!(per > 1_000, "{k}");
    assert_eq!(k["withoutMws"].as_u64().unwrap(), per * 12);
    assert_eq!(
        k["saved"].as_u64().unwrap(),
        (per - k["listedPerSession"].as_u64().unwrap()) * 12
    );
    // `mws doctor` names the database, the user and the spool.
    let team = doctor_team_check(&path);
    assert_eq!(team["status"], "ok", "{team}");
    assert_eq!(
        team["summary"],
        format!(
            "127.0.0.1:{}/team answers as \"newbie\" (tables at version 1)",
            pg.port
        )
    );
    assert!(
        team["details"][0]
            .as_str()
            .unwrap()
            .starts_with("spool: 0 call(s) waiting in state.db; last shipped "),
        "{team}"
    );
    pg.stop_server();
    let team = doctor_team_check(&path);
    assert_eq!(team["status"], "warn", "{team}");
    assert!(
        team["summary"]
            .as_str()
            .unwrap()
            .starts_with("cannot reach the team database 127.0.0.1:"),
        "{team}"
    );
    pg.start_server();
    // The text form says the same.
    let out = mws()
        .args([
            "--config",
            path.to_str().unwrap(),
            "report",
            "--team",
            "--since",
            "7d",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Not counted (store.inTeamFigures: false): eve"),
        "{text}"
    );
}

/// The `team` check of `mws doctor --json` with the config at `path`.
fn doctor_team_check(path: &std::path::Path) -> Value {
    let out = mws()
        .args(["--config", path.to_str().unwrap(), "doctor", "--json"])
        .output()
        .unwrap();
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    d["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "team")
        .unwrap_or_else(|| panic!("no team check: {d}"))
        .clone()
}

/// `--team` without a team database says what to set.
#[test]
fn report_team_without_a_database_says_what_to_set() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config.json");
    let config = json!({
        "upstream": {"command": env!("CARGO_BIN_EXE_mws"), "args": ["demo-upstream"]},
        "stateDir": dir.path().join("state"),
        "transcripts": []
    });
    std::fs::write(&path, config.to_string()).unwrap();
    let out = mws()
        .env_remove("MWS_DATABASE_URL")
        .args(["--config", path.to_str().unwrap(), "report", "--team"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "--team reads the team database: set store.postgres in the config (docs/teams.md)"
        ),
        "{stderr}"
    );
}

/// Retention on the team database: a member's pass deletes its own rows older than the cutoff
/// and those of a member not seen since it, keeps every row at or after the cutoff, and leaves
/// an active teammate's rows to that teammate's own horizon.
#[test]
fn retention_deletes_this_members_and_departed_members_old_rows_only() {
    let Some(pg) = Postgres::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    for (seed, user) in [(11, "ada"), (12, "bo"), (13, "cy")] {
        let sub = dir.path().join(user);
        std::fs::create_dir_all(&sub).unwrap();
        let store = store_with(&sub, history(seed, 12_000, user));
        shipper(&pg, user).ship_pending(&store, &mut None).unwrap();
    }
    let cutoff = mws::clock::fmt(now() - time::Duration::days(30));
    let mut c = pg.client();
    // cy left the team before the cutoff.
    c.execute(
        "UPDATE members SET last_seen = '2026-01-01T00:00:00.000Z' WHERE user_name = 'cy'",
        &[],
    )
    .unwrap();
    let count = |c: &mut postgres::Client, user: &str, old: bool| -> i64 {
        let op = if old { "<" } else { ">=" };
        c.query_one(
            &format!("SELECT COUNT(*) FROM calls WHERE user_name = $1 AND ts {op} $2"),
            &[&user, &cutoff],
        )
        .unwrap()
        .get(0)
    };
    let before: Vec<(i64, i64)> = ["ada", "bo", "cy"]
        .iter()
        .map(|u| (count(&mut c, u, true), count(&mut c, u, false)))
        .collect();
    assert!(before.iter().all(|&(old, new)| old > 0 && new > 0));
    let deleted = mws::team::retention::delete_before(&mut c, "ada", &cutoff).unwrap();
    assert_eq!(deleted as i64, before[0].0 + before[2].0);
    let after: Vec<(i64, i64)> = ["ada", "bo", "cy"]
        .iter()
        .map(|u| (count(&mut c, u, true), count(&mut c, u, false)))
        .collect();
    assert_eq!(
        after,
        [(0, before[0].1), before[1], (0, before[2].1)],
        "ada's and cy's old rows go; every row at or after the cutoff, and bo's, stay"
    );
    let old_sessions: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM sessions WHERE user_name IN ('ada', 'cy') AND last_seen < $1",
            &[&cutoff],
        )
        .unwrap()
        .get(0);
    assert_eq!(old_sessions, 0);
    // A second pass finds nothing.
    assert_eq!(
        mws::team::retention::delete_before(&mut c, "ada", &cutoff).unwrap(),
        0
    );
}
