//! The SQL of `mws promote`: the usage sums the rules decide from, the working set before the
//! run, front-matter pin history, and writing a run (runs, transitions, working set, pins and
//! catalog) in one transaction. Must not decide anything: the rules are in `crate::promote`.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{Store, StoreError};
use crate::catalog::Catalog;
use crate::promote::projects::ProjectOutcome;
use crate::promote::{Action, Declared, Listed, Outcome, Usage, Why};

/// Sums successful calls per tool within the window (`$1`), counting distinct sessions, over
/// `from`: `calls` here, one member's rows on a team's PostgreSQL (`team::queries`). The same text
/// runs on both engines. Only calls at or after the window are read, through the usage index.
pub fn usage_sql(from: &str) -> String {
    format!(
        "SELECT tool,
       COUNT(DISTINCT CASE WHEN ok = 1 THEN session_id END) AS sessions,
       SUM(CASE WHEN ok = 1 THEN 1 ELSE 0 END)             AS calls,
       SUM(CASE WHEN ok = 0 THEN 1 ELSE 0 END)             AS failed,
       MAX(CASE WHEN ok = 1 THEN ts END)                   AS last_success
FROM {from}
WHERE ts >= $1
GROUP BY tool"
    )
}

/// Completes the window's sums (`out`) with the all-time last success (`last` reads one tool's)
/// of tools whose calls in the window all failed, and of `also` (listed tools without calls).
pub fn with_last_success<E>(
    mut out: Vec<Usage>,
    also: &[&str],
    mut last: impl FnMut(&str) -> Result<Option<String>, E>,
) -> Result<Vec<Usage>, E> {
    let known: std::collections::HashSet<String> = out.iter().map(|u| u.tool.clone()).collect();
    for u in out.iter_mut().filter(|u| u.last_success.is_none()) {
        u.last_success = last(&u.tool)?;
    }
    for name in also {
        if known.contains(*name) {
            continue;
        }
        if let Some(l) = last(name)? {
            out.push(Usage {
                tool: name.to_string(),
                last_success: Some(l),
                ..Usage::default()
            });
        }
    }
    Ok(out)
}

/// A tool's last success at any time: among the calls kept, else in the per-day sums of the
/// calls retention removed (`call_days`).
pub(super) const LAST_SUCCESS: &str = "SELECT MAX(x) FROM (
    SELECT MAX(ts) AS x FROM calls WHERE tool = ?1 AND ok = 1
    UNION ALL SELECT MAX(last_success) FROM call_days WHERE tool = ?1)";

/// One real promotion run, ready to be written.
pub struct PromotionRecord<'a> {
    /// The run's `now`, formatted.
    pub now: &'a str,
    /// `live` | `catalog.json` | `skipped`.
    pub catalog_source: &'a str,
    pub outcome: &'a Outcome,
    /// Front-matter pins seen in this run: `(tool, file)`.
    pub declared: &'a [(String, String)],
    /// The catalog used for the reality check, to refresh the `catalog` table.
    pub catalog: Option<&'a Catalog>,
    /// Each project's decisions and listing (`promote::projects`); empty with `perProject` off.
    pub projects: &'a [ProjectOutcome],
    /// How many projects used each tool (`store::projects::projects_per_tool`).
    pub projects_per_tool: &'a HashMap<String, u32>,
}

