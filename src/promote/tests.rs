//! The promotion rules as tables of timelines. `usage_of` is the test oracle for the SQL in
//! `store/promote.rs` (which is checked against it there).

use std::collections::BTreeMap;

use super::*;

/// One call on a timeline: tool, session, days before `now`, success.
pub type Call = (&'static str, &'static str, f64, bool);

pub fn now() -> OffsetDateTime {
    time::macros::datetime!(2026-11-29 12:00 UTC)
}

pub fn ago(days: f64) -> String {
    clock::fmt(now() - Duration::seconds_f64(days * 86_400.0))
}

/// Per tool: successful sessions, successful calls, failed calls (in the window), last success.
type Sums<'a> = (BTreeSet<&'a str>, u32, u32, Option<String>);

/// Sums a timeline the way the SQL does.
pub fn usage_of(calls: &[Call], rules: &Promote) -> Vec<Usage> {
    let window = cutoff(now(), rules.window_days);
    let mut by: BTreeMap<&str, Sums> = BTreeMap::new();
    for (tool, session, days, ok) in calls {
        let ts = ago(*days);
        let e = by.entry(tool).or_default();
        if ts >= window {
            if *ok {
                e.0.insert(session);
                e.1 += 1;
            } else {
                e.2 += 1;
            }
        }
        if *ok && e.3.as_ref().is_none_or(|l| &ts > l) {
            e.3 = Some(ts);
        }
    }
    by.into_iter()
        .map(|(tool, (s, calls, failed, last))| Usage {
            tool: tool.into(),
            sessions: s.len() as u32,
            calls,
            failed,
            last_success: last,
        })
        .collect()
}

struct Case {
    name: &'static str,
    calls: &'static [Call],
    /// Listed before the run (promoted).
    before: &'static [&'static str],
    pins: &'static [&'static str],
    /// Front-matter pins: tool, days since first declared.
    declared: &'static [(&'static str, f64)],
    /// The upstream catalog, when one is known.
    catalog: Option<&'static [&'static str]>,
    /// (tool, action, listed after).
    want: &'static [(&'static str, Action, bool)],
}

const fn case(name: &'static str, calls: &'static [Call]) -> Case {
    Case {
        name,
        calls,
        before: &[],
        pins: &[],
        declared: &[],
        catalog: None,
        want: &[],
    }
}

fn run(c: &Case) -> Outcome {
    let rules = Promote::default();
    let usage = usage_of(c.calls, &rules);
    let before: Vec<Listed> = c
        .before
        .iter()
        .map(|t| Listed {
            tool: t.to_string(),
            why: Why::Promoted,
            since: ago(100.0),
        })
        .collect();
    let pins: Vec<String> = c.pins.iter().map(|p| p.to_string()).collect();
    let declared: Vec<Declared> = c
        .declared
        .iter()
        .map(|(t, d)| Declared {
            tool: t.to_string(),
            file: "skills/x/SKILL.md".into(),
            first_seen: ago(*d),
        })
        .collect();
    let catalog: Option<HashSet<String>> = c
        .catalog
        .map(|names| names.iter().map(|n| n.to_string()).collect());
    decide(&Inputs {
        now: now(),
        rules: &rules,
        pins: &pins,
        declared: &declared,
        before: &before,
        usage: &usage,
        catalog: catalog.as_ref(),
        team: &[],
    })
}

use Action::*;

