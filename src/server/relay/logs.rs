//! Log relay for HTTP clients: a `tools/call` from a client that asked for log messages (a 2026
//! request's `_meta["io.modelcontextprotocol/logLevel"]`, or a legacy session's
//! `logging/setLevel`) and accepts SSE is answered as an SSE stream holding the upstream's
//! `notifications/message` for that call (and its progress, when it has a progress token), then
//! the result. The call runs in an `upstream::related` scope, which asks the upstream for logs at
//! the client's level and catches the messages on that call's own upstream response stream, so a
//! client only ever gets its own call's logs. Relayed only from an HTTP upstream (or, of several
//! servers, an HTTP one) that offers `logging` (a stdio child's messages carry nothing that ties
//! them to a call); only then does mws advertise `logging`. `answer/` decides when a call is relayed; this takes the upstream and
//! the call to run, never the `Proxy`. Never stores or logs a message's content.

use std::future::Future;

use axum::response::Response;
use serde_json::{Map, Value};
use tokio::sync::{broadcast, mpsc};

use crate::mcp::{RpcError, code};
use crate::server::relay::{progress, sse};
use crate::upstream::Upstream;
use crate::upstream::related::{self, CallSink, Level};

/// Does this proxy relay log messages (and so advertise `logging`)? Yes when the upstream, or
/// one of several servers, can hand a call its own messages (`Upstream::relays_logs`).
pub fn relays(upstream: &dyn Upstream) -> bool {
    upstream.relays_logs()
}

/// The level a 2026 `tools/call` asks for in its `_meta`, if any (an unknown name counts as none).
pub fn requested(msg: &Map<String, Value>) -> Option<Level> {
    if msg.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    msg.get("params")?
        .get("_meta")?
        .get(related::META_LOG_LEVEL)?
        .as_str()
        .and_then(Level::parse)
}

/// The level of a legacy `logging/setLevel` request's params, or the error the client gets.
pub fn set_level_params(params: Option<&Value>) -> Result<Level, RpcError> {
    let name = params
        .and_then(|p| p.get("level"))
        .and_then(Value::as_str)
        .unwrap_or("");
    Level::parse(name).ok_or_else(|| {
        RpcError::new(
            code::INVALID_PARAMS,
            format!(
                "logging/setLevel needs 'level', one of: {}",
                related::LEVELS.join(", ")
            ),
        )
    })
}

/// What the SSE writer reads from: the call's log messages, the shared channel its progress comes
/// on (with the token swap), and the answer.
struct Sources {
    logs: mpsc::Receiver<Value>,
    progress: Option<(broadcast::Receiver<Value>, Value, Value)>,
}

impl Sources {
    /// A progress notification for this call, with the client's token put back.
    fn ours(&self, n: Value) -> Option<Value> {
        let (_, ours, theirs) = self.progress.as_ref()?;
        progress::for_client(n, ours, theirs)
    }

    /// Everything already waiting, as SSE text.
    fn drain(&mut self) -> String {
        let mut text = String::new();
        while let Ok(n) = self.logs.try_recv() {
            text.push_str(&sse::event(&n));
        }
        let mut waiting = Vec::new();
        if let Some((rx, _, _)) = self.progress.as_mut() {
            while let Ok(n) = rx.try_recv() {
                waiting.push(n);
            }
        }
        for n in waiting.into_iter().filter_map(|n| self.ours(n)) {
            text.push_str(&sse::event(&n));
        }
        text
    }
}

