//! The SQL of `mws ingest`: per-file read state (`ingest_files`), calls waiting for their result
//! (`ingest_pending`), and recording transcript calls so that each call is one row — a replayed
//! call is a duplicate, a call the proxy already logged gets the transcript's session. Must not
//! decide statuses or names: the ingest module hands finished rows.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, Transaction, params};

use super::log::{self, NewCall, SessionSeen, insert_call_row};
use super::{Store, StoreError};

/// What was read of one transcript file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRow {
    pub path: String,
    pub adapter: String,
    /// Bytes consumed, always just after a `\n`.
    pub offset: u64,
    pub size: u64,
    pub mtime_ns: i64,
    pub head_hash: String,
    /// Complete lines consumed.
    pub lines: u64,
    pub calls: u64,
    pub skipped: u64,
    pub ingested_at: String,
}

/// A transcript call with its outcome, ready to record.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRow {
    /// `claude-code:<tool_use_id>` / `codex:<call_id>`.
    pub source_key: String,
    pub client_call_id: String,
    pub session_id: String,
    pub ts: String,
    pub tool: String,
    /// `transcript:<adapter>`.
    pub via: String,
    /// The adapter name: `claude-code` / `codex`.
    pub client: String,
    pub ok: bool,
    pub error_kind: Option<String>,
    pub ms: Option<i64>,
}

/// The outcome of a call recorded as pending by an earlier run or file.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    pub source_key: String,
    pub ok: bool,
    pub error_kind: Option<String>,
    /// A better (unsanitised) tool name, when the result carries one.
    pub tool: Option<String>,
    pub ms: Option<i64>,
}

/// Everything one file's new lines produced, written in one transaction.
#[derive(Debug, Clone, Default)]
pub struct FileBatch {
    pub file: Option<FileRow>,
    /// The file was read again from the start: its old pending rows are dropped first.
    pub restart: bool,
    pub resolved: Vec<Resolution>,
    /// Pending rows of this file still open when its turn was aborted: recorded with this
    /// error kind.
    pub abort_pending: Option<String>,
    pub calls: Vec<CallRow>,
    /// Calls without a result yet (`ok`/`error_kind` unused).
    pub pending: Vec<CallRow>,
}

/// What a batch did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchCounts {
    pub new: u64,
    pub duplicates: u64,
    pub merged: u64,
    pub pending: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    New,
    Duplicate,
    Merged,
}

