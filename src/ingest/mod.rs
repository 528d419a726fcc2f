//! Transcripts into the store (docs/working-set.md). Adapters only parse (lines in, `call::Call`s
//! and results out, no database); the driver walks the roots, reads files incrementally, pairs calls with
//! their results and hands them to the store (`store/ingest.rs` holds the SQL).

pub mod claude_code;
pub mod codex;
mod driver;
pub mod names;
mod pairing;
mod progress;
mod reader;
pub mod scan;
pub mod status;

use serde::Serialize;

use crate::call::Call;
use crate::config::Config;
use crate::store::Store;

pub use driver::{Options, PENDING_EXPIRY, ingest_with};
pub use names::{Client, Names};
pub use status::Status;

/// What one ingest run did (printed by `mws ingest`, `--json` for machines).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct IngestSummary {
    /// Transcript files found under the roots.
    pub files: u64,
    /// Files that had new bytes and were read.
    pub files_read: u64,
    /// Bytes read this run.
    pub bytes: u64,
    /// Calls recorded for the first time (their result known).
    pub new_calls: u64,
    /// Calls already recorded (replays, forks, mirrors, re-reads).
    pub duplicates: u64,
    /// Transcript calls that matched a row the proxy had logged: that row now carries the
    /// transcript's session, no second row was added.
    pub merged: u64,
    /// Calls whose result is not in the transcript yet; a later run completes them.
    pub pending: u64,
    /// Calls that waited for their result longer than `PENDING_EXPIRY` (the session was killed,
    /// the result line never written): recorded now as `aborted`, so they are not lost.
    pub expired: u64,
    /// Complete lines that could not be parsed (counted and skipped).
    pub skipped_lines: u64,
    /// Calls older than `historyDays`: not recorded, as retention would remove them (and sum
    /// them a second time).
    pub past_horizon: u64,
    /// Configured roots that do not exist.
    pub missing_roots: Vec<String>,
    /// Files read in an earlier run that no longer exist: their `ingest_files` rows are removed
    /// (their calls stay).
    pub files_gone: u64,
    /// `(path, message)` per file or root that could not be read.
    pub errors: Vec<(String, String)>,
    /// Files with malformed lines this run.
    pub malformed: Vec<Malformed>,
}

/// The malformed lines of one file in one run.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Malformed {
    pub path: String,
    pub count: u64,
    /// The first one, as `path:line: reason` (every one is logged at debug level).
    pub first: String,
}

/// What an adapter finds in one line.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A call of this proxy's tools; its `status` is set when the same record carries the outcome
    /// (Codex `item_completed`, `mcp_tool_call_end`).
    Call(Box<Call>),
    /// The outcome of an earlier call; `tool` replaces the recorded name when the result carries
    /// the unsanitised one (Codex).
    Result {
        id: String,
        status: Status,
        tool: Option<String>,
        ms: Option<i64>,
    },
    /// The turn was aborted: every call of this file still without a result is `Aborted`.
    AbortOpen,
}

/// A transcript parser: fed the complete lines of one file in order.
pub trait Adapter {
    /// Parses one line (without its `\n`). `wanted(id)` says whether a result for that call id is
    /// still awaited, so that results of other calls need not be parsed. Errors are the reason
    /// the line is malformed.
    fn line(
        &mut self,
        line: &[u8],
        wanted: &dyn Fn(&str) -> bool,
        out: &mut Vec<Event>,
    ) -> Result<(), String>;
}

/// Ingests every configured transcript root into `store`. `progress` shows a bar on a terminal.
pub fn ingest_all(
    config: &Config,
    store: &mut Store,
    progress: bool,
) -> anyhow::Result<IngestSummary> {
    let now = crate::clock::now();
    let options = Options {
        progress,
        now,
        keep_from: crate::config::history::cutoff(config.history_days(), now),
    };
    ingest_with(config, store, &options)
}

/// Parses a whole file's complete lines with `adapter` through the driver's own loop
/// (`pairing::FileParse`), without a database. Returns the calls in the order they were
/// completed, then those still without a result (`status: None`), and the malformed-line count.
pub fn parse_all(adapter: &mut dyn Adapter, bytes: &[u8]) -> (Vec<Call>, u64) {
    let mut pending = std::collections::HashSet::new();
    let mut parse = pairing::FileParse::new(adapter, &mut pending, 0);
    let mut bad = 0;
    let span = (0, bytes.len() as u64);
    // Reading from a slice does not fail.
    let _ = parse.read(&mut &bytes[..], span, &mut |_, _| bad += 1, &mut |_| {});
    let mut calls = std::mem::take(&mut parse.pairing.done);
    calls.extend(parse.pairing.take_open());
    (calls, bad)
}

/// Parses one JSON line; invalid UTF-8 is replaced (as other transcript readers do) rather than
/// losing the line. The error is the reason shown for a malformed line.
pub(crate) fn parse_line<T: serde::de::DeserializeOwned>(raw: &[u8]) -> Result<T, String> {
    match serde_json::from_slice(raw) {
        Ok(v) => Ok(v),
        Err(e) if std::str::from_utf8(raw).is_err() => {
            serde_json::from_str(&String::from_utf8_lossy(raw)).map_err(|_| e.to_string())
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
#[path = "samples_tests.rs"]
mod samples_tests;
