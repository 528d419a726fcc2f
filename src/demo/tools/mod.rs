//! The demo tools: argument checking against each tool's `inputSchema`, then dispatch by name to
//! the backend that owns the data. A domain failure (no such message, page has no such element)
//! is `ToolError::Failed` and becomes an `isError: true` result the model can read.

pub mod browser;
pub mod calendar;
pub mod codesearch;
mod corpus;
pub mod drive;
pub mod mail;
mod schema;
mod vcs;
mod web;

use serde_json::{Map, Value, json};

use time::{Duration, OffsetDateTime};

use browser::Browser;
use calendar::Calendars;
use codesearch::CodeIndex;
use drive::Drive;
use mail::Mailbox;
pub use schema::check_args;

/// Why a tool call did not produce a normal result.
#[derive(Debug, Clone, PartialEq)]
pub enum ToolError {
    /// The arguments are wrong in a way the schema cannot say: a JSON-RPC -32602.
    BadParams(String),
    /// The call was well-formed but failed: an `isError: true` result.
    Failed(String),
}

pub type ToolResult = Result<ToolOut, ToolError>;

/// What a tool returns: a JSON value shown as text, and optionally extra content blocks.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOut {
    pub data: Value,
    pub extra: Vec<Value>,
}

impl ToolOut {
    pub fn json(data: Value) -> ToolOut {
        ToolOut {
            data,
            extra: Vec::new(),
        }
    }

    /// The `tools/call` result: the data pretty-printed in a text block, then any extra blocks.
    pub fn into_result(self) -> Value {
        let text = serde_json::to_string_pretty(&self.data).unwrap_or_default();
        let mut content = vec![json!({"type": "text", "text": text})];
        content.extend(self.extra);
        json!({"content": content, "isError": false})
    }
}

/// Runs the named tool. Arguments have already passed `check_args`.
pub fn call(state: &mut State, name: &str, args: &Map<String, Value>) -> ToolResult {
    let a = Args(args);
    match name.split_once('_') {
        Some(("mail", op)) => mail::call(state, op, &a),
        Some(("calendar", op)) => calendar::call(state, op, &a),
        Some(("drive", op)) => drive::call(state, op, &a),
        Some(("browser", op)) => browser::call(state, op, &a),
        Some(("codesearch", op)) => codesearch::call(state, op, &a),
        _ => Err(ToolError::BadParams(format!("unknown tool: {name}"))),
    }
}

/// Typed access to checked arguments.
pub struct Args<'a>(pub &'a Map<String, Value>);

impl Args<'_> {
    pub fn str(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }
    /// A required string (present after `check_args`; a clear error otherwise).
    pub fn req(&self, key: &str) -> Result<&str, ToolError> {
        self.str(key)
            .ok_or_else(|| ToolError::BadParams(format!("missing required argument \"{key}\"")))
    }
    pub fn bool(&self, key: &str) -> bool {
        self.0.get(key).and_then(Value::as_bool).unwrap_or(false)
    }
    pub fn int(&self, key: &str) -> Option<i64> {
        self.0.get(key).and_then(Value::as_i64)
    }
    pub fn limit(&self, default: usize) -> usize {
        self.int("limit").map_or(default, |n| n.max(1) as usize)
    }
    pub fn strings(&self, key: &str) -> Vec<String> {
        match self.0.get(key) {
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect(),
            _ => Vec::new(),
        }
    }
}

/// A failure the model can read and act on.
pub fn fail<T>(msg: impl Into<String>) -> Result<T, ToolError> {
    Err(ToolError::Failed(msg.into()))
}

/// Parses an RFC 3339 time argument, or says which argument is wrong.
pub fn time_arg(a: &Args, key: &str) -> Result<Option<time::OffsetDateTime>, ToolError> {
    match a.str(key) {
        None => Ok(None),
        Some(s) => crate::clock::parse(s).map(Some).ok_or_else(|| {
            ToolError::BadParams(format!(
                "\"{key}\" must be an RFC 3339 date-time such as 2026-12-01T09:00:00Z, got {s:?}"
            ))
        }),
    }
}

/// Pages a list with an opaque `page_token` (the offset) for tools that take one.
pub fn page<T: Clone>(
    items: &[T],
    a: &Args,
    default_limit: usize,
) -> Result<(Vec<T>, Option<String>), ToolError> {
    let start = match a.str("page_token") {
        None | Some("") => 0,
        Some(t) => t
            .strip_prefix("o")
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&n| n <= items.len())
            .ok_or_else(|| ToolError::BadParams(format!("invalid page_token {t:?}")))?,
    };
    let end = (start + a.limit(default_limit)).min(items.len());
    let next = (end < items.len()).then(|| format!("o{end}"));
    Ok((items[start..end].to_vec(), next))
}

#[cfg(test)]
mod tests;

/// The demo user.
pub const USER: &str = "alex@example.com";

/// The demo upstream's whole world, in memory: one user's mailbox, calendars, drive, browser and
/// a code-search index, seeded at start relative to `now`. Ids come from one counter so they are
/// unique and stable for a given sequence of calls.
pub struct State {
    /// When the server started; seeded data is placed around it.
    pub now: OffsetDateTime,
    seq: u64,
    pub mail: Mailbox,
    pub calendar: Calendars,
    pub drive: Drive,
    pub browser: Browser,
    pub code: CodeIndex,
}

impl State {
    pub fn seeded(now: OffsetDateTime) -> State {
        // Whole seconds keep every timestamp we print in one shape.
        let now = now.replace_nanosecond(0).unwrap_or(now);
        State {
            now,
            seq: 1000,
            mail: Mailbox::seeded(now),
            calendar: Calendars::seeded(now),
            drive: Drive::seeded(now),
            browser: Browser::new(),
            code: CodeIndex::seeded(),
        }
    }

    /// A fresh id with a prefix: `msg_1001`, `evt_1002`...
    pub fn id(&mut self, prefix: &str) -> String {
        self.seq += 1;
        format!("{prefix}_{}", self.seq)
    }

    /// The time of a change: one second after the previous one, so order is visible.
    pub fn tick(&mut self) -> String {
        self.seq += 1;
        crate::clock::fmt(self.now + Duration::seconds((self.seq - 1000) as i64))
    }
}

/// `now` shifted by `minutes`, formatted; for seeding.
pub fn at(now: OffsetDateTime, minutes: i64) -> String {
    crate::clock::fmt(now + Duration::minutes(minutes))
}
