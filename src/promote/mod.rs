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
pub mod projects;
mod rules;

use std::collections::{BTreeSet, HashMap, HashSet};

use serde::Serialize;
use time::{Duration, OffsetDateTime};

use crate::clock;
use crate::config::Promote;
use rules::Lookup;

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
    let now = clock::fmt(i.now);
    let look = Lookup::new(i);
    let mut decisions = Vec::new();
    let mut why_after: HashMap<String, Why> = HashMap::new();
    for name in look.names(i) {
        let (decision, why) = look.decide_one(i, name);
        if let Some(w) = why {
            why_after.insert(name.to_string(), w);
        }
        decisions.push(decision);
    }
    let listing = order(i, &why_after, &now);
    sort_by_listing(&mut decisions, &listing);
    Outcome { decisions, listing }
}

/// Sorts the decision table: listed tools in listing order, then the rest by sessions and
/// calls (most first), then by name.
fn sort_by_listing(decisions: &mut [Decision], listing: &[Listed]) {
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
