//! The night-by-night replay behind `mws what-if`: at each midnight, bring the per-tool sums up to
//! date, run `promote::decide` for every setting on the sums of its window, then count the day's
//! calls against each setting's new listing. Pure: no I/O, no clock, no SQL.

use std::collections::HashMap;

use time::OffsetDateTime;

use super::{Figures, History, NO_DAY, Setting, World};
use crate::promote::{self, Inputs, Listed, Usage};

/// One setting's listing as the nights pass, and its figures so far.
struct State {
    listing: Vec<Listed>,
    /// Per tool: whether `listing` holds it.
    listed: Vec<bool>,
    f: Figures,
    token_sum: f64,
    token_known: bool,
}

/// What the runs so far have seen of each tool: the sums `store::promote::usage` reads.
struct Seen {
    /// Per tool: how many sessions have their latest successful call on each day.
    latest: Vec<Vec<u32>>,
    /// Per tool: the day of its latest successful call (`NO_DAY`: none).
    last_ok: Vec<u32>,
    /// Per tool: the day of its latest call of any outcome (`NO_DAY`: none).
    last_any: Vec<u32>,
    /// How many of the history's `session_moves` are counted in `latest`.
    moves_done: usize,
}

/// One midnight's run, as every setting sees it.
struct Night<'a> {
    h: &'a History,
    /// Each day's midnight in the stored form.
    day_text: &'a [String],
    seen: &'a Seen,
    now: OffsetDateTime,
    /// Whether a change of listing at this run counts (in the span, and not the first night).
    counts_change: bool,
}

/// Tokens of each listing already counted, so each distinct listing is counted once.
#[derive(Default)]
struct TokenCache(HashMap<Vec<String>, Option<usize>>);

/// Replays `history` under each setting. Settings must have `windowDays >= 1`.
pub fn replay(history: &History, settings: &[Setting], world: &mut World) -> Vec<Figures> {
    let h = history;
    let ok_calls = h.ok_in_span();
    let span_calls: u64 = h.calls_in_span.iter().sum();
    let windows = distinct_windows(settings);
    let mut tokens = TokenCache::default();
    let mut states: Vec<State> = settings
        .iter()
        .map(|s| State::new(s, ok_calls, h.tools.len()))
        .collect();
    let mut seen = Seen::new(h);
    let day_text: Vec<String> = (0..h.days)
        .map(|d| crate::clock::fmt(h.midnight(d)))
        .collect();

    for night in 0..h.days {
        // Everything before this midnight is history now.
        if night > 0 {
            seen.close_day(h, night - 1);
        }
        let n = Night {
            h,
            day_text: &day_text,
            seen: &seen,
            now: h.midnight(night),
            counts_change: night > 0 && day_text[night as usize].as_str() >= world.since,
        };
        for &w in &windows {
            let usage_all = n.usage_in_window(night.saturating_sub(w), night);
            for (s, st) in settings.iter().zip(states.iter_mut()) {
                if s.rules.window_days == w {
                    n.promote(&usage_all, s, st, world);
                }
            }
        }
        for st in &mut states {
            st.count_day(h, night, &mut tokens, world);
        }
    }
    states
        .into_iter()
        .map(|st| st.finish(ok_calls, span_calls))
        .collect()
}

/// The settings' window lengths, each once, shortest first.
fn distinct_windows(settings: &[Setting]) -> Vec<u32> {
    let mut windows: Vec<u32> = settings.iter().map(|s| s.rules.window_days).collect();
    windows.sort_unstable();
    windows.dedup();
    windows
}

impl TokenCache {
    /// Tokens of the `tools/list` for `names`, asking `world` the first time only.
    fn get(&mut self, names: Vec<String>, world: &mut World) -> Option<usize> {
        *self
            .0
            .entry(names)
            .or_insert_with_key(|k| (world.tokens)(k))
    }
}

impl Seen {
    /// Nothing seen yet: no session, no call.
    fn new(h: &History) -> Seen {
        Seen {
            latest: vec![vec![0; h.days as usize]; h.tools.len()],
            last_ok: vec![NO_DAY; h.tools.len()],
            last_any: vec![NO_DAY; h.tools.len()],
            moves_done: 0,
        }
    }

    /// Takes in day `d`'s calls: its sessions' moves and each tool's latest call.
    fn close_day(&mut self, h: &History, d: u32) {
        while let Some(&(day, t, prev)) = h.session_moves.get(self.moves_done) {
            if day > d {
                break;
            }
            if prev != NO_DAY {
                self.latest[t as usize][prev as usize] -= 1;
            }
            self.latest[t as usize][day as usize] += 1;
            self.moves_done += 1;
        }
        for (t, c) in h.by_tool.iter().enumerate() {
            if c.ok[d as usize] > 0 {
                self.last_ok[t] = d;
            }
            if c.ok[d as usize] + c.failed[d as usize] > 0 {
                self.last_any[t] = d;
            }
        }
    }
}

