//! `mws what-if` with and without working sets per project (docs/working-set.md#per-project): the
//! recorded calls replayed night by night under one setting, promoting user-wide and per project
//! with `promote::decide` (as `mws promote` does), and each call counted against what its session
//! would have listed: the user-wide set, or `WorkingSets::for_project` for its project. Pure: no I/O,
//! no clock, no SQL.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use time::{Date, Duration, OffsetDateTime, Time};

use super::{World, parse_date};
use crate::config::Promote;
use crate::promote::projects::{SetTool, WorkingSets};
use crate::promote::{self, Inputs, Listed, Usage};

/// One recorded call, reduced to ids.
struct Call {
    day: u32,
    tool: u32,
    session: u32,
    /// `None`: the project is unknown.
    project: Option<u32>,
    ok: bool,
    in_span: bool,
}

/// Takes calls in time order and keeps what the replay needs.
pub struct ProjectHistoryBuilder {
    since: String,
    until: String,
    first_day: Option<Date>,
    day_text: String,
    day: u32,
    tools: Ids,
    sessions: Ids,
    projects: Ids,
    calls: Vec<Call>,
}

#[derive(Default)]
struct Ids {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

impl Ids {
    fn id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_string());
        self.ids.insert(name.to_string(), i);
        i
    }
}

impl ProjectHistoryBuilder {
    /// Calls with `since <= ts <= until` are measured; all calls feed the decisions.
    pub fn new(since: &str, until: &str) -> ProjectHistoryBuilder {
        ProjectHistoryBuilder {
            since: since.to_string(),
            until: until.to_string(),
            first_day: None,
            day_text: String::new(),
            day: 0,
            tools: Ids::default(),
            sessions: Ids::default(),
            projects: Ids::default(),
            calls: Vec::new(),
        }
    }

    /// Adds one call, never earlier than the previous one; false (skipped) for an unreadable
    /// or earlier time.
    pub fn add(
        &mut self,
        ts: &str,
        tool: &str,
        session: &str,
        project: Option<&str>,
        ok: bool,
    ) -> bool {
        let Some(date_text) = ts.get(..10) else {
            return false;
        };
        if date_text != self.day_text {
            let Some(date) = parse_date(date_text) else {
                return false;
            };
            let first = *self.first_day.get_or_insert(date);
            let d = (date - first).whole_days();
            if d < i64::from(self.day) {
                return false;
            }
            self.day = d as u32;
            self.day_text = date_text.to_string();
        }
        let in_span = ts >= self.since.as_str() && ts <= self.until.as_str();
        let call = Call {
            day: self.day,
            tool: self.tools.id(tool),
            session: self.sessions.id(session),
            project: project.map(|p| self.projects.id(p)),
            ok,
            in_span,
        };
        self.calls.push(call);
        true
    }
}

/// One way of listing, replayed.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scoped {
    /// Successful calls in the span to a tool their session listed.
    pub hits: u64,
    pub hit_rate: Option<f64>,
    /// Tokens of the `tools/list` each call's session got, averaged over the span's calls.
    pub avg_listed_tokens: Option<f64>,
}

/// What-if with and without project scoping, under one setting.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectFigures {
    /// Successful calls in the span, and how many of them know their project.
    pub ok_calls: u64,
    pub ok_calls_with_project: u64,
    /// Projects with calls in the history.
    pub projects: usize,
    /// Every session lists the user-wide working set.
    pub user_wide: Scoped,
    /// A session lists `listed::for_project` of its project (the user-wide set when unknown).
    pub per_project: Scoped,
    /// Of the one-for-all settings replayed (`mws what-if`'s grid), the one with the best hit
    /// rate that lists no more tokens than per project does: what a stricter single working set
    /// would give for the same cost. `None` when none lists as few.
    pub best_one_for_all_within_tokens: Option<super::Figures>,
}

impl ProjectFigures {
    /// Sets `best_one_for_all_within_tokens` from the replayed one-for-all `settings`.
    pub fn compare(&mut self, settings: &[super::Figures]) {
        let Some(budget) = self.per_project.avg_listed_tokens else {
            return;
        };
        self.best_one_for_all_within_tokens = settings
            .iter()
            .filter(|f| f.avg_listed_tokens.is_some_and(|t| t <= budget))
            .max_by(|a, b| {
                let (x, y) = (a.hit_rate.unwrap_or(0.0), b.hit_rate.unwrap_or(0.0));
                x.total_cmp(&y)
            })
            .cloned();
    }
}