/// Defaults: minSessions 2, minCalls 1, windowDays 30, keepDays 60, pinDecayDays 90.
const CASES: &[Case] = &[
    Case {
        want: &[("a", Promoted, true)],
        ..case(
            "promotes at the threshold: 2 sessions",
            &[("a", "s1", 1.0, true), ("a", "s2", 29.0, true)],
        )
    },
    Case {
        want: &[("a", Unchanged, false)],
        ..case("one session below the threshold", &[("a", "s1", 1.0, true)])
    },
    Case {
        want: &[("a", Unchanged, false)],
        ..case(
            "the second session is outside windowDays",
            &[("a", "s1", 1.0, true), ("a", "s2", 31.0, true)],
        )
    },
    Case {
        want: &[("a", Unchanged, false)],
        ..case(
            "one long session never promotes",
            &[
                ("a", "s1", 1.0, true),
                ("a", "s1", 2.0, true),
                ("a", "s1", 3.0, true),
                ("a", "s1", 4.0, true),
                ("a", "s1", 5.0, true),
                ("a", "s1", 6.0, true),
            ],
        )
    },
    Case {
        want: &[("a", Unchanged, false)],
        ..case(
            "errors never count",
            &[
                ("a", "s1", 1.0, false),
                ("a", "s2", 2.0, false),
                ("a", "s3", 3.0, true),
            ],
        )
    },
    Case {
        want: &[("a", Kept, true)],
        before: &["a"],
        ..case("kept inside keepDays", &[("a", "s1", 59.0, true)])
    },
    Case {
        want: &[("a", Kept, true)],
        before: &["a"],
        ..case("kept on the keepDays boundary", &[("a", "s1", 60.0, true)])
    },
    Case {
        want: &[("a", Demoted, false)],
        before: &["a"],
        ..case("demoted one day after keepDays", &[("a", "s1", 61.0, true)])
    },
    Case {
        want: &[("a", Demoted, false)],
        before: &["a"],
        ..case(
            "a failure does not keep a tool",
            &[("a", "s1", 61.0, true), ("a", "s2", 1.0, false)],
        )
    },
    Case {
        want: &[("p", Pinned, true), ("a", Kept, true)],
        before: &["a"],
        pins: &["p"],
        ..case(
            "pins always, even never called",
            &[("a", "s1", 2.0, true), ("a", "s2", 3.0, true)],
        )
    },
    Case {
        want: &[("f", Pinned, true)],
        declared: &[("f", 89.0)],
        ..case(
            "a new front-matter pin gets pinDecayDays from first seen",
            &[],
        )
    },
    Case {
        want: &[("f", Demoted, false)],
        before: &["f"],
        declared: &[("f", 200.0)],
        ..case("a front-matter pin decays", &[("f", "s1", 91.0, true)])
    },
    Case {
        want: &[("f", Pinned, true)],
        declared: &[("f", 200.0)],
        ..case("a used front-matter pin stays", &[("f", "s1", 89.0, true)])
    },
    Case {
        want: &[
            ("b", Promoted, true),
            ("a", Dropped, false),
            ("p", Dropped, false),
        ],
        before: &["a"],
        pins: &["p"],
        catalog: Some(&["b"]),
        ..case(
            "names gone upstream are dropped",
            &[
                ("a", "s1", 1.0, true),
                ("a", "s2", 2.0, true),
                ("b", "s1", 1.0, true),
                ("b", "s2", 2.0, true),
            ],
        )
    },
];

#[test]
fn rules() {
    for c in CASES {
        let out = run(c);
        for (tool, action, after) in c.want {
            let d = out
                .decisions
                .iter()
                .find(|d| d.tool == *tool)
                .unwrap_or_else(|| panic!("{}: no decision for {tool}", c.name));
            assert_eq!(
                (d.action, d.after),
                (*action, *after),
                "{}: {tool}: {}",
                c.name,
                d.reason()
            );
            let listed = out.listing.iter().any(|l| l.tool == *tool);
            assert_eq!(listed, *after, "{}: {tool} in listing", c.name);
        }
        assert_eq!(
            out.listing.len(),
            c.want.iter().filter(|w| w.2).count(),
            "{}",
            c.name
        );
    }
}

