//! The SQL behind `mws report`: each query returns plain rows for `report.rs` to turn into
//! figures. Read-only (`seed.rs` writes generated histories for tests and benchmarks). Must not
//! decide anything (what counts as a hit, what is a candidate): that is `report.rs`.

use std::collections::HashMap;

use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError};

/// A row of `working_set`, in listing order.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkingSetRow {
    pub tool: String,
    pub position: i64,
    pub reason: String,
    pub since: String,
    pub sessions: Option<i64>,
    pub calls: Option<i64>,
    pub last_success: Option<String>,
}

/// One tool's calls in the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolUsageRow {
    pub tool: String,
    pub calls: u64,
    pub ok: u64,
    /// Distinct sessions with any call.
    pub sessions: u64,
    /// Distinct sessions with a successful call (what promotion counts).
    pub ok_sessions: u64,
    pub last_call: Option<String>,
    pub direct: u64,
    pub call_tool: u64,
    pub transcript: u64,
    /// Successful calls not made through `call_tool`.
    pub ok_not_call_tool: u64,
}

/// One client's calls in the window (`client` is `None` when nobody said who they were).
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRow {
    pub client: Option<String>,
    pub calls: u64,
    pub ok: u64,
    pub sessions: u64,
}

/// One project's calls in the window and the tools it lists of its own.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectRow {
    pub project: String,
    pub calls: u64,
    pub ok: u64,
    pub sessions: u64,
    /// Rows of `project_tools` for it (promoted from its own sessions).
    pub own_tools: u64,
}

/// Searches in the window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchRow {
    pub count: u64,
    pub zero_results: u64,
    pub total_reply_bytes: u64,
    pub max_reply_bytes: u64,
    /// `(mode, count)`, most used first.
    pub by_mode: Vec<(String, u64)>,
}

/// Calls in the window the proxy refused before sending them, by `error_kind`, and the calls
/// whose results it shaped (`calls.bytes_saved`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RefusedRow {
    pub invalid_args: u64,
    pub denied_by_policy: u64,
    pub shaped: u64,
    pub bytes_saved: u64,
}

/// One tool's fate in one promotion run, with the run's time.
#[derive(Debug, Clone, PartialEq)]
pub struct TransitionRow {
    pub run_id: i64,
    pub run_ts: String,
    pub tool: String,
    pub before: bool,
    pub after: bool,
}

/// A span of time during which one tool was listed: `[from, to)`, `to = None` meaning still
/// listed. Timestamps in the stored form, so text order is time order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interval {
    pub tool: String,
    pub from: String,
    pub to: Option<String>,
}

/// One call as `report_scan_calls` hands it over: borrowed, valid inside the callback only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallRef<'a> {
    pub ts: &'a str,
    pub tool: &'a str,
    pub session_id: &'a str,
    pub client: Option<&'a str>,
    pub via: &'a str,
    pub ok: bool,
}

/// Everything a call filter needs: `[since, until]`, both in the stored form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub since: String,
    pub until: String,
}

/// A text column, borrowed from the row.
fn text<'r>(r: &'r rusqlite::Row<'_>, i: usize) -> rusqlite::Result<&'r str> {
    r.get_ref(i)?.as_str().map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, e.into())
    })
}

/// A count column: SQLite integers are `i64`; counts are never negative.
fn n(r: &rusqlite::Row, i: usize) -> rusqlite::Result<u64> {
    Ok(r.get::<_, Option<i64>>(i)?.unwrap_or(0).max(0) as u64)
}

