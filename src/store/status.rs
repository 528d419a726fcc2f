//! The SQL behind the status page (`server::status`) that `store::report` does not already have:
//! calls added since a row id (the page folds them into its per-day figures once), the latest
//! calls, and the last promotion run with its decisions. Read-only; never reads arguments,
//! results or queries (the tables hold none). Must not decide anything.

use rusqlite::{OptionalExtension, params};

use super::report::CallRef;
use super::{Store, StoreError};

/// One of the latest calls, as the status page lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecentCall {
    pub ts: String,
    pub tool: String,
    pub ok: bool,
    pub ms: Option<i64>,
    pub client: Option<String>,
}

/// The last promotion run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunRow {
    pub ts: String,
    pub catalog_source: String,
    pub listed: i64,
    pub promoted: i64,
    pub demoted: i64,
    pub dropped: i64,
    /// Its decisions: changes first, then by tool.
    pub decisions: Vec<Decision>,
}

/// One tool's fate in a run (`transitions`).
#[derive(Debug, Clone, PartialEq)]
pub struct Decision {
    pub tool: String,
    pub action: String,
    pub reason: String,
}

/// A text column's value, `""` when it is not text.
fn text(v: rusqlite::types::ValueRef<'_>) -> &str {
    v.as_str().unwrap_or("")
}

impl Store {
    /// The largest `calls` row id (0 when there is none).
    pub fn status_max_call_id(&self) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row("SELECT COALESCE(MAX(id), 0) FROM calls", [], |r| r.get(0))?)
    }

    /// Hands every call with a row id in `(after, upto]` and a time at or after `since` to `f`
    /// (tool, time, how and outcome; no session or client). Walks the rowid range only (`+ts`
    /// keeps SQLite off the time index), so a page that has seen the rows up to `after` pays for
    /// the new ones alone.
    pub fn status_calls_after(
        &self,
        after: i64,
        upto: i64,
        since: &str,
        mut f: impl FnMut(&CallRef<'_>),
    ) -> Result<(), StoreError> {
        let mut st = self.conn.prepare_cached(
            "SELECT id, ts, tool, via, ok FROM calls
             WHERE id > ?1 AND id <= ?2 AND +ts >= ?3 ORDER BY id",
        )?;
        let mut rows = st.query(params![after, upto, since])?;
        while let Some(r) = rows.next()? {
            let (ts, tool, via) = (r.get_ref(1)?, r.get_ref(2)?, r.get_ref(3)?);
            f(&CallRef {
                ts: text(ts),
                tool: text(tool),
                session_id: "",
                client: None,
                via: text(via),
                ok: r.get::<_, i64>(4)? != 0,
            });
        }
        Ok(())
    }

    /// The `limit` latest calls, newest first: tool, outcome, duration and client only.
    pub fn status_recent_calls(&self, limit: usize) -> Result<Vec<RecentCall>, StoreError> {
        let mut st = self.conn.prepare_cached(
            "SELECT ts, tool, ok, ms, client FROM calls ORDER BY ts DESC, id DESC LIMIT ?1",
        )?;
        let rows = st.query_map([limit as i64], |r| {
            Ok(RecentCall {
                ts: r.get(0)?,
                tool: r.get(1)?,
                ok: r.get::<_, i64>(2)? != 0,
                ms: r.get(3)?,
                client: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The latest promotion run and up to `limit` of its decisions (changes first), or `None`
    /// when `mws promote` never ran.
    pub fn status_last_run(&self, limit: usize) -> Result<Option<RunRow>, StoreError> {
        let run = self
            .conn
            .query_row(
                "SELECT id, ts, catalog_source, listed, promoted, demoted, dropped
                 FROM promotion_runs ORDER BY ts DESC, id DESC LIMIT 1",
                [],
                |r| {
                    Ok((
                        r.get::<_, i64>(0)?,
                        RunRow {
                            ts: r.get(1)?,
                            catalog_source: r.get(2)?,
                            listed: r.get(3)?,
                            promoted: r.get(4)?,
                            demoted: r.get(5)?,
                            dropped: r.get(6)?,
                            decisions: Vec::new(),
                        },
                    ))
                },
            )
            .optional()?;
        let Some((id, mut run)) = run else {
            return Ok(None);
        };
        let mut st = self.conn.prepare_cached(
            "SELECT tool, action, reason FROM transitions WHERE run_id = ?1
             ORDER BY action IN ('unchanged', 'kept'), tool LIMIT ?2",
        )?;
        run.decisions = st
            .query_map(params![id, limit as i64], |r| {
                Ok(Decision {
                    tool: r.get(0)?,
                    action: r.get(1)?,
                    reason: r.get(2)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        Ok(Some(run))
    }
}
