//! The proxy's call and search log: records sent over a channel to one writer thread that batches
//! them into transactions, so that a slow or failing disk never slows or fails a call. Must not
//! block the sender, and must never store arguments, results or query text.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use std::borrow::Cow;

use rusqlite::params;

use super::calls::{self, SessionSeen, Side};
use super::{Store, StoreError};
use crate::call::Call;

/// Most records written in one transaction. Raising it means fewer fsyncs under load but a longer
/// write lock held against ingest and promote.
pub const MAX_BATCH: usize = 512;

/// How long the writer keeps collecting after the first record of a batch. One transaction per
/// window instead of one per call keeps SQLite's commit work off the cores the proxy answers on,
/// and a longer window writes each hot index page (the `calls_usage` leaves are spread over the
/// tools) once for more rows: at 20 ms a batch wrote about one page per row. Raising it means
/// fewer commits but rows that reach the database later.
pub const BATCH_WINDOW: Duration = Duration::from_millis(100);

/// A written-through log (`spawn_write_through`) commits a record at once unless its last commit
/// ended less than this long ago; then it waits out the rest and commits what came meanwhile. A
/// call after a pause (an agent's calls are a model turn apart) is in the database a commit after
/// it ends; a burst is committed about this often instead of once per call (a commit per call was
/// most of `serve --stdio`'s CPU per call). A kill loses at most the rows of the last this long,
/// and only in a burst.
pub const THROUGH_LINGER: Duration = Duration::from_millis(50);

/// One `search_tools` reply as the proxy sent it. Never the query.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchRecord {
    pub ts: String,
    pub session_id: Option<String>,
    pub client: Option<String>,
    pub mode: String,
    pub result_count: i64,
    pub reply_bytes: i64,
}

/// One `run_script` as the proxy ran it (code mode). Never the script's text or its result.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptRecord {
    pub ts: String,
    pub session_id: Option<String>,
    pub client: Option<String>,
    /// `crate::script::Outcome::kind`: `ok`, `syntax`, `error`, `never_settled` or a limit.
    pub outcome: String,
    pub ms: i64,
    pub calls: i64,
    pub memory_bytes: i64,
    pub output_bytes: i64,
}

pub enum LogEvent {
    Call(Call),
    Search(SearchRecord),
    Script(ScriptRecord),
    /// Answered once everything sent before it is written (or failed).
    Flush(mpsc::Sender<()>),
}

/// The sending side of the log. Cheap to clone; sending never blocks.
#[derive(Clone)]
pub struct LogSink {
    tx: mpsc::Sender<LogEvent>,
    /// The writer thread, unparked by `flush` to end its batch window early.
    writer: std::thread::Thread,
    flush_wanted: Arc<AtomicBool>,
}

impl LogSink {
    /// Starts the writer thread for the database at `path`. The database is opened lazily and
    /// re-opened after a failure, so a missing or read-only state dir only costs log rows.
    pub fn spawn(path: &Path) -> LogSink {
        LogSink::spawn_with(path, Pace::Batched(BATCH_WINDOW))
    }

    /// A log for one client that may end its mws process at any moment (a stdio client stops
    /// its server when it exits, often with a kill): the database is opened at once and a record
    /// is written as soon as it arrives, without a batch window, unless the last commit was less
    /// than `THROUGH_LINGER` ago.
    pub fn spawn_write_through(path: &Path) -> LogSink {
        LogSink::spawn_with(path, Pace::Through(THROUGH_LINGER))
    }

    fn spawn_with(path: &Path, pace: Pace) -> LogSink {
        let (tx, rx) = mpsc::channel();
        let path = path.to_path_buf();
        let flush_wanted = Arc::new(AtomicBool::new(false));
        let wanted = flush_wanted.clone();
        let handle = std::thread::Builder::new()
            .name("mws-log-writer".into())
            .spawn(move || writer(path, rx, &wanted, pace))
            .expect("spawn log writer thread");
        LogSink {
            tx,
            writer: handle.thread().clone(),
            flush_wanted,
        }
    }

