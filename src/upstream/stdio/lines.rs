//! The messages of a stdio child, as lines: each line it writes routed (a response to the request
//! waiting for it, a notification out, a request of its own answered) and each message to it
//! written as one line. Must not start, stop or restart the child (`mod.rs` does).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::AsyncWriteExt;
use tokio::process::ChildStdin;
use tokio::sync::oneshot;

use crate::mcp::raw::{Answer, RawResult};
use crate::mcp::{self, deep};
use crate::upstream::wire::{OnNotification, WireError, answer_server_request};

/// The waiting requests, by id (`Value::to_string` of it).
pub(super) type Pending = Arc<Mutex<HashMap<String, Waiter>>>;

/// One waiting request and where its answer goes: the response read into a tree (`Tree`), or
/// for a request that takes it (`Wire::request_result`) a result kept as sent (`Kept`).
pub(super) enum Waiter {
    Tree(oneshot::Sender<Result<Value, WireError>>),
    Kept(oneshot::Sender<Result<Answer, WireError>>),
}

impl Waiter {
    /// Hands it the response `msg`, read into a tree.
    fn answer(self, msg: Value) {
        // A waiter gone (its request abandoned) has nothing to hand it to.
        match self {
            Waiter::Tree(tx) => drop(tx.send(Ok(msg))),
            Waiter::Kept(tx) => drop(tx.send(Ok(Answer::Tree(msg)))),
        }
    }

    /// Fails its request with `why`.
    fn refuse(self, why: WireError) {
        match self {
            Waiter::Tree(tx) => drop(tx.send(Err(why))),
            Waiter::Kept(tx) => drop(tx.send(Err(why))),
        }
    }
}

/// Routes one line of the child's stdout: a response to its waiter, a notification out, a request
/// answered. Anything not JSON is skipped with a warning naming the child (`shown`; some servers
/// print banners). A response nested past the parser's depth limit fails its request at once;
/// one whose id cannot be read (or a deep notification) answers no request, and is skipped.
/// Bytes that are not UTF-8 are read as U+FFFD, so such a line is still answered.
pub(super) async fn route_line(
    line: &[u8],
    pending: &Pending,
    stdin: &tokio::sync::Mutex<Option<ChildStdin>>,
    note: &OnNotification,
    shown: &str,
) {
    if answered_kept(line, pending) {
        return;
    }
    // Parsed as bytes: the parser checks the UTF-8 of every string it reads, so the common line
    // is read once; only a line it refuses that is not UTF-8 is read again, mended.
    let parsed = match deep::parse(line) {
        Err(deep::Unparsed::NotJson) if std::str::from_utf8(line).is_err() => {
            deep::parse(String::from_utf8_lossy(line).as_bytes())
        }
        parsed => parsed,
    };
    let msg = match parsed {
        Ok(msg) => msg,
        Err(deep::Unparsed::TooDeep {
            response_to: Some(id),
        }) => {
            if let Some(w) = pending.lock().unwrap().remove(&id.to_string()) {
                w.refuse(WireError::Protocol(deep::too_deep("answer")));
            }
            return;
        }
        Err(deep::Unparsed::TooDeep { response_to: None }) => {
            tracing::warn!(target: "mws::upstream",
                "upstream `{shown}` wrote a line nested {} levels deep or more that answers no \
                 request; skipped", deep::MAX_DEPTH);
            return;
        }
        Err(deep::Unparsed::NotJson) => {
            if !line.trim_ascii().is_empty() {
                tracing::warn!(target: "mws::upstream",
                    "upstream `{shown}` wrote a line that is not JSON-RPC; skipped");
            }
            return;
        }
    };
    match (msg.get("method").is_some(), msg.get("id")) {
        (false, Some(id)) => {
            if let Some(w) = pending.lock().unwrap().remove(&id.to_string()) {
                w.answer(msg);
            }
        }
        (true, Some(_)) => {
            if let Some(reply) = answer_server_request(&msg) {
                let _ = write_line(stdin, &reply).await;
            }
        }
        (true, None) => note(&msg),
        (false, None) => {}
    }
}

/// Answers a waiting request when `line` is a response with a result object and some waiter
/// takes a result kept as sent: the line is read in one pass (`RawResult::of_response`) and, for
/// a `Kept` waiter, the result's bulk is not built into a tree. False when no waiter takes one or
/// the line is anything else (a request, an error, not a result object, deeper than the parser
/// reads, not UTF-8): it is then routed as a `Value`.
fn answered_kept(line: &[u8], pending: &Pending) -> bool {
    let kept = |w: &Waiter| matches!(w, Waiter::Kept(_));
    if !pending.lock().unwrap().values().any(kept) {
        return false;
    }
    let Some((id, result)) = RawResult::of_response(line) else {
        return false;
    };
    let waiter = pending.lock().unwrap().remove(&id.to_string());
    match waiter {
        Some(Waiter::Kept(tx)) => {
            let _ = tx.send(Ok(Answer::Raw(result)));
        }
        Some(w) => match result.into_value() {
            Ok(result) => w.answer(mcp::response(&id, result)),
            Err(e) => w.refuse(WireError::Protocol(format!(
                "the answer does not read: {e}"
            ))),
        },
        // Nobody waits for it (a request abandoned): nothing to do.
        None => {}
    }
    true
}

/// Removes the waiter when a request is abandoned (timeout or cancel).
pub(super) struct PendingGuard<'a>(pub(super) &'a Pending, pub(super) String);
impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.0.lock().unwrap().remove(&self.1);
    }
}

/// Writes `msg` to the child as one line.
pub(super) async fn write_line(
    stdin: &tokio::sync::Mutex<Option<ChildStdin>>,
    msg: &Value,
) -> Result<(), WireError> {
    let mut w = stdin.lock().await;
    let Some(w) = w.as_mut() else {
        return Err(WireError::Down("upstream process is being stopped".into()));
    };
    // Serialised straight into bytes: `format!` would go through `Display`, which costs about
    // twice as much per message.
    let mut line = serde_json::to_vec(msg).unwrap_or_default();
    line.push(b'\n');
    w.write_all(&line)
        .await
        .and(w.flush().await)
        .map_err(|e| WireError::Down(format!("upstream process is gone ({e})")))
}