impl Store {
    /// Usage of every tool called since `window`, plus the all-time last success of `also` (and
    /// of tools whose calls in the window all failed).
    pub fn usage(&self, window: &str, also: &[&str]) -> Result<Vec<Usage>, StoreError> {
        let mut stmt = self.conn.prepare_cached(&usage_sql("calls"))?;
        let out: Vec<Usage> = stmt
            .query_map([window], |r| {
                Ok(Usage {
                    tool: r.get(0)?,
                    sessions: r.get(1)?,
                    calls: r.get(2)?,
                    failed: r.get(3)?,
                    last_success: r.get(4)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        let mut last = self.conn.prepare_cached(LAST_SUCCESS)?;
        Ok(with_last_success(out, also, |t| {
            last.query_row([t], |r| r.get(0))
        })?)
    }

    /// The working set in listing order.
    pub fn working_set(&self) -> Result<Vec<Listed>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT tool, reason, since FROM working_set ORDER BY position, tool")?;
        let rows = stmt.query_map([], |r| {
            Ok(Listed {
                tool: r.get(0)?,
                why: Why::parse(&r.get::<_, String>(1)?),
                since: r.get(2)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The front-matter pins seen now, with when each was first declared (`now` if never before).
    pub fn declared(
        &self,
        seen: &[(String, String)],
        now: &str,
    ) -> Result<Vec<Declared>, StoreError> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT first_seen FROM pin_declarations WHERE tool = ?1 AND file = ?2",
        )?;
        let mut out = Vec::with_capacity(seen.len());
        for (tool, file) in seen {
            let first: Option<String> = stmt
                .query_row(params![tool, file], |r| r.get(0))
                .optional()?;
            out.push(Declared {
                tool: tool.clone(),
                file: file.clone(),
                first_seen: first.unwrap_or_else(|| now.to_string()),
            });
        }
        Ok(out)
    }

    /// Writes a run in one immediate transaction. `before_commit` runs last inside it (it writes
    /// the temp file of `working-set.json`); if it fails, nothing is written. Returns the run id.
    pub fn write_promotion(
        &mut self,
        rec: &PromotionRecord,
        before_commit: impl FnOnce() -> std::io::Result<()>,
    ) -> Result<i64, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let count = |a: Action| {
            rec.outcome
                .decisions
                .iter()
                .filter(|d| d.action == a)
                .count() as i64
        };
        tx.execute(
            "INSERT INTO promotion_runs (ts, catalog_source, listed, promoted, demoted, dropped)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                rec.now,
                rec.catalog_source,
                rec.outcome.listing.len() as i64,
                count(Action::Promoted),
                count(Action::Demoted),
                count(Action::Dropped)
            ],
        )?;
        let run = tx.last_insert_rowid();
        {
            let mut ins = tx.prepare(
                "INSERT INTO transitions
                   (run_id, tool, before, after, action, reason, sessions, calls, last_success)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            for d in &rec.outcome.decisions {
                ins.execute(params![
                    run,
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
            tx.execute("DELETE FROM working_set", [])?;
            let figures: HashMap<&str, _> = rec
                .outcome
                .decisions
                .iter()
                .map(|d| (d.tool.as_str(), d))
                .collect();
            let mut ws = tx.prepare(
                "INSERT INTO working_set
                   (tool, position, reason, since, sessions, calls, last_success, run_id, projects)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?;
            for (pos, l) in rec.outcome.listing.iter().enumerate() {
                let d = figures.get(l.tool.as_str());
                ws.execute(params![
                    l.tool,
                    pos as i64,
                    l.why.as_str(),
                    l.since,
                    d.map(|d| d.sessions),
                    d.map(|d| d.calls),
                    d.and_then(|d| d.last_success.clone()),
                    run,
                    rec.projects_per_tool.get(&l.tool).copied().unwrap_or(0)
                ])?;
            }
            let mut pin = tx.prepare(
                "INSERT INTO pin_declarations (tool, file, first_seen, last_seen) VALUES (?1, ?2, ?3, ?3)
                 ON CONFLICT (tool, file) DO UPDATE SET last_seen = excluded.last_seen",
            )?;
            for (tool, file) in rec.declared {
                pin.execute(params![tool, file, rec.now])?;
            }
        }
        super::projects::write_projects(&tx, run, rec.projects)?;
        if let Some(c) = rec.catalog {
            super::catalog::refresh(&tx, c, rec.now)?;
        }
        before_commit().map_err(|error| StoreError::Io {
            path: self.path.clone(),
            error,
        })?;
        tx.commit()?;
        Ok(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{self, Status};
    use crate::config::Promote;
    use crate::promote::cutoff;
    use crate::promote::tests::{Call, ago, now, usage_of};
    use crate::store::log::insert_call;

    /// The SQL sums a timeline exactly as the oracle in `promote::tests` does.
    #[test]
    fn usage_sql_matches_the_oracle() {
        let calls: &[Call] = &[
            ("a", "s1", 1.0, true),
            ("a", "s1", 2.0, true),
            ("a", "s2", 29.9, true),
            ("a", "s3", 30.1, true),
            ("a", "s4", 3.0, false),
            ("b", "s1", 1.0, false),
            ("b", "s2", 45.0, true),
            ("c", "s9", 40.0, true),
        ];
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("state.db")).unwrap();
        for (n, (tool, session, days, ok)) in calls.iter().enumerate() {
            let rec = call::Call {
                ts: ago(*days),
                session_id: session.to_string(),
                tool: tool.to_string(),
                via: "direct".into(),
                status: Some(if *ok { Status::Ok } else { Status::Error }),
                source_key: format!("proxy:{n}"),
                ..call::Call::default()
            };
            insert_call(&store.conn, &rec).unwrap();
        }
        let rules = Promote::default();
        let mut got = store
            .usage(&cutoff(now(), rules.window_days), &["c", "zzz"])
            .unwrap();
        got.sort_by(|x, y| x.tool.cmp(&y.tool));
        let mut want = usage_of(calls, &rules);
        // The oracle knows every tool; the store reports "c" (outside the window) only because
        // it was asked for it, with its last success alone.
        want.iter_mut().filter(|u| u.tool == "c").for_each(|u| {
            u.sessions = 0;
            u.calls = 0;
        });
        assert_eq!(got, want);
    }
}