/// Sums of one tool in one scope, as the nights pass.
#[derive(Default)]
struct Acc {
    /// Session → the day of its latest successful call.
    latest: HashMap<u32, u32>,
    /// Per day: how many sessions have their latest successful call on it (counting the
    /// sessions of a window is summing its days).
    by_latest_day: Vec<u32>,
    /// `(day, successful, failed)`, in day order.
    days: Vec<(u32, u32, u32)>,
    last_ok: Option<u32>,
}

/// Replays the history under `rules` (the config's setting), with and without project scoping.
pub fn replay_projects(
    b: ProjectHistoryBuilder,
    rules: &Promote,
    world: &mut World,
) -> Option<ProjectFigures> {
    let first = b.first_day?;
    let last_day = b.until.get(..10).and_then(parse_date).map_or(b.day, |u| {
        u32::try_from((u - first).whole_days()).map_or(b.day, |d| d.max(b.day))
    });
    let midnight = |d: u32| first.with_time(Time::MIDNIGHT).assume_utc() + Duration::days(d.into());
    let (tools, projects) = (&b.tools.names, &b.projects.names);
    // Scope 0 is user-wide; scope p + 1 is project p.
    let mut accs: Vec<HashMap<u32, Acc>> = (0..=projects.len()).map(|_| HashMap::new()).collect();
    let mut before: Vec<Vec<Listed>> = vec![Vec::new(); projects.len() + 1];
    let mut out = ProjectFigures {
        ok_calls: 0,
        ok_calls_with_project: 0,
        projects: projects.len(),
        user_wide: Scoped::default(),
        per_project: Scoped::default(),
        best_one_for_all_within_tokens: None,
    };
    let mut token_sums = [0.0f64; 2];
    let mut token_known = true;
    let mut span_calls = 0u64;
    let mut tokens: HashMap<Vec<String>, Option<usize>> = HashMap::new();
    let mut next = 0;
    for night in 0..=last_day {
        let now = midnight(night);
        let sets = promote_night(
            rules,
            world,
            &accs,
            &mut before,
            tools,
            &b.tools.ids,
            projects,
            night,
            now,
        );
        let mut listed_for: HashMap<Option<u32>, (HashSet<String>, Option<usize>)> = HashMap::new();
        while let Some(c) = b.calls.get(next).filter(|c| c.day == night) {
            next += 1;
            record(&mut accs, c);
            if !c.in_span {
                continue;
            }
            span_calls += 1;
            for (i, project) in [None, c.project].into_iter().enumerate() {
                let (set, n) = listed_for.entry(project).or_insert_with(|| {
                    let p = project.map(|p| projects[p as usize].as_str());
                    let names = sets.for_project(p, rules);
                    let n = *tokens
                        .entry(names.clone())
                        .or_insert_with_key(|k| (world.tokens)(k));
                    (names.into_iter().collect(), n)
                });
                match n {
                    Some(n) => token_sums[i] += *n as f64,
                    None => token_known = false,
                }
                if c.ok && set.contains(&tools[c.tool as usize]) {
                    let s = if i == 0 {
                        &mut out.user_wide
                    } else {
                        &mut out.per_project
                    };
                    s.hits += 1;
                }
            }
            if c.ok {
                out.ok_calls += 1;
                out.ok_calls_with_project += u64::from(c.project.is_some());
            }
        }
    }
    for (i, s) in [&mut out.user_wide, &mut out.per_project]
        .into_iter()
        .enumerate()
    {
        s.hit_rate = (out.ok_calls > 0).then(|| s.hits as f64 / out.ok_calls as f64);
        s.avg_listed_tokens =
            (token_known && span_calls > 0).then(|| token_sums[i] / span_calls as f64);
    }
    Some(out)
}