impl Store {
    /// The current working set in listing order.
    pub fn report_working_set(&self) -> Result<Vec<WorkingSetRow>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT tool, position, reason, since, sessions, calls, last_success
             FROM working_set ORDER BY position, tool",
        )?;
        let rows = st.query_map([], |r| {
            Ok(WorkingSetRow {
                tool: r.get(0)?,
                position: r.get(1)?,
                reason: r.get(2)?,
                since: r.get(3)?,
                sessions: r.get(4)?,
                calls: r.get(5)?,
                last_success: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Calls per tool in the window, as SQL aggregates. The report uses the one-pass
    /// `report::aggregate` instead (several times faster on a million calls); this is the
    /// reference it is tested against.
    pub fn report_tool_usage(&self, span: &Span) -> Result<Vec<ToolUsageRow>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT tool, COUNT(*), SUM(ok),
                    COUNT(DISTINCT session_id),
                    COUNT(DISTINCT CASE WHEN ok = 1 THEN session_id END),
                    MAX(ts),
                    SUM(via = 'direct'), SUM(via = 'call_tool'), SUM(via LIKE 'transcript:%'),
                    SUM(ok = 1 AND via <> 'call_tool')
             FROM calls WHERE ts >= ?1 AND ts <= ?2
             GROUP BY tool",
        )?;
        let rows = st.query_map(params![span.since, span.until], |r| {
            Ok(ToolUsageRow {
                tool: r.get(0)?,
                calls: n(r, 1)?,
                ok: n(r, 2)?,
                sessions: n(r, 3)?,
                ok_sessions: n(r, 4)?,
                last_call: r.get(5)?,
                direct: n(r, 6)?,
                call_tool: n(r, 7)?,
                transcript: n(r, 8)?,
                ok_not_call_tool: n(r, 9)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Hands every call in the window to `f`, without copying its text. One scan of the window;
    /// `report::aggregate` turns it into every per-tool and per-client figure.
    pub fn report_scan_calls(
        &self,
        span: &Span,
        mut f: impl FnMut(&CallRef<'_>),
    ) -> Result<(), StoreError> {
        let mut st = self.conn.prepare(
            "SELECT ts, tool, session_id, client, via, ok FROM calls WHERE ts >= ?1 AND ts <= ?2",
        )?;
        let mut rows = st.query(params![span.since, span.until])?;
        while let Some(r) = rows.next()? {
            let client = match r.get_ref(3)? {
                rusqlite::types::ValueRef::Null => None,
                _ => Some(text(r, 3)?),
            };
            f(&CallRef {
                ts: text(r, 0)?,
                tool: text(r, 1)?,
                session_id: text(r, 2)?,
                client,
                via: text(r, 4)?,
                ok: r.get::<_, i64>(5)? != 0,
            });
        }
        Ok(())
    }

    /// Calls in the window refused by the proxy's checks (`invalid_args`, `denied_by_policy`).
    pub fn report_refused(&self, span: &Span) -> Result<RefusedRow, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT error_kind, COUNT(*) FROM calls WHERE ts >= ?1 AND ts <= ?2
             AND error_kind IN ('invalid_args', 'denied_by_policy') GROUP BY error_kind",
        )?;
        let mut out = RefusedRow::default();
        let mut rows = st.query(params![span.since, span.until])?;
        while let Some(r) = rows.next()? {
            let n = u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0);
            match r.get::<_, String>(0)?.as_str() {
                "invalid_args" => out.invalid_args = n,
                _ => out.denied_by_policy = n,
            }
        }
        let (shaped, saved): (i64, i64) = self.conn.query_row(
            "SELECT COUNT(bytes_saved), COALESCE(SUM(bytes_saved), 0) FROM calls
             WHERE ts >= ?1 AND ts <= ?2",
            params![span.since, span.until],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        out.shaped = u64::try_from(shaped).unwrap_or(0);
        out.bytes_saved = u64::try_from(saved).unwrap_or(0);
        Ok(out)
    }

    /// The last successful call of each named tool, at any time (`None` if it never succeeded),
    /// the per-day sums past the horizon included. One index walk per tool, newest first, so it
    /// stays cheap on a long history.
    pub fn report_last_success(
        &self,
        tools: &[&str],
    ) -> Result<HashMap<String, String>, StoreError> {
        let mut st = self.conn.prepare_cached(
            "SELECT ts FROM calls WHERE tool = ?1 AND ok = 1 ORDER BY ts DESC LIMIT 1",
        )?;
        // Past the horizon: the per-day sums of the calls retention removed.
        let mut summed = self
            .conn
            .prepare_cached("SELECT MAX(last_success) FROM call_days WHERE tool = ?1")?;
        let mut out = HashMap::new();
        for &t in tools {
            let kept = st.query_row([t], |r| r.get::<_, String>(0)).optional()?;
            let ts = match kept {
                Some(ts) => Some(ts),
                None => summed.query_row([t], |r| r.get::<_, Option<String>>(0))?,
            };
            if let Some(ts) = ts {
                out.insert(t.to_string(), ts);
            }
        }
        Ok(out)
    }

    /// Calls per client in the window, most calls first.
    pub fn report_clients(&self, span: &Span) -> Result<Vec<ClientRow>, StoreError> {
        let family: String = crate::call::CLIENT_ALIASES
            .iter()
            .map(|(alias, family)| format!(" WHEN '{alias}' THEN '{family}'"))
            .collect();
        let mut st = self.conn.prepare(&format!(
            "SELECT CASE client{family} ELSE client END AS c, COUNT(*), SUM(ok),
                    COUNT(DISTINCT session_id)
             FROM calls WHERE ts >= ?1 AND ts <= ?2
             GROUP BY c ORDER BY COUNT(*) DESC, c"
        ))?;
        let rows = st.query_map(params![span.since, span.until], |r| {
            Ok(ClientRow {
                client: r.get(0)?,
                calls: n(r, 1)?,
                ok: n(r, 2)?,
                sessions: n(r, 3)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Calls per known project in the window, most calls first, with its own listed tools.
    pub fn report_projects(&self, span: &Span) -> Result<Vec<ProjectRow>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT c.project, COUNT(*), SUM(c.ok), COUNT(DISTINCT c.session_id),
                    (SELECT COUNT(*) FROM project_tools p WHERE p.project = c.project)
             FROM calls c WHERE c.project IS NOT NULL AND c.ts >= ?1 AND c.ts <= ?2
             GROUP BY c.project ORDER BY COUNT(*) DESC, c.project",
        )?;
        let rows = st.query_map(params![span.since, span.until], |r| {
            Ok(ProjectRow {
                project: r.get(0)?,
                calls: n(r, 1)?,
                ok: n(r, 2)?,
                sessions: n(r, 3)?,
                own_tools: n(r, 4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Each project's own listed tools (`project_tools`), most first, without reading `calls`:
    /// what the status page shows of projects at every refresh (calls and sessions are 0).
    pub fn report_project_tools(&self) -> Result<Vec<ProjectRow>, StoreError> {
        let mut st = self.conn.prepare_cached(
            "SELECT project, COUNT(*) FROM project_tools GROUP BY project
             ORDER BY COUNT(*) DESC, project",
        )?;
        let rows = st.query_map([], |r| {
            Ok(ProjectRow {
                project: r.get(0)?,
                own_tools: n(r, 1)?,
                ..ProjectRow::default()
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Distinct sessions with a call in the window.
    pub fn report_sessions(&self, span: &Span) -> Result<u64, StoreError> {
        Ok(self.conn.query_row(
            "SELECT COUNT(DISTINCT session_id) FROM calls WHERE ts >= ?1 AND ts <= ?2",
            params![span.since, span.until],
            |r| n(r, 0),
        )?)
    }

    /// Search figures in the window.
    pub fn report_searches(&self, span: &Span) -> Result<SearchRow, StoreError> {
        let mut row = self.conn.query_row(
            "SELECT COUNT(*), COALESCE(SUM(result_count = 0), 0),
                    COALESCE(SUM(reply_bytes), 0), COALESCE(MAX(reply_bytes), 0)
             FROM searches WHERE ts >= ?1 AND ts <= ?2",
            params![span.since, span.until],
            |r| {
                Ok(SearchRow {
                    count: n(r, 0)?,
                    zero_results: n(r, 1)?,
                    total_reply_bytes: n(r, 2)?,
                    max_reply_bytes: n(r, 3)?,
                    by_mode: Vec::new(),
                })
            },
        )?;
        let mut st = self.conn.prepare(
            "SELECT mode, COUNT(*) FROM searches WHERE ts >= ?1 AND ts <= ?2
             GROUP BY mode ORDER BY COUNT(*) DESC, mode",
        )?;
        row.by_mode = st
            .query_map(params![span.since, span.until], |r| {
                Ok((r.get(0)?, n(r, 1)?))
            })?
            .collect::<Result<_, _>>()?;
        Ok(row)
    }

    /// The whole promotion transition log, oldest run first.
    pub fn report_transitions(&self) -> Result<Vec<TransitionRow>, StoreError> {
        let mut st = self.conn.prepare(
            "SELECT t.run_id, r.ts, t.tool, t.before, t.after
             FROM transitions t JOIN promotion_runs r ON r.id = t.run_id
             ORDER BY r.ts, r.id, t.tool",
        )?;
        let rows = st.query_map([], |r| {
            Ok(TransitionRow {
                run_id: r.get(0)?,
                run_ts: r.get(1)?,
                tool: r.get(2)?,
                before: r.get(3)?,
                after: r.get(4)?,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// Successful calls not made through `call_tool` that fall inside one of `intervals` and the
    /// window. Each interval is one walk of the `(tool, ts)` index.
    pub fn report_calls_in_intervals(
        &self,
        intervals: &[Interval],
        span: &Span,
    ) -> Result<u64, StoreError> {
        let mut st = self.conn.prepare_cached(
            "SELECT COUNT(*) FROM calls
             WHERE tool = ?1 AND ts >= max(?2, ?4) AND (?3 IS NULL OR ts < ?3) AND ts <= ?5
               AND ok = 1 AND via <> 'call_tool'",
        )?;
        let mut total = 0u64;
        for i in intervals {
            total += st.query_row(params![i.tool, i.from, i.to, span.since, span.until], |r| {
                n(r, 0)
            })?;
        }
        Ok(total)
    }
}
