//! Retention (docs/database.md#what-is-kept-and-for-how-long): removes the history older than a
//! cutoff in short batches, each its own immediate transaction, so that the proxy's log writer
//! never waits long: calls (summed per day and tool into `call_days` in the same transaction),
//! searches, script runs, sessions last seen before the cutoff, and promotion runs no listing
//! refers to; then returns the freed pages to the file system a step at a time. Must not decide
//! the cutoff (that is `config::history`) and must never touch a row at or after it, nor the
//! working set, pins, the catalog or ingest's bookkeeping.

use std::time::Duration;

use rusqlite::{OptionalExtension, TransactionBehavior, params};

use super::{Store, StoreError};

/// Rows one retention transaction removes. Each batch holds the write lock for a few
/// milliseconds; raising it finishes a pass in fewer transactions and makes a concurrent writer
/// (the proxy's log) wait longer for each.
pub const BATCH_ROWS: i64 = 2_000;

/// Promotion runs one transaction removes, with their decisions (a run has one row per tool in
/// its decision table). Raising it has the effect of raising `BATCH_ROWS`.
pub const BATCH_RUNS: i64 = 20;

/// Free pages one `incremental_vacuum` step returns to the file system (4 MiB of 4 KiB pages).
/// Raising it shrinks the file in fewer steps, each holding the write lock longer.
pub const VACUUM_PAGES: i64 = 1_000;

/// The pause between two batches, so that a writer waiting on the lock takes it before the next
/// batch does. Raising it slows a pass down and lets other writers in more often.
pub const BATCH_PAUSE: Duration = Duration::from_millis(2);

/// What one pass removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Removed {
    pub calls: u64,
    pub searches: u64,
    pub script_runs: u64,
    pub sessions: u64,
    pub promotion_runs: u64,
    /// Bytes given back to the file system (0 unless the file is in incremental auto-vacuum).
    pub bytes_returned: u64,
    /// Bytes of free pages left inside the file: reused by new rows (a file not yet in
    /// incremental auto-vacuum keeps them; docs/database.md says how to convert it).
    pub bytes_free: u64,
}

impl Removed {
    /// True when the pass removed no row.
    pub fn is_empty(&self) -> bool {
        self.calls + self.searches + self.script_runs + self.sessions + self.promotion_runs == 0
    }
}

impl Store {
    /// Removes every history row older than `cutoff` (a stored timestamp), summarising calls
    /// into `call_days` first, then returns free pages. Stops by itself: each table's loop ends
    /// at the first batch that finds fewer rows than it may take, and after as many batches as
    /// the rows counted at its start need.
    pub fn retain(&mut self, cutoff: &str) -> Result<Removed, StoreError> {
        let mut out = Removed {
            calls: self.retain_calls(cutoff)?,
            searches: self.retain_by_ts("searches", cutoff)?,
            script_runs: self.retain_by_ts("script_runs", cutoff)?,
            sessions: self.retain_sessions(cutoff)?,
            promotion_runs: self.retain_runs(cutoff)?,
            ..Removed::default()
        };
        (out.bytes_returned, out.bytes_free) = self.return_free_pages()?;
        Ok(out)
    }

    /// The calls older than `cutoff`, a batch at a time: each batch ends at the timestamp of its
    /// `BATCH_ROWS`-th row (ties included, so both statements see the same rows), is added to
    /// `call_days`, and removed, in one transaction.
    fn retain_calls(&mut self, cutoff: &str) -> Result<u64, StoreError> {
        let old: i64 =
            self.conn
                .query_row("SELECT COUNT(*) FROM calls WHERE ts < ?1", [cutoff], |r| {
                    r.get(0)
                })?;
        let mut removed = 0u64;
        for _ in 0..=old / BATCH_ROWS {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let bound: String = tx
                .query_row(
                    "SELECT ts FROM calls WHERE ts < ?1 ORDER BY ts LIMIT 1 OFFSET ?2",
                    params![cutoff, BATCH_ROWS - 1],
                    |r| r.get(0),
                )
                .optional()?
                .unwrap_or_else(|| cutoff.to_string());
            // `ts <= bound AND ts < cutoff`: the batch, whether `bound` is a row's time or the
            // cutoff itself (fewer rows left than a batch).
            tx.execute(
                "INSERT INTO call_days (day, tool, calls, ok_calls, last_success)
                 SELECT substr(ts, 1, 10), tool, COUNT(*), SUM(ok),
                        MAX(CASE WHEN ok = 1 THEN ts END)
                 FROM calls WHERE ts <= ?1 AND ts < ?2 GROUP BY 1, 2
                 ON CONFLICT (tool, day) DO UPDATE SET
                     calls = calls + excluded.calls,
                     ok_calls = ok_calls + excluded.ok_calls,
                     last_success = CASE WHEN last_success IS NULL
                                           OR excluded.last_success > last_success
                                         THEN excluded.last_success ELSE last_success END",
                params![bound, cutoff],
            )?;
            let n = tx.execute(
                "DELETE FROM calls WHERE ts <= ?1 AND ts < ?2",
                params![bound, cutoff],
            )?;
            tx.commit()?;
            removed += n as u64;
            if bound.as_str() >= cutoff || n == 0 {
                break;
            }
            std::thread::sleep(BATCH_PAUSE);
        }
        Ok(removed)
    }

