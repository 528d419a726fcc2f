//! A generated usage history for `mws report` tests and the report benchmark: sessions from three
//! clients calling tools with a skewed, drifting popularity, weekly promotion runs that change the
//! working set, searches before `call_tool` calls. Deterministic for a seed. It also keeps its
//! own ground truth of which calls found their tool listed, to check the report's hit rate.

use std::collections::{BTreeMap, BTreeSet};

use mws::call::{Call, Status};
use mws::clock;
use mws::store::SearchRecord;
use mws::store::report::WorkingSetRow;
use mws::store::seed::SeedRun;
use time::{Duration, OffsetDateTime};

pub struct Params {
    pub now: OffsetDateTime,
    /// The history covers `[now - days, now)`.
    pub days: i64,
    /// Roughly this many calls (whole sessions are kept).
    pub calls: usize,
    pub seed: u64,
    /// Tool names in popularity order (the first is called most).
    pub tools: Vec<String>,
    /// Always listed.
    pub pins: Vec<String>,
}

pub struct History {
    pub calls: Vec<Call>,
    pub searches: Vec<SearchRecord>,
    pub runs: Vec<SeedRun>,
    pub working_set: Vec<WorkingSetRow>,
    /// Per call (same order as `calls`): was its tool listed when it was made?
    pub listed_at_call: Vec<bool>,
}

impl History {
    /// Ground truth for the window `[since, until]`: (successful calls, of them to a tool listed
    /// at the time and not through call_tool).
    pub fn hits(&self, since: &str, until: &str) -> (u64, u64) {
        let mut ok = 0;
        let mut hits = 0;
        for (c, &listed) in self.calls.iter().zip(&self.listed_at_call) {
            if c.ok() && c.ts.as_str() >= since && c.ts.as_str() <= until {
                ok += 1;
                if listed && c.via != "call_tool" {
                    hits += 1;
                }
            }
        }
        (ok, hits)
    }
}

/// splitmix64: small, fast, good enough for test data.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

// The generator's own promotion policy (shorter than the product's defaults, so that 45 days of
// history see tools promoted and demoted).
const RUN_EVERY_DAYS: i64 = 7;
const WINDOW_DAYS: i64 = 14;
const KEEP_DAYS: i64 = 21;
/// Tools that get most calls.
const HEAD: u64 = 12;
/// Share of calls to any tool at all, the long tail.
const TAIL_PERCENT: u64 = 3;
const MIN_SESSIONS: usize = 2;
const CALLS_PER_SESSION: u64 = 20;
/// Longer than any session (at most 29 calls 30 s apart): no session spans a promotion run, so
/// the listing a session sees is the one of its start.
const SESSION_GUARD: Duration = Duration::minutes(16);

