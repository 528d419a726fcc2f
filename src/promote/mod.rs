//! Promotion (docs/working-set.md): the rules turning history into a working set. The SQL that sums
//! the history is in `store/promote.rs`; this module decides, from those sums and `now`, and must
//! not read the clock, the database or files.
//!
//! Per tool, in this order of precedence:
//! 1. a name the upstream catalog does not list is **dropped** (when a catalog was available);
//! 2. a config `pins` entry is listed (**pinned**);
//! 3. a front-matter pin (`pinFiles`) is listed while `max(last success, first declared)` is
//!    within `pinDecayDays` (**pinned**), else it decays;
//! 4. a tool with successful calls in ≥ `minSessions` distinct sessions and ≥ `minCalls`
//!    successful calls within `windowDays` is **promoted** (or **kept** if it was listed);
//! 5. a tool that was listed stays (**kept**) while its last success is within `keepDays`;
//! 6. with a team database and `promote.team` = N > 0, a tool in the catalog that at least N
//!    teammates used successfully within `windowDays` is **promoted** (or **kept**): the team
//!    prior, so that a new member starts with the team's working set;
//! 7. a listed tool that none of the above keeps is **demoted**; everything else is
//!    **unchanged** (not listed).
//!
//! Only successful calls count. Listing order is append-only: a tool keeps its place while it
//! stays listed; newly listed tools go at the end, config pins first in config order, then the
//! rest alphabetically. A run therefore only appends to or removes from the list, which keeps
//! the clients' prompt caches warm.

pub mod pin_files;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Serialize;
use time::{Duration, OffsetDateTime};

use crate::clock;
use crate::config::Promote;

/// What the history says about one tool (summed by `store::promote::usage`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Usage {
    pub tool: String,
    /// Distinct sessions with a successful call within `windowDays`.
    pub sessions: u32,
    /// Successful calls within `windowDays`.
    pub calls: u32,
    /// Failed calls within `windowDays` (shown, never counted).
    pub failed: u32,
    /// The last successful call, any time (`None`: never succeeded).
    pub last_success: Option<String>,
}

/// Why a tool is in the working set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Why {
    Promoted,
    Pin,
    PinFile,
    /// Listed because teammates use it (`promote.team`), not yet by this user's own calls.
    Team,
}

impl Why {
    pub fn as_str(self) -> &'static str {
        match self {
            Why::Promoted => "promoted",
            Why::Pin => "pin",
            Why::PinFile => "pin-file",
            Why::Team => "team",
        }
    }
    pub fn parse(s: &str) -> Why {
        match s {
            "pin" => Why::Pin,
            "pin-file" => Why::PinFile,
            "team" => Why::Team,
            _ => Why::Promoted,
        }
    }
}

/// A tool in the working set, in listing order.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub tool: String,
    pub why: Why,
    /// When it was listed (kept across runs while it stays).
    pub since: String,
}

/// A front-matter pin: the tool, the file that declares it, and when that was first seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    pub tool: String,
    pub file: String,
    pub first_seen: String,
}

/// What happened to a tool in one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    Promoted,
    Kept,
    Pinned,
    Demoted,
    Dropped,
    Unchanged,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Promoted => "promoted",
            Action::Kept => "kept",
            Action::Pinned => "pinned",
            Action::Demoted => "demoted",
            Action::Dropped => "dropped",
            Action::Unchanged => "unchanged",
        }
    }
}

/// One row of the decision table.
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub tool: String,
    pub before: bool,
    pub after: bool,
    pub action: Action,
    /// The figures or rule behind the action, in words.
    pub detail: String,
    pub sessions: u32,
    pub calls: u32,
    pub last_success: Option<String>,
}

impl Decision {
    /// `action: detail`, as shown in the table and the JSON.
    pub fn reason(&self) -> String {
        format!("{}: {}", self.action.as_str(), self.detail)
    }
}

/// Everything one run decides from.
pub struct Inputs<'a> {
    pub now: OffsetDateTime,
    pub rules: &'a Promote,
    pub pins: &'a [String],
    pub declared: &'a [Declared],
    /// The working set before the run, in listing order.
    pub before: &'a [Listed],
    pub usage: &'a [Usage],
    /// Names the upstream lists; `None` when no catalog was available (nothing is dropped).
    pub catalog: Option<&'a HashSet<String>>,
    /// Tools teammates used successfully within the window, with how many teammates did
    /// (`team::queries::team_priors`); empty without a team database.
    pub team: &'a [(String, u32)],
}

/// The decision table (listed tools first, in listing order) and the new working set.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub decisions: Vec<Decision>,
    pub listing: Vec<Listed>,
}

/// `now - days`, as a stored timestamp (text order is time order).
pub fn cutoff(now: OffsetDateTime, days: u32) -> String {
    clock::fmt(now - Duration::days(i64::from(days)))
}