    pub fn call(&self, record: Call) {
        let _ = self.tx.send(LogEvent::Call(record));
    }

    pub fn search(&self, record: SearchRecord) {
        let _ = self.tx.send(LogEvent::Search(record));
    }

    pub fn script(&self, record: ScriptRecord) {
        let _ = self.tx.send(LogEvent::Script(record));
    }

    /// Waits (up to `timeout`) until every record sent before this call is written.
    pub fn flush(&self, timeout: Duration) -> bool {
        let (tx, rx) = mpsc::channel();
        if self.tx.send(LogEvent::Flush(tx)).is_err() {
            return false;
        }
        self.flush_wanted.store(true, Ordering::Release);
        self.writer.unpark();
        rx.recv_timeout(timeout).is_ok()
    }
}

/// When the writer commits what it was sent.
#[derive(Clone, Copy)]
enum Pace {
    /// Collects for this long after the first record of a batch.
    Batched(Duration),
    /// Commits a record at once unless the last commit ended less than this long ago.
    Through(Duration),
}

/// Sleeps until `window` has passed or a flush is asked for. The writer sleeps instead of
/// waiting on the channel: a receiver blocked in `recv_timeout` is woken by every send, which
/// cost each call a futex wake and the writer a context switch per row.
fn wait_out_window(flush_wanted: &AtomicBool, window: Duration) {
    let deadline = Instant::now() + window;
    loop {
        let now = Instant::now();
        if now >= deadline || flush_wanted.swap(false, Ordering::AcqRel) {
            return;
        }
        std::thread::park_timeout(deadline - now);
    }
}

/// The identity (device, inode) of the file at `path`, if there is one.
fn file_id(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

fn writer(path: PathBuf, rx: mpsc::Receiver<LogEvent>, flush_wanted: &AtomicBool, pace: Pace) {
    let mut store: Option<Store> = None;
    // The file the open store writes to: a deleted or replaced database would otherwise swallow
    // every later row without an error (SQLite keeps writing to the unlinked file).
    let mut opened: Option<(u64, u64)> = None;
    let mut health = super::health::Watch::new(&path);
    if matches!(pace, Pace::Through(_)) {
        // Written through: the first row must not wait for the database to open. A failure
        // here is tried again, and said, when a record arrives.
        if let Ok(s) = Store::open(&path).and_then(|s| s.trim_for_serving().map(|()| s)) {
            opened = file_id(&path);
            health.opened(opened);
            store = Some(s);
        }
    }
    // The last batch was full: more rows are waiting, so the next one does not wait out a window.
    let mut backlog = false;
    // When the last write ended (written-through logs only).
    let mut last_write: Option<Instant> = None;
    while let Ok(first) = rx.recv() {
        let wait = match pace {
            Pace::Batched(window) => window,
            Pace::Through(linger) => {
                last_write.map_or(Duration::ZERO, |t| linger.saturating_sub(t.elapsed()))
            }
        };
        if !backlog && !wait.is_zero() && !matches!(first, LogEvent::Flush(_)) {
            wait_out_window(flush_wanted, wait);
        }
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            let Ok(e) = rx.try_recv() else { break };
            batch.push(e);
        }
        backlog = batch.len() == MAX_BATCH;
        let mut flushes = Vec::new();
        let mut records = Vec::with_capacity(batch.len());
        for e in batch {
            match e {
                LogEvent::Flush(done) => flushes.push(done),
                other => records.push(other),
            }
        }
        if !records.is_empty() {
            if store.is_some() && file_id(&path) != opened {
                tracing::warn!(
                    "call log: {} was deleted or replaced under the running proxy; writing to a new database there",
                    path.display()
                );
                store = None;
            }
            if store.is_none() {
                match Store::open(&path).and_then(|s| s.trim_for_serving().map(|()| s)) {
                    Ok(s) => {
                        opened = file_id(&path);
                        health.opened(opened);
                        store = Some(s);
                    }
                    Err(e) => {
                        if let StoreError::Sqlite { error, .. } | StoreError::Sql(error) = &e {
                            health.write_failed(error);
                        }
                        tracing::error!(
                            "call log: cannot open {}: {e}; {} record(s) not saved",
                            path.display(),
                            records.len()
                        );
                    }
                }
            }
            if let Some(s) = store.as_mut() {
                let written = s.write_log(&records);
                last_write = Some(Instant::now());
                match written {
                    Ok(()) => health.check_header(),
                    Err(e) => {
                        if let StoreError::Sql(error) = &e {
                            health.write_failed(error);
                        }
                        tracing::error!(
                            "call log: write to {} failed: {e}; {} record(s) not saved",
                            path.display(),
                            records.len()
                        );
                        store = None;
                    }
                }
            }
        }
        if !flushes.is_empty() {
            // This batch answers them; a flag left set would only cut the next window short.
            flush_wanted.store(false, Ordering::Release);
        }
        for done in flushes {
            let _ = done.send(());
        }
    }
}

