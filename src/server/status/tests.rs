//! The status page from a seeded database: what it shows, what it escapes, and that the per-day
//! figures folded in row by row equal a count from scratch.

use serde_json::json;

use super::*;
use crate::call::{Call, Status as CallStatus};
use crate::config::{Config, Listing};
use crate::store::SearchRecord;
use crate::store::report::WorkingSetRow;
use crate::store::seed::SeedRun;

const EVIL: &str = "<img src=x onerror=alert(1)>";

fn call(n: usize, ts: &str, tool: &str, via: &str, ok: bool) -> Call {
    Call {
        source_key: format!("proxy:t:{n}"),
        ts: ts.into(),
        session_id: format!("s{}", n % 3),
        server: None,
        tool: tool.into(),
        via: via.into(),
        client: Some(
            if n.is_multiple_of(2) {
                "claude-code"
            } else {
                EVIL
            }
            .into(),
        ),
        client_call_id: None,
        agent_id: None,
        status: Some(if ok {
            CallStatus::Ok
        } else {
            CallStatus::Error
        }),
        ms: Some(10 + n as i64),
        ..Call::default()
    }
}

fn catalog() -> Catalog {
    let tool = |n: &str| json!({"name": n, "description": "does a thing", "inputSchema": {"type": "object"}});
    Catalog::new(vec![tool("alpha"), tool("beta"), tool("gamma"), tool(EVIL)])
}

fn now() -> OffsetDateTime {
    crate::clock::parse("2026-11-29T12:00:00Z").unwrap()
}

/// alpha listed since Nov 20 (promoted by a run), beta never listed; calls on Nov 18, 21, 29.
fn seeded(dir: &std::path::Path) -> Store {
    let mut store = Store::open(&dir.join("state.db")).unwrap();
    let calls = [
        call(1, "2026-11-18T10:00:00.000Z", "alpha", "call_tool", true),
        call(2, "2026-11-18T11:00:00.000Z", "alpha", "direct", true),
        call(3, "2026-11-21T10:00:00.000Z", "alpha", "direct", true),
        call(4, "2026-11-21T11:00:00.000Z", "alpha", "direct", false),
        call(5, "2026-11-21T12:00:00.000Z", "beta", "direct", true),
        call(6, "2026-11-29T09:00:00.000Z", EVIL, "call_tool", true),
        // Before the window: not in any figure.
        call(7, "2026-10-01T09:00:00.000Z", "alpha", "direct", true),
    ];
    let search = |ts: &str, n: i64| SearchRecord {
        ts: ts.into(),
        session_id: None,
        client: None,
        mode: "ranked".into(),
        result_count: n,
        reply_bytes: 100,
    };
    let run = SeedRun {
        ts: "2026-11-20T03:00:00.000Z".into(),
        transitions: vec![
            (
                "alpha".into(),
                false,
                true,
                "promoted".into(),
                "2 sessions".into(),
            ),
            ("beta".into(), false, false, "unchanged".into(), EVIL.into()),
        ],
    };
    let ws = WorkingSetRow {
        tool: "alpha".into(),
        position: 1,
        reason: "promoted".into(),
        since: "2026-11-20T03:00:00.000Z".into(),
        sessions: Some(2),
        calls: Some(2),
        last_success: None,
    };
    let searches = [
        search("2026-11-21T10:00:00.000Z", 0),
        search("2026-11-22T10:00:00.000Z", 3),
    ];
    store
        .seed_history(&calls, &searches, &[run], &[ws])
        .unwrap();
    store
}

fn config() -> Config {
    Config {
        listing: Listing::WorkingSet,
        ..Config::default()
    }
}

#[test]
fn the_page_shows_the_seeded_history_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let mut daily = Daily::default();
    let up = UpstreamInfo {
        target: format!("http://{EVIL}/mcp"),
        reachable: true,
        catalog_source: "live".into(),
        ..UpstreamInfo::default()
    };
    let s = gather(&store, &mut daily, &config(), &catalog(), &up, now()).unwrap();
    let names: Vec<_> = s
        .report
        .listed
        .iter()
        .map(|t| (t.name.as_str(), t.reason.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("search_tools", "meta-tool"),
            ("call_tool", "meta-tool"),
            ("run_script", "meta-tool"),
            ("alpha", "promoted")
        ]
    );
    assert_eq!(s.days.len(), WINDOW_DAYS as usize);
    assert_eq!(s.days.first().unwrap().day, "2026-11-02");
    assert_eq!(s.days.last().unwrap().day, "2026-11-29");
    let day = |d: &str| s.days.iter().find(|x| x.day == d).unwrap().clone();
    // Nov 18: alpha was not listed yet (and one call came through call_tool): no hit.
    assert_eq!(
        (
            day("2026-11-18").calls,
            day("2026-11-18").ok,
            day("2026-11-18").hits
        ),
        (2, 2, 0)
    );
    // Nov 21: alpha listed (hit), its failure is no success, beta never listed.
    assert_eq!(
        (
            day("2026-11-21").calls,
            day("2026-11-21").ok,
            day("2026-11-21").hits
        ),
        (3, 2, 1)
    );
    assert_eq!(s.recent.len(), 7);
    assert_eq!(s.recent[0].tool, EVIL);
    assert_eq!(
        (s.report.searches.count, s.report.searches.zero_results),
        (2, 1)
    );
    let run = s.last_run.as_ref().unwrap();
    assert_eq!(run.decisions[0].action, "promoted");

    let html = page::html(&s, REFRESH_SECS);
    assert!(!html.contains(EVIL), "unescaped text in the page");
    assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    for want in [
        "<meta http-equiv=\"refresh\" content=\"30\">",
        "<table id=\"working-set\">",
        ">alpha<",
        ">promoted<",
        "<table id=\"recent-calls\">",
        "<svg",
        "hit rate per day",
        "calls per day",
        "<b>1</b> answered with nothing",
        "2 sessions",
    ] {
        assert!(html.contains(want), "{want} missing from the page");
    }
    for never in [
        "<script",
        "<link",
        "src=\"http",
        "href=\"http",
        "@import",
        "url(",
    ] {
        assert!(!html.contains(never), "{never} in the page");
    }
}