impl Store {
    /// Every file ingest has read, by path.
    pub fn ingest_files(&self) -> Result<HashMap<String, FileRow>, StoreError> {
        let mut stmt = self.conn.prepare(
            "SELECT path, adapter, offset, size, mtime_ns, head_hash, lines, calls, skipped, ingested_at
             FROM ingest_files",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(FileRow {
                path: r.get(0)?,
                adapter: r.get(1)?,
                offset: r.get::<_, i64>(2)? as u64,
                size: r.get::<_, i64>(3)? as u64,
                mtime_ns: r.get(4)?,
                head_hash: r.get(5)?,
                lines: r.get::<_, i64>(6)? as u64,
                calls: r.get::<_, i64>(7)? as u64,
                skipped: r.get::<_, i64>(8)? as u64,
                ingested_at: r.get(9)?,
            })
        })?;
        let mut out = HashMap::new();
        for row in rows {
            let row = row?;
            out.insert(row.path.clone(), row);
        }
        Ok(out)
    }

    /// Client call ids of the pending calls whose source key starts with `<adapter>:`.
    pub fn pending_call_ids(&self, adapter: &str) -> Result<HashSet<String>, StoreError> {
        let prefix = format!("{adapter}:");
        let mut stmt = self.conn.prepare(
            "SELECT source_key FROM ingest_pending WHERE substr(source_key, 1, ?2) = ?1",
        )?;
        let rows = stmt.query_map(params![prefix, prefix.len() as i64], |r| {
            r.get::<_, String>(0)
        })?;
        let mut out = HashSet::new();
        for key in rows {
            out.insert(key?[prefix.len()..].to_string());
        }
        Ok(out)
    }

    /// Every tool name the catalog table has seen (present or not).
    pub fn catalog_names_ever_seen(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM catalog ORDER BY name")?;
        let names = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<Vec<String>, _>>()?;
        Ok(names)
    }

    /// Writes one file's batch in one transaction.
    pub fn write_ingest_batch(&mut self, batch: &FileBatch) -> Result<BatchCounts, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut counts = BatchCounts::default();
        let mut count = |o: Outcome| match o {
            Outcome::New => counts.new += 1,
            Outcome::Duplicate => counts.duplicates += 1,
            Outcome::Merged => counts.merged += 1,
        };
        let mut pending_added = 0;
        let path = batch.file.as_ref().map(|f| f.path.as_str()).unwrap_or("");
        if batch.restart {
            tx.execute("DELETE FROM ingest_pending WHERE path = ?1", [path])?;
        }
        for r in &batch.resolved {
            if let Some(mut row) = take_pending(&tx, &r.source_key)? {
                row.ok = r.ok;
                row.error_kind = r.error_kind.clone();
                row.tool = r.tool.clone().unwrap_or(row.tool);
                row.ms = r.ms;
                count(record_call(&tx, &row)?);
            }
        }
        if let Some(kind) = &batch.abort_pending {
            let keys: Vec<String> = tx
                .prepare("SELECT source_key FROM ingest_pending WHERE path = ?1 ORDER BY ts")?
                .query_map([path], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for key in keys {
                if let Some(mut row) = take_pending(&tx, &key)? {
                    row.ok = false;
                    row.error_kind = Some(kind.clone());
                    count(record_call(&tx, &row)?);
                }
            }
        }
        for c in &batch.calls {
            // A call first seen (pending) elsewhere keeps that first sighting's session and time.
            let row = match take_pending(&tx, &c.source_key)? {
                Some(first) => CallRow {
                    session_id: first.session_id,
                    ts: first.ts,
                    ..c.clone()
                },
                None => c.clone(),
            };
            count(record_call(&tx, &row)?);
        }
        for p in &batch.pending {
            let p = &*p.cleaned();
            if source_key_exists(&tx, &p.source_key)? {
                count(Outcome::Duplicate);
                continue;
            }
            // The proxy logged it with its outcome: only the session is the transcript's.
            if proxy_row(&tx, &p.client_call_id)?.is_some() {
                count(record_call(&tx, p)?);
                continue;
            }
            if pending_exists(&tx, &p.source_key)? {
                count(Outcome::Duplicate);
                continue;
            }
            tx.prepare_cached(
                "INSERT INTO ingest_pending (source_key, path, session_id, tool, ts, client, client_call_id)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(params![p.source_key, path, p.session_id, p.tool, p.ts, p.client, p.client_call_id])?;
            pending_added += 1;
        }
        counts.pending = pending_added;
        if let Some(f) = &batch.file {
            tx.execute(
                "INSERT INTO ingest_files (path, adapter, offset, size, mtime_ns, head_hash, lines, calls, skipped, ingested_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
                 ON CONFLICT (path) DO UPDATE SET adapter = excluded.adapter, offset = excluded.offset,
                   size = excluded.size, mtime_ns = excluded.mtime_ns, head_hash = excluded.head_hash,
                   lines = excluded.lines, calls = excluded.calls, skipped = excluded.skipped,
                   ingested_at = excluded.ingested_at",
                params![
                    f.path,
                    f.adapter,
                    f.offset as i64,
                    f.size as i64,
                    f.mtime_ns,
                    f.head_hash,
                    f.lines as i64,
                    (f.calls + counts.new + counts.merged) as i64,
                    f.skipped as i64,
                    f.ingested_at
                ],
            )?;
        }
        tx.commit()?;
        Ok(counts)
    }
}

impl Store {
    /// Records every call still waiting for its result that was made before `before` (a stored
    /// timestamp) as failed with `error_kind`; returns how many rows that added or merged.
    pub fn expire_pending(&mut self, before: &str, error_kind: &str) -> Result<u64, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let keys: Vec<String> = tx
            .prepare("SELECT source_key FROM ingest_pending WHERE ts < ?1 ORDER BY ts")?
            .query_map([before], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        let mut recorded = 0;
        for key in keys {
            if let Some(mut row) = take_pending(&tx, &key)? {
                row.error_kind = Some(error_kind.to_string());
                if record_call(&tx, &row)? != Outcome::Duplicate {
                    recorded += 1;
                }
            }
        }
        tx.commit()?;
        Ok(recorded)
    }
}

