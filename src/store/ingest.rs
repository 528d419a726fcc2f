//! The SQL of `mws ingest`: per-file read state (`ingest_files`), calls waiting for their result
//! (`ingest_pending`), and recording transcript calls so that each call is one row — a replayed
//! call is a duplicate, a call the proxy already logged becomes one row with it (`call::merge`).
//! Must not decide statuses or names: the ingest module hands finished calls.

use std::collections::{HashMap, HashSet};

use rusqlite::{OptionalExtension, Transaction, params};

use super::calls::{self, SessionSeen, Side};
use super::{Store, StoreError};
use crate::call::{Call, Status};

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

/// The outcome of a call recorded as pending by an earlier run or file.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    pub source_key: String,
    pub status: Status,
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
    /// status.
    pub abort_pending: Option<Status>,
    /// Calls with their outcome.
    pub calls: Vec<Call>,
    /// Calls without a result yet (`status: None`).
    pub pending: Vec<Call>,
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
    /// Removes the `ingest_files` rows of `paths` (files that no longer exist), in one
    /// transaction; the calls read from them stay. Returns how many rows went.
    pub fn forget_ingest_files(&mut self, paths: &[&str]) -> Result<u64, StoreError> {
        if paths.is_empty() {
            return Ok(0);
        }
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut n = 0;
        {
            let mut stmt = tx.prepare_cached("DELETE FROM ingest_files WHERE path = ?1")?;
            for p in paths {
                n += stmt.execute([p])? as u64;
            }
        }
        tx.commit()?;
        Ok(n)
    }

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
                row.status = Some(r.status);
                row.tool = r.tool.clone().unwrap_or(row.tool);
                row.ms = r.ms;
                count(record_call(&tx, &row)?);
            }
        }
        if let Some(status) = batch.abort_pending {
            let keys: Vec<String> = tx
                .prepare("SELECT source_key FROM ingest_pending WHERE path = ?1 ORDER BY ts")?
                .query_map([path], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            for key in keys {
                if let Some(mut row) = take_pending(&tx, &key)? {
                    row.status = Some(status);
                    count(record_call(&tx, &row)?);
                }
            }
        }
        for c in &batch.calls {
            // A call first seen (pending) elsewhere keeps that first sighting's session and time.
            let row = match take_pending(&tx, &c.source_key)? {
                Some(first) => Call {
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
            if calls::row_for_call_id(&tx, p.call_id(), Side::Proxy)?.is_some() {
                count(record_call(&tx, p)?);
                continue;
            }
            if pending_exists(&tx, &p.source_key)? {
                count(Outcome::Duplicate);
                continue;
            }
            tx.prepare_cached(
                "INSERT INTO ingest_pending
                   (source_key, path, session_id, tool, ts, client, client_call_id, project)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                p.source_key,
                path,
                p.session_id,
                p.tool,
                p.ts,
                p.client,
                p.client_call_id,
                p.project
            ])?;
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
    /// timestamp) with `status`; returns how many rows that added or merged.
    pub fn expire_pending(&mut self, before: &str, status: Status) -> Result<u64, StoreError> {
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
                row.status = Some(status);
                if record_call(&tx, &row)? != Outcome::Duplicate {
                    recorded += 1;
                }
            }
        }
        tx.commit()?;
        Ok(recorded)
    }
}

/// Removes and returns a pending call (without its outcome).
fn take_pending(tx: &Transaction, key: &str) -> rusqlite::Result<Option<Call>> {
    let row = tx
        .prepare_cached(
            "SELECT source_key, client_call_id, session_id, ts, tool, client, project
             FROM ingest_pending WHERE source_key = ?1",
        )?
        .query_row([key], |r| {
            let client: Option<String> = r.get(5)?;
            let client = client.unwrap_or_default();
            Ok(Call {
                source_key: r.get(0)?,
                client_call_id: Some(r.get::<_, Option<String>>(1)?.unwrap_or_default()),
                session_id: r.get(2)?,
                ts: r.get(3)?,
                tool: r.get(4)?,
                project: r.get(6)?,
                via: format!("transcript:{client}"),
                client: Some(client),
                ..Call::default()
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

/// Records a transcript call: a duplicate when its source key is known, or when the proxy's row
/// for the same client call id is already in its session; merged with the proxy's row
/// (`calls::write_merged`); else a new row.
fn record_call(tx: &Transaction, c: &Call) -> rusqlite::Result<Outcome> {
    let c = &*c.cleaned();
    if source_key_exists(tx, &c.source_key)? {
        return Ok(Outcome::Duplicate);
    }
    let proxy = calls::row_for_call_id(tx, c.call_id(), Side::Proxy)?;
    calls::upsert_session(tx, &SessionSeen::of(c))?;
    let Some((id, proxy)) = proxy else {
        calls::insert_row(tx, c)?;
        return Ok(Outcome::New);
    };
    if proxy.session_id == c.session_id {
        return Ok(Outcome::Duplicate);
    }
    calls::write_merged(tx, id, &proxy, c)?;
    // The proxy's session key is not a session of its own any more once nothing refers to it
    // (the proxy re-creates it if it logs there again).
    tx.prepare_cached(
        "DELETE FROM sessions WHERE id = ?1 AND source = 'proxy'
           AND NOT EXISTS (SELECT 1 FROM calls WHERE session_id = ?1)
           AND NOT EXISTS (SELECT 1 FROM searches WHERE session_id = ?1)",
    )?
    .execute([&proxy.session_id])?;
    Ok(Outcome::Merged)
}

#[cfg(test)]
#[path = "ingest_tests.rs"]
mod tests;
