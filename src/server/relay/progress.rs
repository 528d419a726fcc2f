//! Progress relay for HTTP clients: a `tools/call` whose `_meta` carries a `progressToken`, from a
//! client that accepts SSE, is answered as an SSE stream holding the upstream's
//! `notifications/progress` for that call, then the result. The token is swapped for one unique to
//! this proxy on the way up and swapped back on the way down, so two clients that picked the same
//! token each get only their own progress. `answer/` decides when a call is relayed; this takes
//! the upstream's notifications and the call to run, never the `Proxy`.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::response::Response;
use serde_json::{Map, Value};
use tokio::sync::broadcast;

use crate::server::relay::sse;
use crate::upstream::Upstream;

static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

/// The client's progress token, when `msg` is a `tools/call` that has one.
pub fn token(msg: &Map<String, Value>) -> Option<Value> {
    if msg.get("method").and_then(Value::as_str) != Some("tools/call") {
        return None;
    }
    msg.get("params")?
        .get("_meta")?
        .get("progressToken")
        .filter(|t| t.is_string() || t.is_number())
        .cloned()
}

/// True when the `Accept` header allows an SSE reply.
pub fn accepts_sse(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| a.to_ascii_lowercase().contains(sse::CONTENT_TYPE))
}

/// Runs `call` on `msg` (a `tools/call` carrying `client_token`) and streams its progress, then
/// its answer.
pub fn stream<F, Fut>(
    upstream: &dyn Upstream,
    mut msg: Map<String, Value>,
    client_token: Value,
    call: F,
) -> Response
where
    F: FnOnce(Map<String, Value>) -> Fut + Send + 'static,
    Fut: Future<Output = Option<Value>> + Send + 'static,
{
    let ours = swap_token(&mut msg);
    // Subscribed before the call starts, so no early progress is missed.
    let notes = upstream.notifications();
    let (tx, done) = tokio::sync::oneshot::channel::<Option<Value>>();
    tokio::spawn(async move {
        let _ = tx.send(call(msg).await);
    });
    let body = futures_util::stream::unfold((notes, Some(done)), move |(mut notes, done)| {
        let (ours, client_token) = (ours.clone(), client_token.clone());
        async move {
            let mut done = done?;
            loop {
                tokio::select! {
                    r = &mut done => {
                        // Progress sent before the result is already in the channel.
                        let mut text = String::new();
                        while let Ok(n) = notes.try_recv() {
                            if let Some(n) = for_client(n, &ours, &client_token) {
                                text.push_str(&sse::event(&n));
                            }
                        }
                        if let Some(v) = r.ok().flatten() {
                            text.push_str(&sse::event(&v));
                        }
                        return Some((text, (notes, None)));
                    }
                    n = notes.recv() => match n.map(|n| for_client(n, &ours, &client_token)) {
                        Ok(Some(n)) => return Some((sse::event(&n), (notes, Some(done)))),
                        Ok(None) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                        Err(_) => {
                            let text = done.await.ok().flatten().map(|v| sse::event(&v)).unwrap_or_default();
                            return Some((text, (notes, None)));
                        }
                    },
                }
            }
        }
    });
    sse::response(body)
}

/// Runs `call` (a `tools/call` sent with progress token `token`), passing each upstream progress
/// notification for `token` on `notes` (subscribed before the call starts) to `out` as it comes,
/// and returns the answer after them (for `--stdio`, whose one client's tokens are forwarded as it
/// sent them, and the input relay).
pub async fn relaying<T>(
    mut notes: broadcast::Receiver<Value>,
    call: impl Future<Output = T>,
    token: &Value,
    out: impl Fn(Value),
) -> T {
    use tokio::sync::broadcast::error::RecvError;
    tokio::pin!(call);
    loop {
        tokio::select! {
            r = &mut call => {
                while let Ok(n) = notes.try_recv() {
                    if is_ours(&n, token) {
                        out(n);
                    }
                }
                return r;
            }
            n = notes.recv() => match n {
                Ok(n) if is_ours(&n, token) => out(n),
                Ok(_) | Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return call.await,
            },
        }
    }
}

/// Puts a progress token unique to this proxy in place of the client's in `msg`'s `_meta` (two
/// clients may send the same one through the one upstream); returns it.
pub(crate) fn swap_token(msg: &mut Map<String, Value>) -> Value {
    let ours = Value::String(format!(
        "mws-{}",
        NEXT_TOKEN.fetch_add(1, Ordering::Relaxed)
    ));
    if let Some(meta) = msg
        .get_mut("params")
        .and_then(|p| p.get_mut("_meta"))
        .and_then(Value::as_object_mut)
    {
        meta.insert("progressToken".into(), ours.clone());
    }
    ours
}

/// The upstream's progress `n` for the call sent with token `ours`, with the client's token
/// `theirs` back in it; `None` for anything else.
pub(crate) fn for_client(mut n: Value, ours: &Value, theirs: &Value) -> Option<Value> {
    if !is_ours(&n, ours) {
        return None;
    }
    n["params"]["progressToken"] = theirs.clone();
    Some(n)
}

/// Is `n` the upstream's progress for the call we sent with token `ours`?
pub(crate) fn is_ours(n: &Value, ours: &Value) -> bool {
    n.get("method").and_then(Value::as_str) == Some("notifications/progress")
        && n.pointer("/params/progressToken") == Some(ours)
}