/// Applies the rules (see the module doc) to every tool that was listed, is pinned or declared,
/// or has calls in the history.
pub fn decide(i: &Inputs) -> Outcome {
    let r = i.rules;
    let now = clock::fmt(i.now);
    let keep = cutoff(i.now, r.keep_days);
    let decay = cutoff(i.now, r.pin_decay_days);
    let usage: HashMap<&str, &Usage> = i.usage.iter().map(|u| (u.tool.as_str(), u)).collect();
    let before: HashMap<&str, &Listed> = i.before.iter().map(|l| (l.tool.as_str(), l)).collect();
    let mut declared: BTreeMap<&str, &Declared> = BTreeMap::new();
    for d in i.declared {
        let e = declared.entry(d.tool.as_str()).or_insert(d);
        if d.first_seen < e.first_seen {
            *e = d;
        }
    }
    let mut names: BTreeSet<&str> = usage.keys().copied().collect();
    names.extend(before.keys());
    names.extend(i.pins.iter().map(String::as_str));
    names.extend(declared.keys());
    let team: HashMap<&str, u32> = i.team.iter().map(|(t, n)| (t.as_str(), *n)).collect();
    // A teammate's tool this user's servers do not offer is no news: left out of the table.
    names.extend(
        team.keys()
            .filter(|t| i.catalog.is_none_or(|c| c.contains(**t))),
    );

    let none = Usage::default();
    let mut decisions = Vec::new();
    let mut why_after: HashMap<String, Why> = HashMap::new();
    for name in names {
        let u = usage.get(name).copied().unwrap_or(&none);
        let was = before.contains_key(name);
        let last = u.last_success.as_deref();
        let in_catalog = i.catalog.is_none_or(|c| c.contains(name));
        let pinned = i.pins.iter().any(|p| p == name);
        let pin_file = declared.get(name).map(|d| {
            let seen = last.map_or(d.first_seen.as_str(), |l| l.max(d.first_seen.as_str()));
            (d, seen >= decay.as_str())
        });
        let promote = u.sessions >= r.min_sessions && u.calls >= r.min_calls && u.calls > 0;
        let kept = was && last.is_some_and(|l| l >= keep.as_str());
        let teammates = team.get(name).copied().unwrap_or(0);
        let prior = r.team > 0 && teammates >= r.team;
        let wanted = pinned || pin_file.is_some_and(|(_, fresh)| fresh) || promote || kept || prior;
        let figures = format!(
            "{} session(s), {} successful call(s) in {}d (needs {} and {})",
            u.sessions, u.calls, r.window_days, r.min_sessions, r.min_calls
        );
        let (after, action, why, detail) = if (wanted || was) && !in_catalog {
            let d = "the upstream catalog does not list it".to_string();
            (false, Action::Dropped, None, d)
        } else if pinned {
            (
                true,
                Action::Pinned,
                Some(Why::Pin),
                "in config `pins`".into(),
            )
        } else if let Some((d, true)) = pin_file {
            let detail = format!("working-set-pins in {}", d.file);
            (true, Action::Pinned, Some(Why::PinFile), detail)
        } else if promote {
            let action = if was { Action::Kept } else { Action::Promoted };
            (true, action, Some(Why::Promoted), figures)
        } else if kept {
            let d = format!("a successful call within keepDays ({}d)", r.keep_days);
            (true, Action::Kept, Some(Why::Promoted), d)
        } else if prior {
            let action = if was { Action::Kept } else { Action::Promoted };
            let d = format!(
                "team prior: {teammates} teammate(s) used it in {}d (promote.team: {})",
                r.window_days, r.team
            );
            (true, action, Some(Why::Team), d)
        } else if was {
            let unpinned = before.get(name).is_some_and(|l| l.why == Why::Pin);
            let d = match pin_file {
                Some(_) => format!("front-matter pin unused for {}d", r.pin_decay_days),
                None if unpinned => format!(
                    "no longer in `pins`, and no successful call within keepDays ({}d)",
                    r.keep_days
                ),
                None => format!("no successful call within keepDays ({}d)", r.keep_days),
            };
            (false, Action::Demoted, None, d)
        } else if u.calls == 0 && u.failed > 0 {
            let d = format!(
                "{} failed call(s) in {}d; only successes count",
                u.failed, r.window_days
            );
            (false, Action::Unchanged, None, d)
        } else if let Some((_, false)) = pin_file {
            let d = format!("front-matter pin unused for {}d", r.pin_decay_days);
            (false, Action::Unchanged, None, d)
        } else {
            (false, Action::Unchanged, None, figures)
        };
        if let Some(w) = why {
            why_after.insert(name.to_string(), w);
        }
        decisions.push(Decision {
            tool: name.to_string(),
            before: was,
            after,
            action,
            detail,
            sessions: u.sessions,
            calls: u.calls,
            last_success: u.last_success.clone(),
        });
    }

    let listing = order(i, &why_after, &now);
    let position: HashMap<&str, usize> = listing
        .iter()
        .enumerate()
        .map(|(n, l)| (l.tool.as_str(), n))
        .collect();
    decisions.sort_by(|a, b| {
        let pa = position.get(a.tool.as_str());
        let pb = position.get(b.tool.as_str());
        match (pa, pb) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => (b.sessions, b.calls, &a.tool).cmp(&(a.sessions, a.calls, &b.tool)),
        }
    });
    Outcome { decisions, listing }
}

/// Append-only listing order: survivors in their old order, then new config pins in config
/// order, then the other newcomers alphabetically.
fn order(i: &Inputs, why: &HashMap<String, Why>, now: &str) -> Vec<Listed> {
    let mut out: Vec<Listed> = i
        .before
        .iter()
        .filter_map(|l| {
            why.get(&l.tool).map(|w| Listed {
                tool: l.tool.clone(),
                why: *w,
                since: l.since.clone(),
            })
        })
        .collect();
    let mut seen: HashSet<String> = out.iter().map(|l| l.tool.clone()).collect();
    let mut new = |tool: &str, out: &mut Vec<Listed>| {
        if let Some(w) = why.get(tool)
            && seen.insert(tool.to_string())
        {
            out.push(Listed {
                tool: tool.to_string(),
                why: *w,
                since: now.to_string(),
            });
        }
    };
    for p in i.pins {
        new(p, &mut out);
    }
    let rest: BTreeSet<&String> = why.keys().collect();
    for t in rest {
        new(t, &mut out);
    }
    out
}

#[cfg(test)]
pub(crate) mod tests;
