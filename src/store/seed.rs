//! Generated histories written straight into `state.db`, for tests and benchmarks: calls with
//! their sessions, searches, promotion runs with their transitions, a working set. The product
//! writes these through the log writer and `promote`.

use rusqlite::params;

use super::calls::{SessionSeen, insert_row, upsert_session};
use super::log;
use super::report::WorkingSetRow;
use super::{SearchRecord, Store, StoreError};
use crate::call::Call;

/// One row of a generated promotion history, for `seed_history`.
#[derive(Debug, Clone)]
pub struct SeedRun {
    pub ts: String,
    /// `(tool, before, after, action, reason)`.
    pub transitions: Vec<(String, bool, bool, String, String)>,
}

impl Store {
    /// Writes a generated history in one transaction: calls (with their sessions), searches,
    /// promotion runs with their transitions, and the working set after the last run. For tests
    /// and benchmarks; the product writes these through the log writer and `promote`.
    pub fn seed_history(
        &mut self,
        calls: &[Call],
        searches: &[SearchRecord],
        runs: &[SeedRun],
        working_set: &[WorkingSetRow],
    ) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        {
            let mut last_session = String::new();
            for c in calls {
                let c = &*c.cleaned();
                if c.session_id != last_session {
                    upsert_session(&tx, &SessionSeen::of(c))?;
                    last_session.clone_from(&c.session_id);
                }
                insert_row(&tx, c)?;
            }
            for s in searches {
                log::insert_search(&tx, s)?;
            }
            let mut run = tx.prepare_cached(
                "INSERT INTO promotion_runs (ts, catalog_source, listed, promoted, demoted, dropped)
                 VALUES (?1, 'live', ?2, ?3, ?4, 0)",
            )?;
            let mut transition = tx.prepare_cached(
                "INSERT INTO transitions (run_id, tool, before, after, action, reason)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for r in runs {
                let listed = r.transitions.iter().filter(|t| t.2).count() as i64;
                let promoted = r.transitions.iter().filter(|t| !t.1 && t.2).count() as i64;
                let demoted = r.transitions.iter().filter(|t| t.1 && !t.2).count() as i64;
                run.execute(params![r.ts, listed, promoted, demoted])?;
                let id = tx.last_insert_rowid();
                for (tool, before, after, action, reason) in &r.transitions {
                    transition.execute(params![id, tool, before, after, action, reason])?;
                }
            }
            let mut ws = tx.prepare_cached(
                "INSERT INTO working_set (tool, position, reason, since, sessions, calls, last_success)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for w in working_set {
                ws.execute(params![
                    w.tool,
                    w.position,
                    w.reason,
                    w.since,
                    w.sessions,
                    w.calls,
                    w.last_success
                ])?;
            }
        }
        tx.commit()?;
        Ok(())
    }
}
