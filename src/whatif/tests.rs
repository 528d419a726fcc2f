//! The replay against a hand-computed case, against real promotion runs read back by `mws
//! report`, the grid's bad input, and the chart as XML.

use time::{Duration, OffsetDateTime, macros::datetime};

use super::grid::{self, Axes};
use super::render::{self, WhatIf};
use super::*;
use crate::call::{self, Status};
use crate::catalog::Catalog;
use crate::config::Config;
use crate::promote::{self, Inputs};
use crate::report::{Tokenizer, TokenizerKind, UpstreamInfo, Window};
use crate::store::{PromotionRecord, Store};

const DAY0: OffsetDateTime = datetime!(2026-10-01 00:00 UTC);

fn at(day: i64, minute: i64) -> String {
    crate::clock::fmt(DAY0 + Duration::days(day) + Duration::minutes(minute))
}

fn rules(min_sessions: u32, min_calls: u32, window_days: u32, keep_days: u32) -> Promote {
    Promote {
        min_sessions,
        min_calls,
        window_days,
        keep_days,
        ..Promote::default()
    }
}

#[test]
fn a_hand_computed_history() {
    // (day, minute, tool, session, ok)
    let calls = [
        (0, 60, "a", "s1", true),
        (0, 61, "b", "s1", true),
        (0, 120, "a", "s2", true),
        // night 1: a has 2 sessions and 2 calls → listed; b has 1 session
        (1, 60, "a", "s3", true),  // hit
        (1, 61, "b", "s3", true),  // needs a search
        (1, 62, "a", "s3", false), // failures never count
        // night 2: b has s1 and s3 → listed; a kept
        (2, 60, "b", "s4", true), // hit
        // night 3: window days 1-2: a has 1 call, last success day 1 < keep cutoff day 2 →
        // demoted; b has s3 and s4 → kept
        (3, 60, "a", "s5", true), // needs a search
        (3, 61, "b", "s5", true), // hit
    ];
    let mut b = HistoryBuilder::new(&at(-10, 0), &at(3, 1380));
    for (day, minute, tool, session, ok) in calls {
        assert!(b.add(&at(day, minute), tool, session, ok));
    }
    let h = b.finish();
    let mut tokens = |ws: &[String]| Some(100 + 10 * ws.len());
    let got = replay(
        &h,
        &[Setting {
            rules: rules(2, 2, 2, 1),
            current: true,
        }],
        &mut World {
            pins: &[],
            catalog: None,
            tokens: &mut tokens,
            since: &at(-10, 0),
        },
    );
    let f = &got[0];
    assert_eq!((f.ok_calls, f.hits, f.needed_search), (8, 3, 5));
    assert_eq!(f.hit_rate, Some(3.0 / 8.0));
    assert_eq!(f.listing_changes, 3);
    assert_eq!((f.end_listed_tools, f.end_listed_tokens), (1, Some(110)));
    // 9 calls: day 0 three at 100 tokens, day 1 three at 110, day 2 one at 120, day 3 two at 110.
    assert_eq!(f.avg_listed_tokens, Some(970.0 / 9.0));
}

/// A small deterministic generator (no crate needed for a test).
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

/// `mws promote` as it runs: the store's sums, the rule, one write.
fn promote_now(store: &mut Store, config: &Config, now: OffsetDateTime) {
    let before = store.working_set().unwrap();
    let mut also: Vec<&str> = before.iter().map(|l| l.tool.as_str()).collect();
    also.extend(config.pins.iter().map(String::as_str));
    let cutoff = promote::cutoff(now, config.promote.window_days);
    let usage = store.usage(&cutoff, &also).unwrap();
    let outcome = promote::decide(&Inputs {
        now,
        rules: &config.promote,
        pins: &config.pins,
        declared: &[],
        before: &before,
        usage: &usage,
        catalog: None,
        team: &[],
    });
    let now = crate::clock::fmt(now);
    let rec = PromotionRecord {
        now: &now,
        catalog_source: "skipped",
        outcome: &outcome,
        declared: &[],
        catalog: None,
        projects: &[],
        projects_per_tool: &Default::default(),
    };
    store.write_promotion(&rec, || Ok(())).unwrap();
}