#[test]
fn listing_order_is_append_only_and_reasons_read_well() {
    let rules = Promote::default();
    let usage = usage_of(
        &[
            ("zeta", "s1", 1.0, true),
            ("zeta", "s2", 2.0, true),
            ("alpha", "s1", 1.0, true),
            ("alpha", "s2", 2.0, true),
            ("old", "s1", 70.0, true),
            ("mid", "s9", 3.0, true),
        ],
        &rules,
    );
    let listed = |t: &str| Listed {
        tool: t.into(),
        why: Why::Promoted,
        since: ago(50.0),
    };
    let before = [listed("mid"), listed("old"), listed("zeta")];
    let pins = ["pin2".to_string(), "pin1".to_string()];
    let out = decide(&Inputs {
        now: now(),
        rules: &rules,
        pins: &pins,
        declared: &[],
        before: &before,
        usage: &usage,
        catalog: None,
        team: &[],
    });
    let names: Vec<&str> = out.listing.iter().map(|l| l.tool.as_str()).collect();
    assert_eq!(names, ["mid", "zeta", "pin2", "pin1", "alpha"]);
    assert_eq!(
        out.listing[0].since,
        ago(50.0),
        "a kept tool keeps its since"
    );
    assert_eq!(out.listing[4].since, clock::fmt(now()));
    let table: Vec<String> = out
        .decisions
        .iter()
        .map(|d| format!("{} {}->{} {}", d.tool, d.before, d.after, d.reason()))
        .collect();
    assert_eq!(
        table,
        [
            "mid true->true kept: a successful call within keepDays (60d)",
            "zeta true->true kept: 2 session(s), 2 successful call(s) in 30d (needs 2 and 1)",
            "pin2 false->true pinned: in config `pins`",
            "pin1 false->true pinned: in config `pins`",
            "alpha false->true promoted: 2 session(s), 2 successful call(s) in 30d (needs 2 and 1)",
            "old true->false demoted: no successful call within keepDays (60d)",
        ]
    );
}

/// `promote.team`: a catalog tool enough teammates use is listed for a member who never called
/// it, kept while they still do; fewer teammates, another catalog's tool, or `team: 0` list
/// nothing.
#[test]
fn team_priors_list_what_enough_teammates_use() {
    let catalog: HashSet<String> = ["a", "b", "d"].map(String::from).into();
    let team = [
        ("a".to_string(), 3),
        ("b".to_string(), 1),
        ("d".to_string(), 2),
        ("x".to_string(), 5),
    ];
    let before = [Listed {
        tool: "d".into(),
        why: Why::Team,
        since: ago(10.0),
    }];
    let run = |team_rule: u32| {
        let rules = Promote {
            team: team_rule,
            ..Promote::default()
        };
        decide(&Inputs {
            now: now(),
            rules: &rules,
            pins: &[],
            declared: &[],
            before: &before,
            usage: &[],
            catalog: Some(&catalog),
            team: &team,
        })
    };
    let out = run(2);
    let listed: Vec<(&str, Why)> = out
        .listing
        .iter()
        .map(|l| (l.tool.as_str(), l.why))
        .collect();
    assert_eq!(listed, [("d", Why::Team), ("a", Why::Team)]);
    let rows: Vec<(&str, Action, String)> = out
        .decisions
        .iter()
        .map(|d| (d.tool.as_str(), d.action, d.reason()))
        .collect();
    assert_eq!(
        rows,
        [
            (
                "d",
                Kept,
                "kept: team prior: 2 teammate(s) used it in 30d (promote.team: 2)".into()
            ),
            (
                "a",
                Promoted,
                "promoted: team prior: 3 teammate(s) used it in 30d (promote.team: 2)".into()
            ),
            (
                "b",
                Unchanged,
                "unchanged: 0 session(s), 0 successful call(s) in 30d (needs 2 and 1)".into()
            ),
        ]
    );
    let off = run(0);
    assert!(off.listing.is_empty(), "{:?}", off.listing);
    let d = off.decisions.iter().find(|d| d.tool == "d").unwrap();
    assert_eq!(d.action, Demoted);
}
