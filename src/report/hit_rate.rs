//! The working-set hit rate: which tool was listed when, rebuilt from the promotion transition
//! log, and the share of successful calls that found their tool already listed. Pure.
//!
//! A tool's state before its first logged run is that run's `before`; after each run it is that
//! run's `after`. A run that has no row for a tool leaves it as it was, so the rule holds whether
//! the log names every tool in every run or only the ones that changed. Tools in the working set
//! that the log never mentions (a database from before the log, or an empty log) count as listed
//! from their `working_set.since`; config `pins` that neither mentions count as listed throughout.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::store::report::{Interval, Span, TransitionRow, WorkingSetRow};

/// The spans of time, clipped to the window, during which each tool was listed.
pub fn listed_intervals(
    transitions: &[TransitionRow],
    working_set: &[WorkingSetRow],
    pins: &[String],
    span: &Span,
) -> Vec<Interval> {
    // Per tool, its rows in run order (the caller's order is by run time, then run id).
    let mut by_tool: BTreeMap<&str, Vec<&TransitionRow>> = BTreeMap::new();
    for t in transitions {
        by_tool.entry(t.tool.as_str()).or_default().push(t);
    }
    let mut raw = Vec::new();
    for (tool, rows) in &by_tool {
        let mut rows = rows.clone();
        rows.sort_by(|a, b| (&a.run_ts, a.run_id).cmp(&(&b.run_ts, b.run_id)));
        // `open` is the start of the current listed stretch; "" is the beginning of time.
        let mut open: Option<&str> = rows[0].before.then_some("");
        for r in &rows {
            match (open, r.after) {
                (Some(from), false) => {
                    raw.push(interval(tool, from, Some(&r.run_ts)));
                    open = None;
                }
                (None, true) => open = Some(&r.run_ts),
                _ => {}
            }
        }
        if let Some(from) = open {
            raw.push(interval(tool, from, None));
        }
    }
    for w in working_set {
        if !by_tool.contains_key(w.tool.as_str()) {
            raw.push(interval(&w.tool, &w.since, None));
        }
    }
    for p in pins {
        if !by_tool.contains_key(p.as_str()) && !working_set.iter().any(|w| &w.tool == p) {
            raw.push(interval(p, "", None));
        }
    }
    raw.into_iter().filter_map(|i| clip(i, span)).collect()
}

fn interval(tool: &str, from: &str, to: Option<&str>) -> Interval {
    Interval {
        tool: tool.to_string(),
        from: from.to_string(),
        to: to.map(str::to_string),
    }
}

/// Cuts an interval to the window; `None` when nothing of it is inside.
fn clip(mut i: Interval, span: &Span) -> Option<Interval> {
    if i.from.as_str() < span.since.as_str() {
        i.from.clone_from(&span.since);
    }
    if i.from.as_str() > span.until.as_str() {
        return None;
    }
    if let Some(to) = &i.to
        && to.as_str() <= i.from.as_str()
    {
        return None;
    }
    Some(i)
}

/// The listed intervals by tool, to ask whether a tool was listed at a given time.
#[derive(Debug, Clone, Default)]
pub struct ListedAt {
    by_tool: HashMap<String, Vec<(String, Option<String>)>>,
}

impl ListedAt {
    pub fn new(intervals: &[Interval]) -> ListedAt {
        let mut by_tool: HashMap<String, Vec<(String, Option<String>)>> = HashMap::new();
        for i in intervals {
            by_tool
                .entry(i.tool.clone())
                .or_default()
                .push((i.from.clone(), i.to.clone()));
        }
        ListedAt { by_tool }
    }

    /// Whether `tool` was listed at `ts` (an interval's `from` is inclusive, its `to` exclusive).
    pub fn contains(&self, tool: &str, ts: &str) -> bool {
        self.by_tool.get(tool).is_some_and(|spans| {
            spans
                .iter()
                .any(|(from, to)| from.as_str() <= ts && to.as_deref().is_none_or(|to| ts < to))
        })
    }
}