pub fn generate(p: &Params) -> History {
    let mut rng = Rng(p.seed);
    let start = p.now - Duration::days(p.days);
    let sessions = (p.calls as u64 / CALLS_PER_SESSION).max(1);
    let mut starts: Vec<OffsetDateTime> = (0..sessions)
        .map(|_| start + Duration::seconds(rng.below((p.days * 86_400) as u64) as i64))
        .collect();
    for t0 in &mut starts {
        let runs_before = (*t0 - start).whole_seconds() / (RUN_EVERY_DAYS * 86_400);
        let boundary = start + Duration::days(RUN_EVERY_DAYS * (runs_before + 1));
        if boundary - *t0 < SESSION_GUARD && boundary + SESSION_GUARD < p.now {
            *t0 = boundary;
        }
    }
    starts.sort();

    let mut listed: BTreeSet<String> = p.pins.iter().cloned().collect();
    let mut since: BTreeMap<String, String> = listed
        .iter()
        .map(|t| (t.clone(), clock::fmt(start)))
        .collect();
    // Per tool: times of sessions with a success, for the promotion rule.
    let mut ok_sessions: BTreeMap<String, Vec<OffsetDateTime>> = BTreeMap::new();
    let mut ok_calls: BTreeMap<String, u64> = BTreeMap::new();
    let mut next_run = start + Duration::days(RUN_EVERY_DAYS);
    let mut h = History {
        calls: Vec::with_capacity(p.calls + 64),
        searches: Vec::new(),
        runs: Vec::new(),
        working_set: Vec::new(),
        listed_at_call: Vec::with_capacity(p.calls + 64),
    };
    let n = p.tools.len() as u64;
    for (s, &t0) in starts.iter().enumerate() {
        while t0 >= next_run {
            promote(p, &mut h, &mut listed, &mut since, &ok_sessions, next_run);
            next_run += Duration::days(RUN_EVERY_DAYS);
        }
        let (client, source) = match rng.below(10) {
            0..=5 => (Some("claude-code"), "proxy"),
            6..=8 => (Some("codex-mcp-client"), "proxy"),
            _ => (None, "proxy"),
        };
        let transcript = client == Some("claude-code") && rng.chance(30);
        let session_id = format!("{source}:{}:{s}", client.unwrap_or("anon"));
        // Popularity drifts: in the second half of the history half the head is replaced.
        let drift = if t0 > start + Duration::days(p.days / 2) {
            HEAD / 2
        } else {
            0
        };
        let mut touched = BTreeSet::new();
        for k in 0..(CALLS_PER_SESSION / 2 + rng.below(CALLS_PER_SESSION)) {
            let ts = t0 + Duration::seconds(30 * k as i64);
            let index = if rng.chance(TAIL_PERCENT) {
                rng.below(n)
            } else {
                // The minimum of three uniform draws favours the first tools of the head.
                let rank = rng.below(HEAD).min(rng.below(HEAD)).min(rng.below(HEAD));
                (rank + drift) % n
            };
            let tool = &p.tools[index as usize];
            let is_listed = listed.contains(tool);
            let via = if transcript {
                "transcript:claude-code"
            } else if !is_listed && rng.chance(80) {
                "call_tool"
            } else {
                "direct"
            };
            if via == "call_tool" {
                let results = if rng.chance(10) { 0 } else { 1 + rng.below(8) };
                h.searches.push(SearchRecord {
                    ts: clock::fmt(ts - Duration::seconds(5)),
                    session_id: Some(session_id.clone()),
                    client: client.map(str::to_string),
                    mode: if rng.chance(20) { "exact" } else { "ranked" }.into(),
                    result_count: results as i64,
                    reply_bytes: (400 + rng.below(5_600)) as i64,
                });
            }
            let ok = rng.chance(92);
            if ok {
                touched.insert(tool.clone());
                *ok_calls.entry(tool.clone()).or_default() += 1;
            }
            h.calls.push(Call {
                ts: clock::fmt(ts),
                session_id: session_id.clone(),
                tool: tool.clone(),
                via: via.into(),
                status: Some(if ok { Status::Ok } else { Status::Error }),
                ms: Some(5 + rng.below(400) as i64),
                client: client.map(str::to_string),
                client_call_id: client.map(|c| format!("{c}-call-{}", h.calls.len())),
                source_key: format!("gen:{}", h.calls.len()),
                ..Call::default()
            });
            h.listed_at_call.push(is_listed);
        }
        for t in touched {
            ok_sessions.entry(t).or_default().push(t0);
        }
    }
    while next_run <= p.now {
        promote(p, &mut h, &mut listed, &mut since, &ok_sessions, next_run);
        next_run += Duration::days(RUN_EVERY_DAYS);
    }
    let order = p.pins.iter().map(|t| (t, "pin")).chain(
        listed
            .iter()
            .filter(|t| !p.pins.contains(t))
            .map(|t| (t, "promoted")),
    );
    for (pos, (tool, reason)) in order.enumerate() {
        h.working_set.push(WorkingSetRow {
            tool: tool.clone(),
            position: pos as i64 + 1,
            reason: reason.into(),
            since: since[tool].clone(),
            sessions: Some(ok_sessions.get(tool).map_or(0, Vec::len) as i64),
            calls: Some(*ok_calls.get(tool).unwrap_or(&0) as i64),
            last_success: None,
        });
    }
    h
}

/// One promotion run at `at`: promote with ≥ MIN_SESSIONS successful sessions in WINDOW_DAYS,
/// keep while one in KEEP_DAYS, pins always.
fn promote(
    p: &Params,
    h: &mut History,
    listed: &mut BTreeSet<String>,
    since: &mut BTreeMap<String, String>,
    ok_sessions: &BTreeMap<String, Vec<OffsetDateTime>>,
    at: OffsetDateTime,
) {
    let count = |tool: &str, days: i64| {
        ok_sessions.get(tool).map_or(0, |v| {
            v.iter()
                .filter(|&&t| t >= at - Duration::days(days))
                .count()
        })
    };
    let mut after = BTreeSet::new();
    let mut rows = Vec::new();
    let tools: BTreeSet<&String> = p.tools.iter().chain(listed.iter()).collect();
    for tool in tools {
        let before = listed.contains(tool);
        let now_listed = p.pins.contains(tool)
            || count(tool, WINDOW_DAYS) >= MIN_SESSIONS
            || (before && count(tool, KEEP_DAYS) >= 1);
        if !before && !now_listed {
            continue;
        }
        let action = match (before, now_listed) {
            (_, true) if p.pins.contains(tool) => "pinned",
            (false, true) => "promoted",
            (true, true) => "kept",
            _ => "demoted",
        };
        rows.push((
            tool.clone(),
            before,
            now_listed,
            action.into(),
            "generated".into(),
        ));
        if now_listed {
            after.insert(tool.clone());
            if !before {
                since.insert(tool.clone(), clock::fmt(at));
            }
        }
    }
    h.runs.push(SeedRun {
        ts: clock::fmt(at),
        transitions: rows,
    });
    *listed = after;
}
