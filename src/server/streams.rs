//! Long-lived SSE streams of server notifications: a legacy session's GET stream and a 2026-07-28
//! `subscriptions/listen` stream. Both send `notifications/tools/list_changed` when the working set
//! or the upstream catalog changes, keep-alives while idle, and end on shutdown.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::mcp;
use crate::server::handler::Proxy;
use crate::server::sse;

/// How often an idle stream sends a keep-alive comment. Raising it lets idle connections be cut
/// sooner by intermediaries; lowering it costs a few bytes more often.
pub const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(15);

/// `_meta` key tagging each message of a `subscriptions/listen` stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// The events of a stream, first to last.
pub struct Shape {
    /// Sent at once (the listen acknowledgement).
    pub first: Option<Value>,
    /// The subscription id to tag notifications with (`None` on a legacy GET stream).
    pub subscription: Option<Value>,
    /// Sent when the server shuts down (the listen result).
    pub last: Option<Value>,
}

/// A `subscriptions/listen` stream for request `id` asking for `filter`.
pub fn listen_shape(id: &Value, filter: Option<&Value>) -> Shape {
    let wants_tools = filter
        .and_then(|f| f.get("toolsListChanged"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let honored = if wants_tools {
        json!({"toolsListChanged": true})
    } else {
        json!({})
    };
    let tag = json!({ META_SUBSCRIPTION_ID: id });
    Shape {
        first: Some(mcp::notification(
            "notifications/subscriptions/acknowledged",
            Some(json!({"notifications": honored, "_meta": tag})),
        )),
        subscription: wants_tools.then(|| id.clone()),
        last: Some(mcp::response(
            id,
            json!({"resultType": "complete", "_meta": tag}),
        )),
    }
}

/// A legacy GET stream: list_changed notifications only.
pub fn get_shape() -> Shape {
    Shape {
        first: None,
        subscription: None,
        last: None,
    }
}

/// `listen` streams with no tools filter send no notifications, only keep-alives.
pub fn stream(
    proxy: &Arc<Proxy>,
    shape: Shape,
    shutdown: watch::Receiver<bool>,
    notify: bool,
) -> Response {
    let mut ws = proxy.working_set_changes();
    let mut cat = proxy.upstream().changes();
    ws.borrow_and_update();
    cat.borrow_and_update();
    let changed = match &shape.subscription {
        Some(id) => mcp::notification(
            "notifications/tools/list_changed",
            Some(json!({"_meta": { META_SUBSCRIPTION_ID: id }})),
        ),
        None => mcp::notification("notifications/tools/list_changed", None),
    };
    let changed = sse::event(&changed);
    let last = shape.last.map(|l| sse::event(&l));
    let state = (ws, cat, true, shutdown, false);
    let body = futures_util::stream::unfold(
        state,
        move |(mut ws, mut cat, cat_alive, mut stop, done)| {
            let changed = changed.clone();
            let last = last.clone();
            async move {
                if done {
                    return None;
                }
                let mut cat_alive = cat_alive;
                let text = tokio::select! {
                    r = ws.changed() => match r {
                        Ok(()) if notify => changed,
                        Ok(()) => sse::KEEP_ALIVE.to_string(),
                        Err(_) => return None,
                    },
                    r = async { if cat_alive { cat.changed().await } else { std::future::pending().await } } => match r {
                        Ok(()) if notify => changed,
                        Ok(()) => sse::KEEP_ALIVE.to_string(),
                        Err(_) => { cat_alive = false; sse::KEEP_ALIVE.to_string() }
                    },
                    _ = stop.wait_for(|s| *s) => String::new(),
                    _ = tokio::time::sleep(KEEP_ALIVE_EVERY) => sse::KEEP_ALIVE.to_string(),
                };
                if text.is_empty() {
                    // Shutdown: the listen result closes the stream, a GET stream just ends.
                    return last.map(|l| (l, (ws, cat, cat_alive, stop, true)));
                }
                Some((text, (ws, cat, cat_alive, stop, false)))
            }
        },
    );
    let first = futures_util::stream::iter(shape.first.map(|f| sse::event(&f)));
    let body = first.chain(body).map(Ok::<_, Infallible>);
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, sse::CONTENT_TYPE)
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(body))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}