/// Removes and returns a pending call (as a row with a placeholder outcome).
fn take_pending(tx: &Transaction, key: &str) -> rusqlite::Result<Option<CallRow>> {
    let row = tx
        .prepare_cached(
            "SELECT source_key, client_call_id, session_id, ts, tool, client FROM ingest_pending
             WHERE source_key = ?1",
        )?
        .query_row([key], |r| {
            let client: Option<String> = r.get(5)?;
            let client = client.unwrap_or_default();
            Ok(CallRow {
                source_key: r.get(0)?,
                client_call_id: r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                session_id: r.get(2)?,
                ts: r.get(3)?,
                tool: r.get(4)?,
                via: format!("transcript:{client}"),
                client,
                ok: false,
                error_kind: None,
                ms: None,
            })
        })
        .optional()?;
    if row.is_some() {
        tx.prepare_cached("DELETE FROM ingest_pending WHERE source_key = ?1")?
            .execute([key])?;
    }
    Ok(row)
}

fn pending_exists(tx: &Transaction, key: &str) -> rusqlite::Result<bool> {
    tx.prepare_cached("SELECT 1 FROM ingest_pending WHERE source_key = ?1")?
        .exists([key])
}

fn source_key_exists(tx: &Transaction, key: &str) -> rusqlite::Result<bool> {
    tx.prepare_cached("SELECT 1 FROM calls WHERE source_key = ?1")?
        .exists([key])
}

/// The proxy's row (id, session) for a client call id, if the proxy logged that call.
fn proxy_row(tx: &Transaction, client_call_id: &str) -> rusqlite::Result<Option<(i64, String)>> {
    tx.prepare_cached(
        "SELECT id, session_id FROM calls
         WHERE client_call_id = ?1 AND via NOT LIKE 'transcript:%' ORDER BY id LIMIT 1",
    )?
    .query_row([client_call_id], |r| Ok((r.get(0)?, r.get(1)?)))
    .optional()
}

/// Records a transcript call: a duplicate when its source key is known; merged into the proxy's
/// row for the same client call id (which then carries the transcript's session and keeps its
/// `via`); else a new row.
fn record_call(tx: &Transaction, c: &CallRow) -> rusqlite::Result<Outcome> {
    let c = &*c.cleaned();
    if source_key_exists(tx, &c.source_key)? {
        return Ok(Outcome::Duplicate);
    }
    let proxy = proxy_row(tx, &c.client_call_id)?;
    upsert_session(tx, c)?;
    if let Some((id, session)) = proxy {
        if session == c.session_id {
            return Ok(Outcome::Duplicate);
        }
        tx.prepare_cached("UPDATE calls SET session_id = ?2 WHERE id = ?1")?
            .execute(params![id, c.session_id])?;
        // The proxy's session key is not a session of its own any more once nothing refers to
        // it (the proxy re-creates it if it logs there again).
        tx.prepare_cached(
            "DELETE FROM sessions WHERE id = ?1 AND source = 'proxy'
               AND NOT EXISTS (SELECT 1 FROM calls WHERE session_id = ?1)
               AND NOT EXISTS (SELECT 1 FROM searches WHERE session_id = ?1)",
        )?
        .execute([&session])?;
        return Ok(Outcome::Merged);
    }
    insert_call_row(
        tx,
        &NewCall {
            ts: &c.ts,
            session_id: &c.session_id,
            tool: &c.tool,
            via: &c.via,
            ok: c.ok,
            error_kind: c.error_kind.as_deref(),
            ms: c.ms,
            client: Some(&c.client),
            client_call_id: Some(&c.client_call_id),
            source_key: &c.source_key,
        },
    )?;
    Ok(Outcome::New)
}

fn upsert_session(tx: &Transaction, c: &CallRow) -> rusqlite::Result<()> {
    log::upsert_session(
        tx,
        &SessionSeen {
            id: &c.session_id,
            source: &c.via,
            client: Some(&c.client),
            first: &c.ts,
            last: &c.ts,
        },
    )
}

#[cfg(test)]
#[path = "ingest_tests.rs"]
mod tests;