#[test]
fn replaying_the_settings_that_ran_gives_the_reports_hit_rate() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        state_dir: dir.path().to_path_buf(),
        pins: vec!["t11".into()],
        promote: rules(2, 3, 7, 5),
        ..Config::default()
    };
    let mut store = Store::open(&config.db_path()).unwrap();
    let mut rng = Lcg(7);
    let mut n = 0;
    for day in 0..45 {
        promote_now(&mut store, &config, DAY0 + Duration::days(day));
        let mut listed: Vec<String> = store
            .working_set()
            .unwrap()
            .into_iter()
            .map(|l| l.tool)
            .collect();
        listed.extend(config.pins.iter().cloned());
        // Busy weeks and quiet ones, so tools come and go.
        let sessions = if (day / 7) % 2 == 0 { 4 } else { 1 };
        for s in 0..sessions {
            for c in 0..rng.next(6) + 1 {
                // Skewed: low numbers far more often; the set drifts with the weeks.
                let tool = (rng.next(4) * rng.next(4) + (day as u64 / 10)) % 12;
                let tool = format!("t{tool}");
                let via = if listed.contains(&tool) {
                    "direct"
                } else {
                    "call_tool"
                };
                n += 1;
                let rec = call::Call {
                    ts: at(day, 60 + s * 90 + c as i64),
                    session_id: format!("d{day}s{s}"),
                    tool,
                    via: via.into(),
                    status: Some(if rng.next(10) == 0 {
                        Status::Error
                    } else {
                        Status::Ok
                    }),
                    source_key: format!("proxy:{n}"),
                    ..call::Call::default()
                };
                crate::store::log::insert_call(store.conn(), &rec).unwrap();
            }
        }
    }
    let now = DAY0 + Duration::days(45);
    let tok = Tokenizer::load(TokenizerKind::O200k);
    for since in ["365d", "20d"] {
        let window = Window::parse(since).unwrap();
        let report = crate::cmd::report::gather(
            &store,
            &config,
            &Catalog::new(vec![]),
            &UpstreamInfo::default(),
            now,
            &window,
            &tok,
        )
        .unwrap();
        let settings = grid::settings(
            &config.promote,
            &Axes {
                min_sessions: Some("1"),
                min_calls: Some("1"),
                window_days: Some("30"),
                keep_days: Some("30"),
            },
        )
        .unwrap();
        let got = crate::cmd::whatif::gather(&store, &config, None, now, &window, &tok, &settings)
            .unwrap();
        let h = &report.hit_rate;
        assert!(
            h.hits > 10 && h.ok_calls > h.hits,
            "{since}: a real mix: {h:?}"
        );
        assert_eq!(
            (got[0].ok_calls, got[0].hits),
            (h.ok_calls, h.hits),
            "{since}"
        );
        assert_eq!(got[0].hit_rate, h.rate, "{since}");
        // A looser setting would have listed more, and the figures say so.
        assert!(got[1].hits > got[0].hits, "{since}: {:?}", got[1]);
    }
}

#[test]
fn bad_grids_are_refused_with_the_flag_named() {
    let cur = Promote::default();
    let check = |axes: Axes, want: &str| {
        let err = grid::settings(&cur, &axes).unwrap_err();
        assert_eq!(err, want);
    };
    let none = Axes::default;
    check(
        Axes {
            min_sessions: Some("0,1"),
            ..none()
        },
        "--min-sessions \"0,1\": 0 is not allowed, the least is 1",
    );
    check(
        Axes {
            keep_days: Some("-5"),
            ..none()
        },
        "--keep-days \"-5\": \"-5\" is not a whole number of at least 1",
    );
    check(
        Axes {
            min_calls: Some(""),
            ..none()
        },
        "--min-calls \"\": an empty value; give whole numbers separated by commas, like 1,2,3",
    );
    check(
        Axes {
            window_days: Some("99999"),
            ..none()
        },
        "--window-days \"99999\": 99999 is more than 3650",
    );
    let many: String = (1..=100)
        .map(|n| n.to_string())
        .collect::<Vec<_>>()
        .join(",");
    check(
        Axes {
            min_sessions: Some(&many),
            min_calls: Some(&many),
            ..none()
        },
        "the grid has 40000 settings (100 × 100 × 2 × 2); the most is 1000: give fewer values \
         to --min-sessions, --min-calls, --window-days or --keep-days",
    );
    // The default grid is 24 settings, the current one first and not repeated.
    let s = grid::settings(&cur, &none()).unwrap();
    assert!(s[0].current && s.iter().filter(|s| s.rules == cur).count() == 1);
    let in_grid = grid::DEFAULT_MIN_SESSIONS.contains(&cur.min_sessions)
        && grid::DEFAULT_MIN_CALLS.contains(&cur.min_calls)
        && grid::DEFAULT_WINDOW_DAYS.contains(&cur.window_days)
        && grid::DEFAULT_KEEP_DAYS.contains(&cur.keep_days);
    assert_eq!(s.len(), if in_grid { 24 } else { 25 });
}

#[test]
fn the_chart_is_xml_with_one_point_per_setting() {
    let f = |ms: u32, rate: f64, tokens: f64, current: bool| Figures {
        min_sessions: ms,
        min_calls: 1,
        window_days: 30,
        keep_days: 30,
        current,
        ok_calls: 10,
        hits: (rate * 10.0) as u64,
        hit_rate: Some(rate),
        needed_search: 10 - (rate * 10.0) as u64,
        avg_listed_tokens: Some(tokens),
        end_listed_tokens: Some(tokens as usize),
        end_listed_tools: 3,
        listing_changes: 2,
    };
    let figures = vec![
        f(2, 0.6, 900.0, true),
        f(1, 0.8, 1500.0, false),
        f(3, 0.79, 700.0, false),
    ];
    let rec = grid::recommend(&figures).unwrap();
    assert_eq!(rec.index, 2, "{rec:?}");
    let w = WhatIf {
        since: "a",
        until: "b",
        tokenizer: "o200k_base",
        settings: &figures,
        recommended: Some(&rec),
        projects: None,
    };
    let svg = render::svg(&w).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let circles = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(circles, figures.len());
    let table = render::table(&w);
    assert!(table.contains("→ recommended: minSessions 3"), "{table}");
}
