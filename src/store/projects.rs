//! The SQL of promotion per project: each project's usage sums, how many projects used each tool,
//! the project listings before a run and writing them (inside `write_promotion`'s transaction),
//! and the listings the proxy reads. Must not decide anything: the rules are in
//! `crate::promote::projects`, what a session lists in `crate::listed`.

use std::collections::{BTreeMap, HashMap, HashSet};

use rusqlite::{Connection, Transaction, params};

use super::{Store, StoreError};
use crate::promote::projects::ProjectOutcome;
use crate::promote::{Listed, Usage, Why};

impl Store {
    /// Per project and tool, over calls since `window` whose project is known: sessions,
    /// successful and failed calls, last success; plus the all-time last success of each tool a
    /// project listed before the run (`before`) that has no success in the window, as
    /// `store::promote::usage` does user-wide.
    pub fn project_usage(
        &self,
        window: &str,
        before: &BTreeMap<String, Vec<Listed>>,
    ) -> Result<Vec<(String, Usage)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT project, tool,
                    COUNT(DISTINCT CASE WHEN ok = 1 THEN session_id END),
                    SUM(CASE WHEN ok = 1 THEN 1 ELSE 0 END),
                    SUM(CASE WHEN ok = 0 THEN 1 ELSE 0 END),
                    MAX(CASE WHEN ok = 1 THEN ts END)
             FROM calls INDEXED BY calls_project_usage
             WHERE project IS NOT NULL AND ts >= ?1
             GROUP BY project, tool",
        )?;
        let mut out: Vec<(String, Usage)> = stmt
            .query_map([window], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Usage {
                        tool: r.get(1)?,
                        sessions: r.get(2)?,
                        calls: r.get(3)?,
                        failed: r.get(4)?,
                        last_success: r.get(5)?,
                    },
                ))
            })?
            .collect::<Result<_, _>>()?;
        let mut last = self.conn.prepare_cached(
            "SELECT MAX(ts) FROM calls WHERE project = ?1 AND tool = ?2 AND ok = 1",
        )?;
        let mut found: HashMap<(&str, &str), usize> = HashMap::new();
        for (i, (p, u)) in out.iter().enumerate() {
            found.insert((p.as_str(), u.tool.as_str()), i);
        }
        let mut extra = Vec::new();
        let mut fill = Vec::new();
        for (project, listed) in before {
            for l in listed {
                match found.get(&(project.as_str(), l.tool.as_str())) {
                    Some(&i) if out[i].1.last_success.is_none() => fill.push(i),
                    Some(_) => {}
                    None => {
                        let ts: Option<String> =
                            last.query_row([project, &l.tool], |r| r.get(0))?;
                        if let Some(ts) = ts {
                            extra.push((
                                project.clone(),
                                Usage {
                                    tool: l.tool.clone(),
                                    last_success: Some(ts),
                                    ..Usage::default()
                                },
                            ));
                        }
                    }
                }
            }
        }
        drop(found);
        for i in fill {
            let (p, u) = &out[i];
            let ts: Option<String> = last.query_row([p, &u.tool], |r| r.get(0))?;
            out[i].1.last_success = ts;
        }
        out.extend(extra);
        Ok(out)
    }

    /// The project listings before a run, each in listing order.
    pub fn project_sets(&self) -> Result<BTreeMap<String, Vec<Listed>>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT project, tool, reason, since FROM project_tools
             ORDER BY project, position, tool",
        )?;
        let mut out: BTreeMap<String, Vec<Listed>> = BTreeMap::new();
        let rows = stmt.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                Listed {
                    tool: r.get(1)?,
                    why: Why::parse(&r.get::<_, String>(2)?),
                    since: r.get(3)?,
                },
            ))
        })?;
        for row in rows {
            let (p, l) = row?;
            out.entry(p).or_default().push(l);
        }
        Ok(out)
    }
}

/// How many projects each tool was used in: projects with a successful call in the window
/// (`usage`, from `project_usage`) or that list it after the run (`projects`: kept there by
/// hysteresis without a call in the window).
pub fn projects_per_tool(
    usage: &[(String, Usage)],
    projects: &[ProjectOutcome],
) -> HashMap<String, u32> {
    let mut seen: HashSet<(&str, &str)> = HashSet::new();
    let used = usage
        .iter()
        .filter(|(_, u)| u.calls > 0)
        .map(|(p, u)| (p.as_str(), u.tool.as_str()));
    let listed = projects.iter().flat_map(|p| {
        p.outcome
            .listing
            .iter()
            .map(move |l| (p.project.as_str(), l.tool.as_str()))
    });
    let mut out: HashMap<String, u32> = HashMap::new();
    for (p, t) in used.chain(listed) {
        if seen.insert((p, t)) {
            *out.entry(t.to_string()).or_default() += 1;
        }
    }
    out
}

