//! `mws what-if` (docs/working-set.md): replays the recorded calls day by day as if `mws promote`
//! had run at every midnight (UTC) under given settings, starting from an empty working set plus
//! the config pins, and measures each setting. Every nightly decision is `promote::decide` itself,
//! fed the same sums `store::promote::usage` would have returned at that moment; this module only
//! keeps those sums up to date as the nights pass (`replay.rs`). Pure: no I/O, no clock, no SQL.
//!
//! The history is loaded once into per-tool, per-day counts (`HistoryBuilder`), so one pass over
//! the nights serves every setting. A run at midnight sees every call before it and none after;
//! a call on day `d` finds the listing of the run at the start of `d`.

pub mod grid;
pub mod projects;
pub mod render;
mod replay;

pub use projects::{ProjectFigures, ProjectHistoryBuilder, replay_projects};
pub use replay::replay;

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use time::{Date, Duration, OffsetDateTime, Time};

use crate::config::Promote;

const NO_DAY: u32 = u32::MAX;

/// One tool's counts per day since the first call.
#[derive(Debug, Clone, Default)]
struct ToolDays {
    ok: Vec<u32>,
    failed: Vec<u32>,
    /// Successful calls inside the measured span.
    ok_in_span: Vec<u32>,
}

/// The recorded calls, reduced to what the replay needs. Built by `HistoryBuilder`.
#[derive(Debug, Clone)]
pub struct History {
    first_day: Date,
    tools: Vec<String>,
    tool_ids: HashMap<String, u32>,
    by_tool: Vec<ToolDays>,
    /// `(day, tool, previous day)`: a session's first successful call to a tool on `day`, whose
    /// previous one was on `previous day` (`NO_DAY`: none). Ordered by day. Counting distinct
    /// sessions in a window of days is counting sessions whose latest day is in it.
    session_moves: Vec<(u32, u32, u32)>,
    /// Calls (any outcome) inside the span, per day.
    calls_in_span: Vec<u64>,
    days: u32,
}

/// Takes calls in time order (`store::whatif_scan_calls`) and counts them.
pub struct HistoryBuilder {
    since: String,
    until: String,
    session_ids: HashMap<String, u32>,
    last_day: HashMap<(u32, u32), u32>,
    day_text: String,
    day: u32,
    h: History,
}

impl HistoryBuilder {
    /// Calls with `since <= ts <= until` are measured; all calls feed the decisions.
    pub fn new(since: &str, until: &str) -> HistoryBuilder {
        HistoryBuilder {
            since: since.to_string(),
            until: until.to_string(),
            session_ids: HashMap::new(),
            last_day: HashMap::new(),
            day_text: String::new(),
            day: 0,
            h: History {
                first_day: Date::MIN,
                tools: Vec::new(),
                tool_ids: HashMap::new(),
                by_tool: Vec::new(),
                session_moves: Vec::new(),
                calls_in_span: Vec::new(),
                days: 0,
            },
        }
    }

    /// Adds one call; `ts` in the stored form, never earlier than the previous call's. A `ts`
    /// that does not start with a date is skipped (returns false).
    pub fn add(&mut self, ts: &str, tool: &str, session: &str, ok: bool) -> bool {
        let Some(date_text) = ts.get(..10) else {
            return false;
        };
        if date_text != self.day_text {
            let Some(date) = parse_date(date_text) else {
                return false;
            };
            if self.h.tools.is_empty() && self.day_text.is_empty() {
                self.h.first_day = date;
            }
            let d = (date - self.h.first_day).whole_days();
            if d < i64::from(self.day) {
                return false;
            }
            self.day = d as u32;
            self.day_text = date_text.to_string();
            self.grow(self.day + 1);
        }
        let day = self.day;
        let t = match self.h.tool_ids.get(tool) {
            Some(t) => *t,
            None => {
                let t = self.h.tools.len() as u32;
                self.h.tool_ids.insert(tool.to_string(), t);
                self.h.tools.push(tool.to_string());
                let n = self.h.days as usize;
                self.h.by_tool.push(ToolDays {
                    ok: vec![0; n],
                    failed: vec![0; n],
                    ok_in_span: vec![0; n],
                });
                t
            }
        };
        let in_span = ts >= self.since.as_str() && ts <= self.until.as_str();
        let counts = &mut self.h.by_tool[t as usize];
        if in_span {
            self.h.calls_in_span[day as usize] += 1;
        }
        if !ok {
            counts.failed[day as usize] += 1;
            return true;
        }
        counts.ok[day as usize] += 1;
        if in_span {
            counts.ok_in_span[day as usize] += 1;
        }
        let next = self.session_ids.len() as u32;
        let s = *self.session_ids.entry_ref_or(session, next);
        let last = self.last_day.entry((t, s)).or_insert(NO_DAY);
        if *last != day {
            self.h.session_moves.push((day, t, *last));
            *last = day;
        }
        true
    }