    /// The rows of `table` (`searches`, `script_runs`: each has a `ts` index) older than
    /// `cutoff`, `BATCH_ROWS` per transaction.
    fn retain_by_ts(&mut self, table: &str, cutoff: &str) -> Result<u64, StoreError> {
        let old: i64 = self.conn.query_row(
            &format!("SELECT COUNT(*) FROM {table} WHERE ts < ?1"),
            [cutoff],
            |r| r.get(0),
        )?;
        let sql = format!(
            "DELETE FROM {table} WHERE id IN
                 (SELECT id FROM {table} WHERE ts < ?1 ORDER BY ts LIMIT ?2)"
        );
        self.batches(old, BATCH_ROWS, |conn| {
            conn.execute(&sql, params![cutoff, BATCH_ROWS])
        })
    }

    /// Sessions last seen before `cutoff`: their calls are gone with them (a call widens its
    /// session's `last_seen` when it is written).
    fn retain_sessions(&mut self, cutoff: &str) -> Result<u64, StoreError> {
        let old: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM sessions WHERE last_seen < ?1",
            [cutoff],
            |r| r.get(0),
        )?;
        self.batches(old, BATCH_ROWS, |conn| {
            conn.execute(
                "DELETE FROM sessions WHERE id IN
                     (SELECT id FROM sessions WHERE last_seen < ?1 LIMIT ?2)",
                params![cutoff, BATCH_ROWS],
            )
        })
    }

    /// Promotion runs older than `cutoff` that no listed tool names as the run that wrote it,
    /// with their decisions. The report rebuilds what was listed from the runs kept: the first
    /// one's `before` says what was listed before it.
    fn retain_runs(&mut self, cutoff: &str) -> Result<u64, StoreError> {
        const OLD: &str = "FROM promotion_runs WHERE ts < ?1
             AND id NOT IN (SELECT run_id FROM working_set WHERE run_id IS NOT NULL)
             AND id NOT IN (SELECT run_id FROM project_tools WHERE run_id IS NOT NULL)";
        let old: i64 = self
            .conn
            .query_row(&format!("SELECT COUNT(*) {OLD}"), [cutoff], |r| r.get(0))?;
        let pick = format!("SELECT id {OLD} ORDER BY id LIMIT ?2");
        self.batches(old, BATCH_RUNS, |conn| {
            let ids: Vec<i64> = conn
                .prepare_cached(&pick)?
                .query_map(params![cutoff, BATCH_RUNS], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for id in &ids {
                conn.execute("DELETE FROM transitions WHERE run_id = ?1", [id])?;
                conn.execute("DELETE FROM project_transitions WHERE run_id = ?1", [id])?;
                conn.execute("DELETE FROM promotion_runs WHERE id = ?1", [id])?;
            }
            Ok(ids.len())
        })
    }

    /// Runs `batch` (which removes at most `size` rows) in its own immediate transaction until
    /// it removes fewer than `size`, and at most as often as `old` rows need plus once; returns
    /// the rows removed.
    fn batches(
        &mut self,
        old: i64,
        size: i64,
        mut batch: impl FnMut(&rusqlite::Connection) -> rusqlite::Result<usize>,
    ) -> Result<u64, StoreError> {
        let mut removed = 0u64;
        for _ in 0..=old / size {
            let tx = self
                .conn
                .transaction_with_behavior(TransactionBehavior::Immediate)?;
            let n = batch(&tx)?;
            tx.commit()?;
            removed += n as u64;
            if (n as i64) < size {
                break;
            }
            std::thread::sleep(BATCH_PAUSE);
        }
        Ok(removed)
    }

    /// Gives free pages back to the file system, `VACUUM_PAGES` per step, when the file is in
    /// incremental auto-vacuum (every database mws creates); then a passive checkpoint, which
    /// waits for nobody, so that the file shrinks now rather than at the next checkpoint.
    /// Returns the bytes given back and the bytes of free pages left.
    fn return_free_pages(&mut self) -> Result<(u64, u64), StoreError> {
        let free = |c: &rusqlite::Connection| -> rusqlite::Result<i64> {
            c.query_row("PRAGMA freelist_count", [], |r| r.get(0))
        };
        let page: i64 = self.conn.query_row("PRAGMA page_size", [], |r| r.get(0))?;
        let bytes = |pages: i64| (pages.max(0) * page) as u64;
        let start = free(&self.conn)?;
        if !self.returns_free_pages()? || start == 0 {
            return Ok((0, bytes(start)));
        }
        for _ in 0..=start / VACUUM_PAGES {
            // Stepped to the end: each step of the statement frees one page.
            let mut st = self
                .conn
                .prepare_cached(&format!("PRAGMA incremental_vacuum({VACUUM_PAGES})"))?;
            let mut rows = st.query([])?;
            while rows.next()?.is_some() {}
            if free(&self.conn)? == 0 {
                break;
            }
            std::thread::sleep(BATCH_PAUSE);
        }
        self.conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE)")?;
        let left = free(&self.conn)?;
        Ok((bytes(start - left), bytes(left)))
    }

    /// True when the file gives free pages back (`PRAGMA auto_vacuum` is incremental).
    pub fn returns_free_pages(&self) -> Result<bool, StoreError> {
        let mode: i64 = self
            .conn
            .query_row("PRAGMA auto_vacuum", [], |r| r.get(0))?;
        Ok(mode == INCREMENTAL)
    }
}

/// `PRAGMA auto_vacuum`'s value for incremental.
pub(super) const INCREMENTAL: i64 = 2;

#[cfg(test)]
#[path = "retention_tests.rs"]
mod tests;