impl Night<'_> {
    /// Per tool, its usage over days `from..night` (`None`: no call since `from`).
    fn usage_in_window(&self, from: u32, night: u32) -> Vec<Option<Usage>> {
        let (h, seen) = (self.h, self.seen);
        (0..h.tools.len())
            .map(|t| {
                if seen.last_any[t] == NO_DAY || seen.last_any[t] < from {
                    return None;
                }
                let c = &h.by_tool[t];
                let range = from as usize..night as usize;
                Some(Usage {
                    tool: h.tools[t].clone(),
                    sessions: seen.latest[t][range.clone()].iter().sum(),
                    calls: c.ok[range.clone()].iter().sum(),
                    failed: c.failed[range].iter().sum(),
                    last_success: self.last_success(t),
                })
            })
            .collect()
    }

    /// The midnight of tool `t`'s latest successful day (`None`: never succeeded).
    fn last_success(&self, t: usize) -> Option<String> {
        let last = self.seen.last_ok[t];
        (last != NO_DAY).then(|| self.day_text[last as usize].clone())
    }

    /// Runs `mws promote` for one setting and takes its listing.
    fn promote(&self, usage_all: &[Option<Usage>], s: &Setting, st: &mut State, world: &World) {
        let usage = self.usage_with_listed(usage_all, &st.listing);
        let out = promote::decide(&Inputs {
            now: self.now,
            rules: &s.rules,
            pins: world.pins,
            declared: &[],
            before: &st.listing,
            usage: &usage,
            catalog: world.catalog,
            team: &[],
        });
        st.take_listing(self.h, out.listing, self.counts_change);
    }

    /// The window's usage, plus the listed tools without calls in the window, as `mws promote`
    /// asks the store about them too.
    fn usage_with_listed(&self, usage_all: &[Option<Usage>], listing: &[Listed]) -> Vec<Usage> {
        let mut usage: Vec<Usage> = usage_all.iter().flatten().cloned().collect();
        for l in listing {
            if let Some(&t) = self.h.tool_ids.get(&l.tool)
                && let t = t as usize
                && usage_all[t].is_none()
                && self.seen.last_ok[t] != NO_DAY
            {
                usage.push(Usage {
                    tool: l.tool.clone(),
                    last_success: self.last_success(t),
                    ..Usage::default()
                });
            }
        }
        usage
    }
}

impl State {
    /// An empty listing and no figures yet for setting `s`.
    fn new(s: &Setting, ok_calls: u64, tools: usize) -> State {
        State {
            listing: Vec::new(),
            listed: vec![false; tools],
            f: Figures {
                min_sessions: s.rules.min_sessions,
                min_calls: s.rules.min_calls,
                window_days: s.rules.window_days,
                keep_days: s.rules.keep_days,
                current: s.current,
                ok_calls,
                hits: 0,
                hit_rate: None,
                needed_search: 0,
                avg_listed_tokens: None,
                end_listed_tokens: None,
                end_listed_tools: 0,
                listing_changes: 0,
            },
            token_sum: 0.0,
            token_known: true,
        }
    }

    /// Takes a run's listing, counting it as a change if it names other tools and `counts`.
    fn take_listing(&mut self, h: &History, listing: Vec<Listed>, counts: bool) {
        let changed = listing.len() != self.listing.len()
            || listing
                .iter()
                .zip(&self.listing)
                .any(|(a, b)| a.tool != b.tool);
        if changed && counts {
            self.f.listing_changes += 1;
        }
        self.listing = listing;
        self.listed.iter_mut().for_each(|l| *l = false);
        for l in &self.listing {
            if let Some(&t) = h.tool_ids.get(&l.tool) {
                self.listed[t as usize] = true;
            }
        }
    }

    /// Counts day `night`'s calls against the listing of that night: tokens, hits, and after
    /// the last night the listing's size.
    fn count_day(&mut self, h: &History, night: u32, tokens: &mut TokenCache, world: &mut World) {
        let day = night as usize;
        let names: Vec<String> = self.listing.iter().map(|l| l.tool.clone()).collect();
        let listed_tokens = tokens.get(names, world);
        if h.calls_in_span[day] > 0 {
            match listed_tokens {
                Some(n) => self.token_sum += n as f64 * h.calls_in_span[day] as f64,
                None => self.token_known = false,
            }
        }
        for (t, c) in h.by_tool.iter().enumerate() {
            if self.listed[t] {
                self.f.hits += u64::from(c.ok_in_span[day]);
            }
        }
        if night + 1 == h.days {
            self.f.end_listed_tokens = listed_tokens;
            self.f.end_listed_tools = self.listing.len();
        }
    }

    /// The setting's figures, with the rates worked out over the span.
    fn finish(mut self, ok_calls: u64, span_calls: u64) -> Figures {
        let f = &mut self.f;
        f.needed_search = ok_calls - f.hits;
        f.hit_rate = (ok_calls > 0).then(|| f.hits as f64 / ok_calls as f64);
        f.avg_listed_tokens = if span_calls == 0 {
            f.end_listed_tokens.map(|n| n as f64)
        } else {
            self.token_known.then(|| self.token_sum / span_calls as f64)
        };
        self.f
    }
}
