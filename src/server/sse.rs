//! Server-sent events for replies to the client: when to reply as SSE, and one JSON-RPC message per
//! `message` event (the framing itself is `mcp::sse`, shared with the upstream side).

use serde_json::Value;

/// Content type of an SSE reply.
pub const CONTENT_TYPE: &str = "text/event-stream";

/// One JSON-RPC message as an SSE event. `data` never holds a raw newline: compact JSON escapes them.
pub fn event(msg: &Value) -> String {
    crate::mcp::sse::encode_message(msg)
}

/// An SSE comment, used as a keep-alive on long-lived streams.
pub use crate::mcp::sse::KEEP_ALIVE;

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