/// Takes one call into its tool's sums, user-wide and in its project.
fn record(accs: &mut [HashMap<u32, Acc>], c: &Call) {
    let scopes = std::iter::once(0).chain(c.project.map(|p| p as usize + 1));
    for scope in scopes {
        let a = accs[scope].entry(c.tool).or_default();
        match a.days.last_mut() {
            Some(last) if last.0 == c.day => {
                last.1 += u32::from(c.ok);
                last.2 += u32::from(!c.ok);
            }
            _ => a.days.push((c.day, u32::from(c.ok), u32::from(!c.ok))),
        }
        if c.ok {
            let day = c.day as usize;
            if a.by_latest_day.len() <= day {
                a.by_latest_day.resize(day + 1, 0);
            }
            match a.latest.insert(c.session, c.day) {
                Some(old) if old == c.day => {}
                Some(old) => {
                    a.by_latest_day[old as usize] -= 1;
                    a.by_latest_day[day] += 1;
                }
                None => a.by_latest_day[day] += 1,
            }
            a.last_ok = Some(c.day);
        }
    }
}

/// The run at midnight of `night`: the user-wide and each project's decision, as `WorkingSets`.
#[allow(clippy::too_many_arguments)]
fn promote_night(
    rules: &Promote,
    world: &World,
    accs: &[HashMap<u32, Acc>],
    before: &mut [Vec<Listed>],
    tools: &[String],
    tool_ids: &HashMap<String, u32>,
    projects: &[String],
    night: u32,
    now: OffsetDateTime,
) -> WorkingSets {
    let from = night.saturating_sub(rules.window_days);
    let midnight_text = |d: u32| crate::clock::fmt(now - Duration::days(i64::from(night - d)));
    // Per tool: the projects with a successful call in the window (`used_in` below).
    let mut used: HashMap<u32, u32> = HashMap::new();
    let mut usage_of = |scope: usize, listed: &[Listed]| -> Vec<Usage> {
        let listed: HashSet<&str> = listed.iter().map(|l| l.tool.as_str()).collect();
        let mut out = Vec::new();
        for (&t, a) in &accs[scope] {
            let name = &tools[t as usize];
            let (mut ok, mut failed) = (0, 0);
            for &(_, o, f) in a.days.iter().rev().take_while(|(d, ..)| *d >= from) {
                ok += o;
                failed += f;
            }
            if scope > 0 && ok > 0 {
                *used.entry(t).or_default() += 1;
            }
            let sessions: u32 = a.by_latest_day.iter().skip(from as usize).sum();
            // Only what can be listed after the run needs deciding (as `mws promote` does).
            let passes = sessions >= rules.min_sessions && ok >= rules.min_calls;
            if !passes && !listed.contains(name.as_str()) {
                continue;
            }
            out.push(Usage {
                tool: name.clone(),
                sessions,
                calls: ok,
                failed,
                last_success: a.last_ok.map(midnight_text),
            });
        }
        out
    };
    let mut sets = WorkingSets::default();
    for scope in 0..before.len() {
        let usage = usage_of(scope, &before[scope]);
        let user = scope == 0;
        let out = promote::decide(&Inputs {
            now,
            rules,
            pins: if user { world.pins } else { &[] },
            declared: &[],
            before: &before[scope],
            usage: &usage,
            catalog: world.catalog,
            team: &[],
        });
        before[scope] = out.listing;
        if !user {
            let names = before[scope].iter().map(|l| l.tool.clone()).collect();
            sets.projects.insert(projects[scope - 1].clone(), names);
        }
    }
    // A project counts for a tool when it used it in the window or lists it (as
    // `store::projects::projects_per_tool`).
    let ok_in_window = |scope: usize, t: u32| {
        accs[scope].get(&t).is_some_and(|a| {
            a.days
                .iter()
                .rev()
                .take_while(|(d, ..)| *d >= from)
                .any(|&(_, o, _)| o > 0)
        })
    };
    for (scope, listing) in before.iter().enumerate().skip(1) {
        for l in listing {
            if let Some(&t) = tool_ids.get(&l.tool)
                && !ok_in_window(scope, t)
            {
                *used.entry(t).or_default() += 1;
            }
        }
    }
    let used_in = |tool: &str| -> u32 {
        tool_ids
            .get(tool)
            .and_then(|t| used.get(t))
            .copied()
            .unwrap_or(0)
    };
    sets.user = before[0]
        .iter()
        .map(|l| SetTool {
            tool: l.tool.clone(),
            why: l.why,
            projects: Some(used_in(&l.tool)),
        })
        .collect();
    sets
}