/// The hit-rate figure.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HitRate {
    /// Successful calls in the window (the denominator).
    pub ok_calls: u64,
    /// Of those, calls to a tool that was listed at the time, not made through `call_tool`.
    pub hits: u64,
    /// Successful calls made through `call_tool` (the tool had to be found first).
    pub via_call_tool: u64,
    /// Successful direct calls to a tool that was not listed at the time (an older listing, or a
    /// client that knew the name).
    pub unlisted_direct: u64,
    /// `hits / ok_calls`; `None` when there were no successful calls.
    pub rate: Option<f64>,
}

impl HitRate {
    /// `ok_calls` and `ok_not_call_tool` are window totals; `hits` is the count inside the
    /// listed intervals.
    pub fn new(ok_calls: u64, ok_not_call_tool: u64, hits: u64) -> HitRate {
        HitRate {
            ok_calls,
            hits,
            via_call_tool: ok_calls - ok_not_call_tool,
            unlisted_direct: ok_not_call_tool.saturating_sub(hits),
            rate: (ok_calls > 0).then(|| hits as f64 / ok_calls as f64),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(run_id: i64, day: u32, tool: &str, before: bool, after: bool) -> TransitionRow {
        TransitionRow {
            run_id,
            run_ts: ts(day),
            tool: tool.into(),
            before,
            after,
        }
    }
    fn ts(day: u32) -> String {
        format!("2026-11-{day:02}T00:00:00.000Z")
    }
    fn iv(tool: &str, from: u32, to: Option<u32>) -> Interval {
        interval(tool, &ts(from), to.map(ts).as_deref())
    }
    fn ws(tool: &str, since: u32) -> WorkingSetRow {
        WorkingSetRow {
            tool: tool.into(),
            position: 0,
            reason: "pin".into(),
            since: ts(since),
            sessions: None,
            calls: None,
            last_success: None,
        }
    }

    #[test]
    fn intervals_from_the_log() {
        let span = Span {
            since: ts(2),
            until: ts(28),
        };
        // (log, working set, want)
        let cases: Vec<(Vec<TransitionRow>, Vec<WorkingSetRow>, Vec<Interval>)> = vec![
            // promoted on day 10, demoted on day 20
            (
                vec![t(1, 10, "a", false, true), t(2, 20, "a", true, false)],
                vec![],
                vec![iv("a", 10, Some(20))],
            ),
            // listed before the first run (its `before`), kept, then dropped: clipped at since
            (
                vec![t(1, 10, "b", true, true), t(2, 20, "b", true, false)],
                vec![],
                vec![iv("b", 2, Some(20))],
            ),
            // a sparse log: run 2 has no row for c, so c stays listed
            (
                vec![t(1, 10, "c", false, true), t(3, 25, "c", true, true)],
                vec![],
                vec![iv("c", 10, None)],
            ),
            // rows out of order are put in run order; demoted before the window starts: nothing
            (
                vec![t(2, 1, "d", true, false), t(1, 1, "d", false, true)],
                vec![],
                vec![],
            ),
            // in the working set but never in the log: listed from `since`; a logged tool's
            // working-set row adds nothing
            (
                vec![t(1, 10, "e", false, true)],
                vec![ws("e", 3), ws("pin", 5)],
                vec![iv("e", 10, None), iv("pin", 5, None)],
            ),
            // listed only after the window ends
            (vec![t(1, 29, "f", false, true)], vec![], vec![]),
        ];
        for (log, set, want) in cases {
            assert_eq!(listed_intervals(&log, &set, &[], &span), want, "{log:?}");
        }
        // A config pin that neither the log nor the working set names: listed all along. One
        // that the log names follows the log.
        let log = vec![t(1, 10, "p2", false, true)];
        assert_eq!(
            listed_intervals(&log, &[], &["p1".into(), "p2".into()], &span),
            vec![iv("p2", 10, None), iv("p1", 2, None)]
        );
    }

    #[test]
    fn rate_parts_add_up() {
        let h = HitRate::new(10, 7, 5);
        assert_eq!((h.hits, h.via_call_tool, h.unlisted_direct), (5, 3, 2));
        assert_eq!(h.rate, Some(0.5));
        assert_eq!(HitRate::new(0, 0, 0).rate, None);
    }
}
