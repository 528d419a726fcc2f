//! The SQL of promotion per project: each project's usage sums, how many projects used each tool,
//! the project listings before a run and writing them (inside `write_promotion`'s transaction),
//! and the listings the proxy reads. Must not decide anything: the rules are in
//! `crate::promote::projects`, what a session lists in `crate::listed`.

use std::collections::{BTreeMap, HashMap};

use rusqlite::{Connection, Transaction, params};

use super::{Store, StoreError};
use crate::promote::projects::ProjectOutcome;
use crate::promote::{Listed, Usage, Why};

impl Store {
    /// Per project and tool, over calls whose project is known: sessions, successful and failed
    /// calls since `window`, and the last success since `keep` (`keepDays`, at least the window:
    /// an older success no longer keeps a tool listed).
    pub fn project_usage(
        &self,
        window: &str,
        keep: &str,
    ) -> Result<Vec<(String, Usage)>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT project, tool,
                    COUNT(DISTINCT CASE WHEN ok = 1 AND ts >= ?1 THEN session_id END),
                    SUM(CASE WHEN ok = 1 AND ts >= ?1 THEN 1 ELSE 0 END),
                    SUM(CASE WHEN ok = 0 AND ts >= ?1 THEN 1 ELSE 0 END),
                    MAX(CASE WHEN ok = 1 THEN ts END)
             FROM calls INDEXED BY calls_project_usage
             WHERE project IS NOT NULL AND ts >= ?2
             GROUP BY project, tool",
        )?;
        let rows = stmt.query_map([window, keep.min(window)], |r| {
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
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
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

/// How many projects each tool was used in, from the per-project sums: projects with a
/// successful call since `keep` (`project_usage` reads no older call).
pub fn projects_per_tool(usage: &[(String, Usage)]) -> HashMap<String, u32> {
    let mut out: HashMap<String, u32> = HashMap::new();
    for (_, u) in usage.iter().filter(|(_, u)| u.last_success.is_some()) {
        *out.entry(u.tool.clone()).or_default() += 1;
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
