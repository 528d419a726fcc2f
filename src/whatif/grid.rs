//! The settings `mws what-if` replays: a grid over minSessions × minCalls × windowDays × keepDays
//! (flags as comma lists, or `DEFAULT_*`), plus the config's own setting, and the rule that
//! recommends one. Pure; rejects empty and absurd grids with a message naming the flag.

use serde::Serialize;

use super::{Figures, Setting};
use crate::config::Promote;

/// The default grid: 3 × 2 × 2 × 2 = 24 settings around the defaults.
pub const DEFAULT_MIN_SESSIONS: &[u32] = &[1, 2, 3];
pub const DEFAULT_MIN_CALLS: &[u32] = &[1, 3];
pub const DEFAULT_WINDOW_DAYS: &[u32] = &[14, 30];
pub const DEFAULT_KEEP_DAYS: &[u32] = &[14, 30];

/// Most settings one run replays. Raising it lets a run take proportionally longer.
pub const MAX_POINTS: usize = 1000;
/// Longest window or keep period, in days (ten years).
pub const MAX_DAYS: u32 = 3650;
/// Settings whose hit rate is within this of the best count as equally good; among them the one
/// listing the fewest tokens is recommended. Raising it trades hit rate for tokens.
pub const HIT_RATE_TOLERANCE: f64 = 0.01;

/// One grid axis as given on the command line (`1,2,3`), or `None` for its default.
#[derive(Debug, Clone, Copy, Default)]
pub struct Axes<'a> {
    pub min_sessions: Option<&'a str>,
    pub min_calls: Option<&'a str>,
    pub window_days: Option<&'a str>,
    pub keep_days: Option<&'a str>,
}

fn axis(flag: &str, given: Option<&str>, default: &[u32], max: u32) -> Result<Vec<u32>, String> {
    let Some(text) = given else {
        return Ok(default.to_vec());
    };
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim) {
        if part.is_empty() {
            return Err(format!(
                "--{flag} {text:?}: an empty value; give whole numbers separated by commas, like 1,2,3"
            ));
        }
        let n: u32 = part.parse().map_err(|_| {
            format!("--{flag} {text:?}: {part:?} is not a whole number of at least 1")
        })?;
        if n == 0 {
            return Err(format!(
                "--{flag} {text:?}: 0 is not allowed, the least is 1"
            ));
        }
        if n > max {
            return Err(format!("--{flag} {text:?}: {n} is more than {max}"));
        }
        if !out.contains(&n) {
            out.push(n);
        }
    }
    Ok(out)
}

/// The settings to replay: the config's own first, then the grid without it.
pub fn settings(current: &Promote, axes: &Axes) -> Result<Vec<Setting>, String> {
    let ms = axis(
        "min-sessions",
        axes.min_sessions,
        DEFAULT_MIN_SESSIONS,
        u32::MAX,
    )?;
    let mc = axis("min-calls", axes.min_calls, DEFAULT_MIN_CALLS, u32::MAX)?;
    let wd = axis(
        "window-days",
        axes.window_days,
        DEFAULT_WINDOW_DAYS,
        MAX_DAYS,
    )?;
    let kd = axis("keep-days", axes.keep_days, DEFAULT_KEEP_DAYS, MAX_DAYS)?;
    let points = ms.len() * mc.len() * wd.len() * kd.len();
    if points > MAX_POINTS {
        return Err(format!(
            "the grid has {points} settings ({} × {} × {} × {}); the most is {MAX_POINTS}: give \
             fewer values to --min-sessions, --min-calls, --window-days or --keep-days",
            ms.len(),
            mc.len(),
            wd.len(),
            kd.len()
        ));
    }
    if current.window_days == 0 {
        return Err("the config's promote.windowDays is 0; the least is 1".into());
    }
    let mut out = vec![Setting {
        rules: current.clone(),
        current: true,
    }];
    for &min_sessions in &ms {
        for &min_calls in &mc {
            for &window_days in &wd {
                for &keep_days in &kd {
                    let rules = Promote {
                        min_sessions,
                        min_calls,
                        window_days,
                        keep_days,
                        ..current.clone()
                    };
                    if rules != *current {
                        out.push(Setting {
                            rules,
                            current: false,
                        });
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The recommended setting and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Recommendation {
    /// Index into the figures.
    pub index: usize,
    pub reason: String,
}

/// Among the settings whose hit rate is within `HIT_RATE_TOLERANCE` of the best, the one with
/// the fewest listed tokens on average, then the fewest listing changes, then the current one,
/// then the first. `None` when no setting has a hit rate (no successful calls).
pub fn recommend(figures: &[Figures]) -> Option<Recommendation> {
    let best = figures
        .iter()
        .filter_map(|f| f.hit_rate)
        .fold(None, |m: Option<f64>, r| Some(m.map_or(r, |m| m.max(r))))?;
    let cost = |f: &Figures| f.avg_listed_tokens.unwrap_or(f64::INFINITY);
    let (index, chosen) = figures
        .iter()
        .enumerate()
        .filter(|(_, f)| f.hit_rate.is_some_and(|r| r >= best - HIT_RATE_TOLERANCE))
        .min_by(|(_, a), (_, b)| {
            cost(a)
                .total_cmp(&cost(b))
                .then(a.listing_changes.cmp(&b.listing_changes))
                .then(b.current.cmp(&a.current))
        })?;
    let pct = |r: Option<f64>| r.map_or("-".into(), |r| format!("{:.1}%", r * 100.0));
    let tokens = chosen.avg_listed_tokens.map_or(String::new(), |t| {
        format!(", {t:.0} tokens listed on average")
    });
    let reason = if chosen.current {
        format!(
            "the current setting: hit rate {} (best {}){tokens}; no other setting within {:.0} \
             point(s) of the best hit rate lists fewer tokens",
            pct(chosen.hit_rate),
            pct(Some(best)),
            HIT_RATE_TOLERANCE * 100.0
        )
    } else {
        format!(
            "hit rate {} (best {}){tokens}: the fewest listed tokens among the settings within \
             {:.0} point(s) of the best hit rate",
            pct(chosen.hit_rate),
            pct(Some(best)),
            HIT_RATE_TOLERANCE * 100.0
        )
    };
    Some(Recommendation { index, reason })
}