/// Replaces the project listings and logs each project's decisions under run `run`.
pub(super) fn write_projects(
    tx: &Transaction,
    run: i64,
    projects: &[ProjectOutcome],
) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM project_tools", [])?;
    let mut log = tx.prepare(
        "INSERT INTO project_transitions
           (run_id, project, tool, before, after, action, reason, sessions, calls, last_success)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?;
    let mut set = tx.prepare(
        "INSERT INTO project_tools
           (project, tool, position, reason, since, sessions, calls, last_success, run_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?;
    for p in projects {
        for d in &p.outcome.decisions {
            log.execute(params![
                run,
                p.project,
                d.tool,
                d.before,
                d.after,
                d.action.as_str(),
                d.detail,
                d.sessions,
                d.calls,
                d.last_success
            ])?;
        }
        for (pos, l) in p.outcome.listing.iter().enumerate() {
            let d = p.outcome.decisions.iter().find(|d| d.tool == l.tool);
            set.execute(params![
                p.project,
                l.tool,
                pos as i64,
                l.why.as_str(),
                l.since,
                d.map(|d| d.sessions),
                d.map(|d| d.calls),
                d.and_then(|d| d.last_success.clone()),
                run
            ])?;
        }
    }
    Ok(())
}

/// The project listings as the proxy reads them: project → tools in listing order.
pub fn project_listings(conn: &Connection) -> rusqlite::Result<HashMap<String, Vec<String>>> {
    let mut stmt = conn.prepare_cached(
        "SELECT project, tool FROM project_tools ORDER BY project, position, tool",
    )?;
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (p, t) = row?;
        out.entry(p).or_default().push(t);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{Call, Status};
    use crate::promote::tests::{ago, now};
    use crate::promote::{self, Why};
    use crate::store::log::insert_call;

    /// The window's sums per project, and the last success of a tool a project listed before
    /// that has none in the window (as the user-wide sums do): what its hysteresis decides from.
    #[test]
    fn project_sums_and_the_last_success_of_listed_tools() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        // (project, tool, session, days ago, ok)
        let calls: &[(Option<&str>, &str, &str, f64, bool)] = &[
            (Some("/a"), "x", "s1", 40.0, true),
            (Some("/a"), "y", "s1", 45.0, true),
            (Some("/a"), "y", "s2", 2.0, false),
            (Some("/a"), "z", "s3", 1.0, true),
            (Some("/a"), "z", "s4", 2.0, true),
            (Some("/b"), "z", "s5", 1.0, true),
            (None, "z", "s6", 1.0, true),
        ];
        for (n, (project, tool, session, days, ok)) in calls.iter().enumerate() {
            let c = Call {
                ts: ago(*days),
                session_id: session.to_string(),
                tool: tool.to_string(),
                via: "direct".into(),
                status: Some(if *ok { Status::Ok } else { Status::Error }),
                source_key: format!("proxy:{n}"),
                project: project.map(str::to_string),
                ..Call::default()
            };
            insert_call(&store.conn, &c).unwrap();
        }
        let listed = |t: &str| Listed {
            tool: t.into(),
            why: Why::Promoted,
            since: ago(50.0),
        };
        let before: BTreeMap<String, Vec<Listed>> = [(
            "/a".to_string(),
            vec![listed("x"), listed("y"), listed("gone")],
        )]
        .into();
        let window = promote::cutoff(now(), 30);
        let mut got = store.project_usage(&window, &before).unwrap();
        got.sort_by(|a, b| (&a.0, &a.1.tool).cmp(&(&b.0, &b.1.tool)));
        let brief: Vec<(&str, &str, u32, u32, u32, bool)> = got
            .iter()
            .map(|(p, u)| {
                (
                    p.as_str(),
                    u.tool.as_str(),
                    u.sessions,
                    u.calls,
                    u.failed,
                    u.last_success.is_some(),
                )
            })
            .collect();
        assert_eq!(
            brief,
            [
                ("/a", "x", 0, 0, 0, true),
                ("/a", "y", 0, 0, 1, true),
                ("/a", "z", 2, 2, 0, true),
                ("/b", "z", 1, 1, 0, true),
            ]
        );
        let x = got.iter().find(|(_, u)| u.tool == "x").unwrap();
        assert_eq!(x.1.last_success.as_deref(), Some(ago(40.0).as_str()));
        let y = got.iter().find(|(_, u)| u.tool == "y").unwrap();
        assert_eq!(y.1.last_success.as_deref(), Some(ago(45.0).as_str()));
        // z: used in two projects (the unknown one does not count); x: listed in /a only.
        let outcome = crate::promote::projects::decide_projects(
            now(),
            &crate::config::Promote::default(),
            &before,
            &got,
            None,
        );
        let per_tool = projects_per_tool(&got, &outcome);
        assert_eq!(per_tool.get("z"), Some(&2));
        assert_eq!(per_tool.get("x"), Some(&1));
    }
}
