//! The promotion rules applied to one tool: what they look at (`Signals`, read off the run's
//! inputs by `Lookup`) and the first rule, in the order of precedence the parent module lists,
//! that decides it (`verdict`). Pure, like its parent.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::{Action, Decision, Declared, Inputs, Listed, Usage, Why, cutoff};
use crate::config::Promote;

/// One run's inputs by tool name, and the cutoffs its `now` sets.
pub(super) struct Lookup<'a> {
    /// `now - keepDays`.
    keep: String,
    /// `now - pinDecayDays`.
    decay: String,
    usage: HashMap<&'a str, &'a Usage>,
    before: HashMap<&'a str, &'a Listed>,
    /// Per tool, its earliest front-matter declaration.
    declared: BTreeMap<&'a str, &'a Declared>,
    /// Per tool, how many teammates used it.
    team: HashMap<&'a str, u32>,
    /// The usage of a tool the history has no sums for.
    none: Usage,
}

/// What the rules look at for one tool.
struct Signals<'a> {
    u: &'a Usage,
    /// It was listed before the run.
    was: bool,
    /// It was listed before the run as a config pin.
    was_pin: bool,
    in_catalog: bool,
    pinned: bool,
    /// Its front-matter pin, and whether that is still fresh (within `pinDecayDays`).
    pin_file: Option<(&'a Declared, bool)>,
    /// Enough sessions and successful calls in the window.
    promote: bool,
    /// Listed, with a success within `keepDays`.
    kept: bool,
    teammates: u32,
    /// Enough teammates use it (`promote.team`).
    prior: bool,
}

/// What the rules make of one tool.
struct Verdict {
    action: Action,
    /// Why it is listed after the run (`None`: not listed).
    why: Option<Why>,
    detail: String,
}

impl<'a> Lookup<'a> {
    /// Indexes `i` by tool name.
    pub(super) fn new(i: &'a Inputs) -> Lookup<'a> {
        let mut declared: BTreeMap<&str, &Declared> = BTreeMap::new();
        for d in i.declared {
            let e = declared.entry(d.tool.as_str()).or_insert(d);
            if d.first_seen < e.first_seen {
                *e = d;
            }
        }
        Lookup {
            keep: cutoff(i.now, i.rules.keep_days),
            decay: cutoff(i.now, i.rules.pin_decay_days),
            usage: i.usage.iter().map(|u| (u.tool.as_str(), u)).collect(),
            before: i.before.iter().map(|l| (l.tool.as_str(), l)).collect(),
            declared,
            team: i.team.iter().map(|(t, n)| (t.as_str(), *n)).collect(),
            none: Usage::default(),
        }
    }

    /// Every tool the run decides on: used, listed, pinned, declared, or a teammate's tool the
    /// catalog offers.
    pub(super) fn names(&self, i: &'a Inputs) -> BTreeSet<&'a str> {
        let mut names: BTreeSet<&str> = self.usage.keys().copied().collect();
        names.extend(self.before.keys());
        names.extend(i.pins.iter().map(String::as_str));
        names.extend(self.declared.keys());
        // A teammate's tool this user's servers do not offer is no news: left out of the table.
        names.extend(
            self.team
                .keys()
                .filter(|t| i.catalog.is_none_or(|c| c.contains(**t))),
        );
        names
    }

    /// The rules' decision on tool `name`, and why it is listed after the run (`None`: not).
    pub(super) fn decide_one(&self, i: &Inputs, name: &str) -> (Decision, Option<Why>) {
        let s = self.signals(i, name);
        let v = verdict(i.rules, &s);
        let decision = Decision {
            tool: name.to_string(),
            before: s.was,
            after: v.why.is_some(),
            action: v.action,
            detail: v.detail,
            sessions: s.u.sessions,
            calls: s.u.calls,
            last_success: s.u.last_success.clone(),
        };
        (decision, v.why)
    }

    /// What the rules look at for tool `name`.
    fn signals(&self, i: &Inputs, name: &str) -> Signals<'_> {
        let r = i.rules;
        let u = self.usage.get(name).copied().unwrap_or(&self.none);
        let listed = self.before.get(name);
        let was = listed.is_some();
        let last = u.last_success.as_deref();
        let pin_file = self.declared.get(name).map(|d| {
            let seen = last.map_or(d.first_seen.as_str(), |l| l.max(d.first_seen.as_str()));
            (*d, seen >= self.decay.as_str())
        });
        let teammates = self.team.get(name).copied().unwrap_or(0);
        Signals {
            u,
            was,
            was_pin: listed.is_some_and(|l| l.why == Why::Pin),
            in_catalog: i.catalog.is_none_or(|c| c.contains(name)),
            pinned: i.pins.iter().any(|p| p == name),
            pin_file,
            promote: u.sessions >= r.min_sessions && u.calls >= r.min_calls && u.calls > 0,
            kept: was && last.is_some_and(|l| l >= self.keep.as_str()),
            teammates,
            prior: r.team > 0 && teammates >= r.team,
        }
    }
}

impl Signals<'_> {
    /// Whether any rule lists the tool.
    fn wanted(&self) -> bool {
        let fresh_pin_file = self.pin_file.is_some_and(|(_, fresh)| fresh);
        self.pinned || fresh_pin_file || self.promote || self.kept || self.prior
    }
}