    fn grow(&mut self, days: u32) {
        if days <= self.h.days {
            return;
        }
        self.h.days = days;
        let n = days as usize;
        self.h.calls_in_span.resize(n, 0);
        for c in &mut self.h.by_tool {
            c.ok.resize(n, 0);
            c.failed.resize(n, 0);
            c.ok_in_span.resize(n, 0);
        }
    }

    /// The history, replayed up to the day of `until` (or the last call's day, if later).
    pub fn finish(mut self) -> History {
        if let Some(until) = self.until.get(..10).and_then(parse_date)
            && !self.h.tools.is_empty()
        {
            let d = (until - self.h.first_day).whole_days();
            if d >= 0 {
                self.grow(d as u32 + 1);
            }
        }
        self.h
    }
}

/// `HashMap<String, u32>::entry` without allocating for a key that is already there.
trait EntryRef {
    fn entry_ref_or(&mut self, k: &str, v: u32) -> &u32;
}
impl EntryRef for HashMap<String, u32> {
    fn entry_ref_or(&mut self, k: &str, v: u32) -> &u32 {
        if !self.contains_key(k) {
            self.insert(k.to_string(), v);
        }
        &self[k]
    }
}

fn parse_date(s: &str) -> Option<Date> {
    let b = s.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<u32> {
        let mut n = 0u32;
        for &c in b.get(r)? {
            if !c.is_ascii_digit() {
                return None;
            }
            n = n * 10 + u32::from(c - b'0');
        }
        Some(n)
    };
    let month = time::Month::try_from(num(5..7)? as u8).ok()?;
    Date::from_calendar_date(num(0..4)? as i32, month, num(8..10)? as u8).ok()
}

impl History {
    /// Whether any call was recorded.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Successful calls inside the span (every setting's denominator).
    pub fn ok_in_span(&self) -> u64 {
        let per_tool = self.by_tool.iter().flat_map(|t| t.ok_in_span.iter());
        per_tool.map(|&n| u64::from(n)).sum()
    }

    fn midnight(&self, day: u32) -> OffsetDateTime {
        self.first_day.with_time(Time::MIDNIGHT).assume_utc() + Duration::days(i64::from(day))
    }
}

/// One setting to replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub rules: Promote,
    /// The config's own setting.
    pub current: bool,
}

/// What one setting would have given.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub min_sessions: u32,
    pub min_calls: u32,
    pub window_days: u32,
    pub keep_days: u32,
    pub current: bool,
    /// Successful calls in the span (the denominator).
    pub ok_calls: u64,
    /// Of those, calls to a tool listed at that moment.
    pub hits: u64,
    /// `hits / ok_calls`; `None` without successful calls.
    pub hit_rate: Option<f64>,
    /// Successful calls to a tool that was not listed: each needed a search first.
    pub needed_search: u64,
    /// Tokens of the `tools/list` result, averaged over the calls in the span (`None`: no
    /// catalog to count).
    pub avg_listed_tokens: Option<f64>,
    /// Tokens listed after the last night, and how many upstream tools that is.
    pub end_listed_tokens: Option<usize>,
    pub end_listed_tools: usize,
    /// Nights in the span whose run changed the listing (each costs the prompt cache).
    pub listing_changes: u64,
}

/// What the replay asks of the world outside the history.
pub struct World<'a> {
    pub pins: &'a [String],
    /// Names the upstream lists now (`None`: nothing is dropped).
    pub catalog: Option<&'a HashSet<String>>,
    /// Tokens of the `tools/list` a client gets for this working set (`None`: unknown).
    pub tokens: &'a mut dyn FnMut(&[String]) -> Option<usize>,
    /// Runs at or after this time count as listing changes (the span's start).
    pub since: &'a str,
}

#[cfg(test)]
mod tests;