/// Runs `call` on `msg` (a `tools/call` whose client wants logs at `level`; `progress_token` when
/// it also carries one) and streams its log messages and progress, then its answer.
pub fn stream<F, Fut>(
    upstream: &dyn Upstream,
    mut msg: Map<String, Value>,
    level: Level,
    progress_token: Option<Value>,
    call: F,
) -> Response
where
    F: FnOnce(Map<String, Value>) -> Fut + Send + 'static,
    Fut: Future<Output = Option<Value>> + Send + 'static,
{
    let progress = progress_token.map(|theirs| {
        let ours = progress::swap_token(&mut msg);
        // Subscribed before the call starts, so no early progress is missed.
        (upstream.notifications(), ours, theirs)
    });
    let (sink, logs) = CallSink::new(level);
    // The call's progress comes in order with its logs when it arrives on the call's own stream;
    // the shared channel catches any that arrives elsewhere.
    let sink = match &progress {
        Some((_, ours, theirs)) => sink.with_progress(ours.clone(), theirs.clone()),
        None => sink,
    };
    let (tx, done) = tokio::sync::oneshot::channel::<Option<Value>>();
    tokio::spawn(async move {
        let answer = related::scope(sink, call(msg)).await;
        let _ = tx.send(answer);
    });
    let sources = Sources { logs, progress };
    let body = futures_util::stream::unfold((sources, Some(done)), |(mut src, done)| async move {
        let mut done = done?;
        loop {
            tokio::select! {
                r = &mut done => {
                    // Whatever came before the answer is already waiting.
                    let mut text = src.drain();
                    if let Some(v) = r.ok().flatten() {
                        text.push_str(&sse::event(&v));
                    }
                    return Some((text, (src, None)));
                }
                Some(n) = src.logs.recv() => return Some((sse::event(&n), (src, Some(done)))),
                n = next_progress(&mut src.progress) => {
                    if let Some(n) = n.and_then(|n| src.ours(n)) {
                        return Some((sse::event(&n), (src, Some(done))));
                    }
                }
            }
        }
    });
    sse::response(body)
}

/// For `--stdio` and the input relay: runs `call` (one `tools/call`'s handling) with its log
/// messages at `level` passed to `out` as they come, and returns its answer after them.
pub async fn relaying<F, T>(level: Level, call: F, out: impl Fn(Value)) -> T
where
    F: Future<Output = T>,
{
    let (sink, mut logs) = CallSink::new(level);
    let call = related::scope(sink, call);
    tokio::pin!(call);
    loop {
        tokio::select! {
            r = &mut call => {
                while let Ok(n) = logs.try_recv() {
                    out(n);
                }
                return r;
            }
            Some(n) = logs.recv() => out(n),
        }
    }
}

/// The next message on the progress channel; pends forever when there is none (or it closed), so
/// the answer and the logs decide when the stream ends.
async fn next_progress(
    progress: &mut Option<(broadcast::Receiver<Value>, Value, Value)>,
) -> Option<Value> {
    let Some((rx, _, _)) = progress.as_mut() else {
        return std::future::pending().await;
    };
    match rx.recv().await {
        Ok(n) => Some(n),
        Err(broadcast::error::RecvError::Lagged(_)) => None,
        Err(broadcast::error::RecvError::Closed) => {
            *progress = None;
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn msg(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn requested_levels() {
        let cases = [
            (
                json!({"method": "tools/call", "params": {"_meta": {related::META_LOG_LEVEL: "debug"}}}),
                Some("debug"),
            ),
            (
                json!({"method": "tools/call", "params": {"_meta": {related::META_LOG_LEVEL: "loud"}}}),
                None,
            ),
            (
                json!({"method": "tools/call", "params": {"_meta": {}}}),
                None,
            ),
            (json!({"method": "tools/call", "params": {}}), None),
            (
                json!({"method": "tools/list", "params": {"_meta": {related::META_LOG_LEVEL: "debug"}}}),
                None,
            ),
        ];
        for (m, want) in cases {
            assert_eq!(requested(&msg(m.clone())).map(Level::name), want, "{m}");
        }
    }

    #[test]
    fn set_level_errors_name_the_levels() {
        assert_eq!(
            set_level_params(Some(&json!({"level": "notice"})))
                .unwrap()
                .name(),
            "notice"
        );
        for bad in [None, Some(json!({})), Some(json!({"level": "verbose"}))] {
            let e = set_level_params(bad.as_ref()).unwrap_err();
            assert_eq!(e.code, code::INVALID_PARAMS);
            assert_eq!(
                e.message,
                "logging/setLevel needs 'level', one of: debug, info, notice, warning, error, \
                 critical, alert, emergency"
            );
        }
    }
}
