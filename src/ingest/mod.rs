//! Transcripts into the store (docs/working-set.md). Adapters only parse (lines in, call events
//! out, no database); the driver walks the roots, reads files incrementally, pairs calls with
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
    /// Configured roots that do not exist.
    pub missing_roots: Vec<String>,
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

/// One MCP call of this proxy's tools, as a transcript records it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallEvent {
    /// The client's own call id: Claude Code's tool_use id, Codex's call_id.
    pub id: String,
    pub session_id: String,
    /// Stored form (`clock::fmt`) of the line's time.
    pub ts: String,
    /// The server as configured in `serverNames`.
    pub server: String,
    /// The upstream's name for the tool.
    pub tool: String,
    /// Claude Code sub-agent id (lines in `subagents/agent-*.jsonl`).
    pub agent_id: Option<String>,
    /// Known when the record carries the outcome (Codex `item_completed`, `mcp_tool_call_end`).
    pub status: Option<Status>,
    pub ms: Option<i64>,
}

/// What an adapter finds in one line.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    Call(CallEvent),
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
    let options = Options {
        progress,
        now: crate::clock::now(),
    };
    ingest_with(config, store, &options)
}

/// Parses a whole file's complete lines with `adapter` and pairs calls with results exactly as
/// the driver does, without a database. Returns the calls in the order they were completed, then
/// those still without a result (`status: None`), and the malformed-line count.
pub fn parse_all(adapter: &mut dyn Adapter, bytes: &[u8]) -> (Vec<CallEvent>, u64) {
    let mut pairing = pairing::Pairing::default();
    let mut pending = std::collections::HashSet::new();
    let mut events = Vec::new();
    let mut bad = 0;
    let complete = match memchr::memrchr(b'\n', bytes) {
        Some(end) => &bytes[..=end],
        None => &[][..],
    };
    for line in complete.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let parsed = {
            let wanted = |id: &str| pairing.open.contains_key(id);
            adapter.line(line, &wanted, &mut events)
        };
        if parsed.is_err() {
            bad += 1;
        }
        for e in events.drain(..) {
            pairing.apply(e, &mut pending);
        }
    }
    let mut calls = pairing.done;
    for id in &pairing.order {
        if let Some(c) = pairing.open.remove(id) {
            calls.push(c);
        }
    }
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