/// The first rule, in the module doc's order of precedence, that decides the tool.
fn verdict(r: &Promote, s: &Signals) -> Verdict {
    let u = s.u;
    let listed = |action, why, detail| Verdict {
        action,
        why: Some(why),
        detail,
    };
    let unlisted = |action, detail| Verdict {
        action,
        why: None,
        detail,
    };
    let promoted_unless_was = if s.was {
        Action::Kept
    } else {
        Action::Promoted
    };
    if (s.wanted() || s.was) && !s.in_catalog {
        let d = "the upstream catalog does not list it".to_string();
        unlisted(Action::Dropped, d)
    } else if s.pinned {
        listed(Action::Pinned, Why::Pin, "in config `pins`".to_string())
    } else if let Some((d, true)) = s.pin_file {
        let detail = format!("working-set-pins in {}", d.file);
        listed(Action::Pinned, Why::PinFile, detail)
    } else if s.promote {
        listed(promoted_unless_was, Why::Promoted, figures(r, u))
    } else if s.kept {
        let d = format!("a successful call within keepDays ({}d)", r.keep_days);
        listed(Action::Kept, Why::Promoted, d)
    } else if s.prior {
        let d = format!(
            "team prior: {} teammate(s) used it in {}d (promote.team: {})",
            s.teammates, r.window_days, r.team
        );
        listed(promoted_unless_was, Why::Team, d)
    } else if s.was {
        unlisted(Action::Demoted, demoted_detail(r, s))
    } else if u.calls == 0 && u.failed > 0 {
        let d = format!(
            "{} failed call(s) in {}d; only successes count",
            u.failed, r.window_days
        );
        unlisted(Action::Unchanged, d)
    } else if let Some((_, false)) = s.pin_file {
        let d = format!("front-matter pin unused for {}d", r.pin_decay_days);
        unlisted(Action::Unchanged, d)
    } else {
        unlisted(Action::Unchanged, figures(r, u))
    }
}

/// The tool's figures in the window against the thresholds, in words.
fn figures(r: &Promote, u: &Usage) -> String {
    format!(
        "{} session(s), {} successful call(s) in {}d (needs {} and {})",
        u.sessions, u.calls, r.window_days, r.min_sessions, r.min_calls
    )
}

/// Why a listed tool that no rule keeps is demoted, in words.
fn demoted_detail(r: &Promote, s: &Signals) -> String {
    match s.pin_file {
        Some(_) => format!("front-matter pin unused for {}d", r.pin_decay_days),
        None if s.was_pin => format!(
            "no longer in `pins`, and no successful call within keepDays ({}d)",
            r.keep_days
        ),
        None => format!("no successful call within keepDays ({}d)", r.keep_days),
    }
}
