//! Server-sent events for replies to the client: when to reply as SSE, and one JSON-RPC message per
//! `message` event (the framing itself is `mcp::sse`, shared with the upstream side).

use std::convert::Infallible;

use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::Stream;
use serde_json::Value;

/// Content type of an SSE reply.
pub const CONTENT_TYPE: &str = "text/event-stream";

/// One JSON-RPC message as an SSE event. `data` never holds a raw newline: compact JSON escapes them.
pub fn event(msg: &Value) -> String {
    crate::mcp::sse::encode_message(msg)
}

/// An SSE comment, used as a keep-alive on long-lived streams.
pub use crate::mcp::sse::KEEP_ALIVE;

/// A 200 SSE reply whose body is `events` (each already framed with `event`), not cached.
pub fn response<S>(events: S) -> Response
where
    S: Stream<Item = String> + Send + 'static,
{
    use futures_util::StreamExt;
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, CONTENT_TYPE)
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(events.map(Ok::<_, Infallible>)))
        .unwrap_or_else(|_| StatusCode::INTERNAL_SERVER_ERROR.into_response())
}

/// True when the `Accept` header asks for SSE and not JSON (then the reply is an SSE stream).
pub fn prefers_sse(accept: Option<&str>) -> bool {
    let Some(a) = accept else {
        return false;
    };
    let a = a.to_ascii_lowercase();
    a.contains(CONTENT_TYPE) && !a.contains("application/json") && !a.contains("*/*")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_and_accept() {
        assert_eq!(
            event(&json!({"a": "x\ny"})),
            "event: message\ndata: {\"a\":\"x\\ny\"}\n\n"
        );
        assert!(prefers_sse(Some("text/event-stream")));
        assert!(!prefers_sse(Some("application/json, text/event-stream")));
        assert!(!prefers_sse(None));
    }
}