impl Store {
    /// Writes a batch of log records in one transaction. Each session's row is upserted once per
    /// batch (first and last time seen over the batch), not once per call.
    pub fn write_log(&mut self, records: &[LogEvent]) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let batch: Vec<Cow<'_, Call>> = records
            .iter()
            .filter_map(|r| match r {
                LogEvent::Call(c) => Some(c.cleaned()),
                _ => None,
            })
            .collect();
        let mut sessions: Vec<SessionSeen<'_>> = Vec::new();
        for c in &batch {
            if merge_into_transcript(&tx, c)? {
                continue;
            }
            calls::insert_row(&tx, c)?;
            match sessions.iter_mut().find(|s| s.id == c.session_id) {
                Some(s) => s.saw(c),
                None => sessions.push(SessionSeen::of(c)),
            }
        }
        for r in records {
            match r {
                LogEvent::Search(s) => insert_search(&tx, s)?,
                LogEvent::Script(s) => insert_script(&tx, s)?,
                _ => {}
            }
        }
        for s in &sessions {
            calls::upsert_session(&tx, s)?;
        }
        tx.commit()?;
        Ok(())
    }
}

/// Inserts a proxy call. When a transcript already recorded the same client call id, that row
/// becomes the call's one row (`call::merge`).
pub fn insert_call(conn: &rusqlite::Connection, c: &Call) -> rusqlite::Result<()> {
    let c = &*c.cleaned();
    if merge_into_transcript(conn, c)? {
        return Ok(());
    }
    calls::upsert_session(conn, &SessionSeen::of(c))?;
    calls::insert_row(conn, c)
}

/// The transcript's row for the proxy call's client call id becomes the call's one row; true
/// when there was one (the call is then not inserted again).
fn merge_into_transcript(conn: &rusqlite::Connection, c: &Call) -> rusqlite::Result<bool> {
    let Some(call_id) = &c.client_call_id else {
        return Ok(false);
    };
    let Some((id, transcript)) = calls::row_for_call_id(conn, call_id, Side::Transcript)? else {
        return Ok(false);
    };
    calls::write_merged(conn, id, c, &transcript)?;
    Ok(true)
}

pub fn insert_search(conn: &rusqlite::Connection, s: &SearchRecord) -> rusqlite::Result<()> {
    let s = &*s.cleaned();
    conn.prepare_cached(
        "INSERT INTO searches (ts, session_id, client, mode, result_count, reply_bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        s.ts,
        s.session_id,
        s.client,
        s.mode,
        s.result_count,
        s.reply_bytes
    ])?;
    Ok(())
}

pub fn insert_script(conn: &rusqlite::Connection, s: &ScriptRecord) -> rusqlite::Result<()> {
    let s = &*s.cleaned();
    conn.prepare_cached(
        "INSERT INTO script_runs (ts, session_id, client, outcome, ms, calls, memory_bytes,
                                  output_bytes)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        s.ts,
        s.session_id,
        s.client,
        s.outcome,
        s.ms,
        s.calls,
        s.memory_bytes,
        s.output_bytes
    ])?;
    Ok(())
}

#[cfg(test)]
#[path = "log_tests.rs"]
mod tests;