#[test]
fn daily_figures_folded_in_row_by_row_equal_a_fresh_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = seeded(dir.path());
    let cfg = config();
    let up = UpstreamInfo::default();
    let mut kept = Daily::default();
    gather(&store, &mut kept, &cfg, &catalog(), &up, now()).unwrap();
    let later = [
        call(20, "2026-11-29T10:00:00.000Z", "alpha", "direct", true),
        call(21, "2026-11-25T10:00:00.000Z", "beta", "direct", true),
    ];
    store.seed_history(&later, &[], &[], &[]).unwrap();
    let again = gather(&store, &mut kept, &cfg, &catalog(), &up, now()).unwrap();
    let fresh = gather(&store, &mut Daily::default(), &cfg, &catalog(), &up, now()).unwrap();
    assert_eq!(again.days, fresh.days);
    let today = fresh.days.last().unwrap();
    assert_eq!((today.calls, today.ok, today.hits), (2, 2, 1));
    // A day later the window moves on: Nov 2 is gone, Nov 30 is there.
    let tomorrow = now() + time::Duration::days(1);
    let moved = gather(&store, &mut kept, &cfg, &catalog(), &up, tomorrow).unwrap();
    assert_eq!(moved.days.first().unwrap().day, "2026-11-03");
    assert_eq!(moved.days.last().unwrap().calls, 0);
}

#[test]
fn escaping() {
    assert_eq!(super::esc("plain"), "plain");
    assert_eq!(super::esc("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
}

#[test]
fn each_server_of_a_fleet_has_its_row_with_its_health() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let server = |name: &str, status: &str, error: Option<&str>| crate::report::ServerInfo {
        name: name.into(),
        target: format!("http://127.0.0.1:1/{name}"),
        status: status.into(),
        era: Some("2026-07-28 (stateless)".into()),
        tools: 2,
        error: error.map(String::from),
        shortened: Vec::new(),
    };
    let up = UpstreamInfo {
        servers: vec![
            server("github", "up", None),
            server("files", "down", Some("connection refused")),
            server("mail", "not started", Some("${MAIL_TOKEN} is not set")),
        ],
        ..UpstreamInfo::default()
    };
    let s = gather(
        &store,
        &mut Daily::default(),
        &config(),
        &catalog(),
        &up,
        now(),
    )
    .unwrap();
    let html = page::html(&s, REFRESH_SECS);
    for want in [
        "<td class=\"w\">github</td><td><span class=\"ok\">up</span>",
        "<td class=\"w\">files</td><td><span class=\"bad\">down</span>",
        "connection refused",
        "<span class=\"bad\">not started</span>",
        "${MAIL_TOKEN} is not set",
    ] {
        assert!(html.contains(want), "{want} missing from the page");
    }
}

#[test]
fn held_tools_are_shown_with_their_change_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let store = seeded(dir.path());
    let state = dir.path().join("state");
    let tool =
        |d: &str| json!({"name": "alpha", "description": d, "inputSchema": {"type": "object"}});
    let now_ts = "2026-11-04T10:00:00.000Z";
    crate::upstream::approvals::review(&state, vec![tool("Alpha.")], false, now_ts);
    crate::upstream::approvals::review(&state, vec![tool(EVIL)], false, now_ts);
    let cfg = Config {
        state_dir: state,
        ..config()
    };
    let s = gather(
        &store,
        &mut Daily::default(),
        &cfg,
        &catalog(),
        &UpstreamInfo::default(),
        now(),
    )
    .unwrap();
    assert_eq!(s.held.len(), 1);
    let html = page::html(&s, REFRESH_SECS);
    assert!(!html.contains(EVIL), "unescaped text in the page");
    for want in [
        "<h2 id=\"held\">Held tools</h2>",
        "<td class=\"w\">alpha</td><td>changed</td>",
        "description:\n  - Alpha.\n  + &lt;img src=x onerror=alert(1)&gt;",
    ] {
        assert!(html.contains(want), "no {want:?} in the page");
    }
}
