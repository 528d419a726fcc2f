//! Big tool results (docs/tools.md#big-results): a result over `results.maxTokens` is shaped
//! (`shape.rs`) before it reaches the client, and what was cut is kept in memory (`kept.rs`) for
//! `results.keepMinutes`, under `results.memoryMb`, for the paging call `mws_result_page`
//! (`page.rs`). A kept result's id is 128 random bits, and it pages only for the caller that got
//! it (its `owner`: a session, a `--stdio` connection). Results are never written to disk or
//! logged; only the count of bytes saved leaves this module. Must not do I/O.

pub mod count;
pub mod fit;
pub mod kept;
pub mod page;
pub mod shape;

use std::sync::Mutex;
use std::time::Instant;

use serde_json::Value;

use crate::config;
pub use shape::PAGE_TOOL;

/// The shaper and the store of one proxy.
pub struct Results {
    max_tokens: usize,
    keep_minutes: f64,
    cap: usize,
    store: Mutex<kept::Kept>,
}

/// Random bytes in a kept result's id. Raising it makes an id harder still to guess, at two
/// characters of every paging call per byte.
const ID_BYTES: usize = 16;

/// A fresh result id: `ID_BYTES` from the OS random source, in hex. `None` when the source
/// fails (the result is then cut but not kept).
fn random_id() -> Option<String> {
    let mut buf = [0u8; ID_BYTES];
    getrandom::fill(&mut buf).ok()?;
    Some(buf.iter().map(|b| format!("{b:02x}")).collect())
}

impl Results {
    pub fn new(config: &config::Results) -> Results {
        Results {
            max_tokens: config.max_tokens as usize,
            keep_minutes: config.keep_minutes,
            cap: config.memory_bytes(),
            store: Mutex::new(kept::Kept::new(config.memory_bytes(), config.keep())),
        }
    }

    /// Whether a result whose text and structured content take `bytes` bytes in all could need
    /// shaping (`may_shape` of it is then false whatever it holds).
    pub fn may_exceed(&self, bytes: usize) -> bool {
        self.max_tokens != 0 && bytes > self.max_tokens
    }

    /// Whether a result of this many text bytes could need shaping (tokens never outnumber
    /// bytes). False for every result when `maxTokens` is 0.
    pub fn may_shape(&self, result: &Value) -> bool {
        if self.max_tokens == 0 || !result.is_object() {
            return false;
        }
        let text: usize = result
            .get("content")
            .and_then(Value::as_array)
            .map_or(0, |items| {
                items
                    .iter()
                    .filter_map(|i| i.get("text").and_then(Value::as_str))
                    .map(str::len)
                    .sum()
            });
        let structured = result
            .get("structuredContent")
            .map_or(0, crate::mcp::json_len);
        text + structured > self.max_tokens
    }

    /// `result` shaped to `maxTokens`, and the bytes saved (`None`: passed as it was). The cut
    /// parts are kept for paging. Counting tokens is CPU work: call it off the async worker when
    /// `may_shape` says yes.
    pub fn shape(&self, result: Value, owner: &str, now: Instant) -> (Value, Option<usize>) {
        let (result, saved, leftover) = self.shape_deferred(result, owner, now);
        drop(leftover);
        (result, saved)
    }

    /// As `shape`, and what is left of the parsed result to free, which the caller may free
    /// after answering (a cut `structuredContent` array of thousands of values takes
    /// milliseconds to free). Only `owner` can page the kept parts.
    pub fn shape_deferred(
        &self,
        result: Value,
        owner: &str,
        now: Instant,
    ) -> (Value, Option<usize>, Leftover) {
        // `shape::shape` checks the sizes itself (the proxy asked `may_shape` already).
        if self.max_tokens == 0 || !result.is_object() {
            return (result, None, Leftover(Vec::new()));
        }
        let counter = count::o200k();
        let count = |s: &str| counter.count(s);
        let random = random_id();
        let id = random.clone().unwrap_or_default();
        let names = shape::Names {
            id: &id,
            keep_minutes: self.keep_minutes,
        };
        let mut shaped = match shape::shape(result, self.max_tokens, &names, &count) {
            Ok(s) => s,
            Err(untouched) => return (untouched, None, Leftover(Vec::new())),
        };
        let pieces = std::mem::take(&mut shaped.pieces);
        let leftover = Leftover(std::mem::take(&mut shaped.leftover));
        // A result larger than the whole store is not kept, and its markers say so.
        let bytes = pieces.iter().map(kept::Piece::bytes).sum::<usize>() + id.len();
        if random.is_none() || bytes > self.cap || !self.lock().put(id, owner, pieces, now) {
            shape::not_kept(&mut shaped.result);
        }
        (shaped.result, Some(shaped.saved_bytes), leftover)
    }

    /// The answer to `mws_result_page` with `args`, asked by `owner`: a result another caller
    /// got is answered as unknown.
    pub fn page(&self, args: Option<&Value>, owner: &str, now: Instant) -> Value {
        let counter = count::o200k();
        page::answer(args, owner, self, now, &|s: &str| counter.count(s))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, kept::Kept> {
        self.store.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Bytes the store holds now.
    pub fn held_bytes(&self) -> usize {
        self.lock().used_bytes()
    }
}

/// Values cut from a parsed result, already kept as text: dropping it frees them.
pub struct Leftover(Vec<Value>);

impl Leftover {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[cfg(test)]
mod tests;
