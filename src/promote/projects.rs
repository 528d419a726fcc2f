//! Promotion per project (docs/working-set.md#per-project): the same rules as the user-wide run
//! (`promote::decide`: distinct sessions, successes only, hysteresis), applied to each project's
//! own calls, with no pins (pins are listed everywhere) and no team priors. Pure: the sums come
//! from `store::projects`, and which of these tools a session lists is `crate::listed`'s rule.

use std::collections::{BTreeMap, HashMap, HashSet};

use time::OffsetDateTime;

use super::{Inputs, Listed, Outcome, Usage, Why, decide};
use crate::config::Promote;

/// A user-wide working-set tool as the proxy holds it: its name and whether every project's
/// sessions list it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetTool {
    pub tool: String,
    /// Why it is listed (`working_set.reason`).
    pub why: Why,
    /// How many projects used it within `windowDays` or list it (`working_set.projects`); `None` for a row
    /// written before projects were counted.
    pub projects: Option<u32>,
}

/// The working sets `mws promote` last wrote: the user-wide one (`working_set`) and each
/// project's own (`project_tools`), in listing order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkingSets {
    pub user: Vec<SetTool>,
    pub projects: HashMap<String, Vec<String>>,
}

impl WorkingSets {
    /// The working set a session of `project` lists (docs/working-set.md#per-project). Unknown
    /// project, or `promote.perProject` off: the user-wide set. Known: the user-wide tools that
    /// are listed everywhere (pins, pin-file pins, team priors, tools used in at least
    /// `everywhereProjects` projects, in no known project, or listed as its own by no project),
    /// then the project's own tools.
    pub fn for_project(&self, project: Option<&str>, rules: &Promote) -> Vec<String> {
        let Some(project) = project.filter(|_| rules.per_project) else {
            return self.user.iter().map(|t| t.tool.clone()).collect();
        };
        let from = rules.everywhere_projects.max(1);
        // A tool no project lists as its own stays everywhere: hiding it would list it nowhere.
        let claimed: HashSet<&str> = self
            .projects
            .values()
            .flatten()
            .map(String::as_str)
            .collect();
        let everywhere = self.user.iter().filter(|t| match (t.why, t.projects) {
            (Why::Promoted, Some(n)) => n == 0 || n >= from || !claimed.contains(t.tool.as_str()),
            _ => true,
        });
        let mut seen = HashSet::new();
        everywhere
            .map(|t| &t.tool)
            .chain(self.projects.get(project).into_iter().flatten())
            .filter(|t| seen.insert(t.as_str()))
            .cloned()
            .collect()
    }
}

/// One project's decision table and listing.
#[derive(Debug, Clone, PartialEq)]
pub struct ProjectOutcome {
    pub project: String,
    pub outcome: Outcome,
}

/// Decides every project that has a tool past the promotion thresholds in the history's sums
/// (`usage`: project and the tool's sums within the project) or listed tools before the run
/// (`before`), in project order. Tools below the thresholds and not listed before are left out
/// of the table (they stay unlisted); a project with nothing to decide is left out.
pub fn decide_projects(
    now: OffsetDateTime,
    rules: &Promote,
    before: &BTreeMap<String, Vec<Listed>>,
    usage: &[(String, Usage)],
    catalog: Option<&HashSet<String>>,
) -> Vec<ProjectOutcome> {
    // Only what can be listed after the run needs deciding: a tool past the promotion
    // thresholds, or one the project listed before (kept, demoted or dropped). The rest would
    // only fill the table with "unchanged" rows.
    let listed_before: HashSet<(&str, &str)> = before
        .iter()
        .flat_map(|(p, l)| l.iter().map(move |l| (p.as_str(), l.tool.as_str())))
        .collect();
    let mut by_project: BTreeMap<&str, Vec<Usage>> = BTreeMap::new();
    for (p, u) in usage {
        let passes = u.sessions >= rules.min_sessions && u.calls >= rules.min_calls;
        if passes || listed_before.contains(&(p.as_str(), u.tool.as_str())) {
            by_project.entry(p).or_default().push(u.clone());
        }
    }
    for p in before.keys() {
        by_project.entry(p).or_default();
    }
    by_project
        .into_iter()
        .filter_map(|(project, usage)| {
            let before = before.get(project).map_or(&[][..], Vec::as_slice);
            let outcome = decide(&Inputs {
                now,
                rules,
                pins: &[],
                declared: &[],
                before,
                usage: &usage,
                catalog,
                team: &[],
            });
            (!outcome.decisions.is_empty()).then(|| ProjectOutcome {
                project: project.to_string(),
                outcome,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::promote::tests::{ago, now};

    fn used(project: &str, tool: &str, sessions: u32, days_ago: f64) -> (String, Usage) {
        (
            project.to_string(),
            Usage {
                tool: tool.to_string(),
                sessions,
                calls: sessions,
                failed: 0,
                last_success: Some(ago(days_ago)),
            },
        )
    }

    fn listed(o: &ProjectOutcome) -> Vec<&str> {
        o.outcome.listing.iter().map(|l| l.tool.as_str()).collect()
    }

    #[test]
    fn each_project_promotes_from_its_own_sessions() {
        let rules = Promote::default();
        let usage = [
            used("/w/api", "sentry", 3, 1.0),
            used("/w/api", "db_query", 2, 2.0),
            used("/w/web", "browser", 4, 1.0),
            // One session in the notes folder: not enough there.
            used("/w/notes", "sentry", 1, 1.0),
        ];
        let got = decide_projects(now(), &rules, &BTreeMap::new(), &usage, None);
        let names: Vec<(&str, Vec<&str>)> = got
            .iter()
            .map(|o| (o.project.as_str(), listed(o)))
            .collect();
        // The notes folder has nothing past the thresholds: nothing to decide there.
        assert_eq!(
            names,
            [
                ("/w/api", vec!["db_query", "sentry"]),
                ("/w/web", vec!["browser"]),
            ]
        );
    }

    #[test]
    fn hysteresis_and_the_catalog_hold_per_project() {
        let rules = Promote::default();
        let before: BTreeMap<String, Vec<Listed>> = [(
            "/w/api".to_string(),
            vec![
                Listed {
                    tool: "old".into(),
                    why: crate::promote::Why::Promoted,
                    since: ago(50.0),
                },
                Listed {
                    tool: "gone".into(),
                    why: crate::promote::Why::Promoted,
                    since: ago(50.0),
                },
                Listed {
                    tool: "stale".into(),
                    why: crate::promote::Why::Promoted,
                    since: ago(90.0),
                },
            ],
        )]
        .into();
        // "old" was last used 40 days ago: outside the window, inside keepDays.
        let usage = [
            used("/w/api", "old", 0, 40.0),
            used("/w/api", "gone", 3, 1.0),
        ];
        let catalog: HashSet<String> = ["old", "stale"].iter().map(|s| s.to_string()).collect();
        let got = decide_projects(now(), &rules, &before, &usage, Some(&catalog));
        assert_eq!(got.len(), 1);
        assert_eq!(listed(&got[0]), ["old"]);
        let action = |t: &str| {
            got[0]
                .outcome
                .decisions
                .iter()
                .find(|d| d.tool == t)
                .map(|d| d.action.as_str())
        };
        assert_eq!(action("old"), Some("kept"));
        assert_eq!(action("gone"), Some("dropped"));
        assert_eq!(action("stale"), Some("demoted"));
    }
}
