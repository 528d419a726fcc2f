//! Progress relay: a request whose `_meta` carries a `progressToken`, from a client that accepts
//! SSE, is answered as an SSE stream with the upstream's `notifications/progress` for it, then the
//! response. The token is made unique per request on the way up (clients reuse small integers, and
//! all clients share one upstream) and restored on the way down.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use tokio::sync::broadcast::error::RecvError;

use crate::server::handler::{Caller, Proxy};
use crate::server::sse;

static NEXT: AtomicU64 = AtomicU64::new(1);

/// The request's progress token, when it asks for progress and can receive it (SSE accepted).
pub fn wanted(msg: &Map<String, Value>, accept: Option<&str>) -> Option<Value> {
    if !msg.contains_key("id")
        || !accept.is_some_and(|a| a.to_ascii_lowercase().contains(sse::CONTENT_TYPE))
    {
        return None;
    }
    msg.get("params")?
        .get("_meta")?
        .get("progressToken")
        .filter(|t| t.is_string() || t.is_number())
        .cloned()
}

/// Answers `msg` as an SSE stream: progress for `token` while the request runs, then its response.
pub fn stream(
    proxy: Arc<Proxy>,
    mut msg: Map<String, Value>,
    caller: Caller,
    token: Value,
) -> Response {
    let unique = json!(format!(
        "mws-progress-{}-{}",
        proxy.run_id,
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    if let Some(meta) = msg
        .get_mut("params")
        .and_then(|p| p.get_mut("_meta"))
        .and_then(Value::as_object_mut)
    {
        meta.insert("progressToken".into(), unique.clone());
    }
    // Subscribed before the request goes up, so no notification can slip past.
    let mut notes = proxy.upstream().notifications();
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let call = proxy.handle(&msg, &caller);
        tokio::pin!(call);
        let mut relaying = true;
        let relay = |n: Value| {
            let mut n = n;
            if n.get("method").and_then(Value::as_str) == Some("notifications/progress")
                && n.pointer("/params/progressToken") == Some(&unique)
            {
                n["params"]["progressToken"] = token.clone();
                let _ = tx.send(sse::event(&n));
            }
        };
        let resp = loop {
            tokio::select! {
                biased;
                note = notes.recv(), if relaying => match note {
                    Ok(n) => relay(n),
                    Err(RecvError::Lagged(_)) => {}
                    Err(RecvError::Closed) => relaying = false,
                },
                resp = &mut call => break resp,
            }
        };
        // Progress sent just before the answer may still be on its way to the channel.
        tokio::task::yield_now().await;
        while let Ok(n) = notes.try_recv() {
            relay(n);
        }
        if let Some(r) = resp {
            let _ = tx.send(sse::event(&r));
        }
    });
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|text| (text, rx))
    })
    .map(Ok::<_, Infallible>);
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, sse::CONTENT_TYPE)
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
