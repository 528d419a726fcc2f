//! Reading an HTTP upstream's answer within `MAX_MESSAGE_BYTES`: a JSON body read chunk by chunk,
//! the cap check for an SSE event being assembled, parsing an answer or an event (one nested past
//! the parser's depth limit fails the request at once), and reqwest errors described without the
//! URL (which may hold credentials). Must not interpret what it reads beyond that.

use futures_util::StreamExt;
use serde_json::Value;

use super::WireError;
use crate::mcp::deep;
use crate::upstream::{MAX_MESSAGE_BYTES, cap_text};

/// The error for an answer to `method` that outgrew the cap.
pub fn too_large(method: &str, what: &str) -> WireError {
    WireError::Protocol(format!(
        "{method}: the upstream's {what} is larger than {}, the cap on one upstream message; \
         the request failed",
        cap_text()
    ))
}

/// A reqwest error's innermost cause, never the URL (`without_url`: it may carry credentials).
pub fn describe(e: reqwest::Error) -> String {
    root_cause(&e.without_url())
}

/// The innermost error message (reqwest wraps "connection refused" a few levels down).
fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cur = e;
    while let Some(next) = cur.source() {
        cur = next;
    }
    cur.to_string()
}

/// The whole body, read incrementally; fails as soon as it passes `MAX_MESSAGE_BYTES`.
pub async fn read(resp: reqwest::Response, method: &str) -> Result<Vec<u8>, WireError> {
    if resp
        .content_length()
        .is_some_and(|n| n > MAX_MESSAGE_BYTES as u64)
    {
        return Err(too_large(method, "answer"));
    }
    let mut body = Vec::new();
    let mut stream = resp.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| WireError::Down(describe(e)))?;
        if body.len() + chunk.len() > MAX_MESSAGE_BYTES {
            return Err(too_large(method, "answer"));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// A JSON answer body as a value (`None`: not JSON); one nested too deep fails `method`.
pub fn answer(bytes: &[u8], method: &str) -> Result<Option<Value>, WireError> {
    match deep::parse(bytes) {
        Ok(v) => Ok(Some(v)),
        Err(deep::Unparsed::TooDeep { .. }) => Err(WireError::Protocol(format!(
            "{method}: {}",
            deep::too_deep("answer")
        ))),
        Err(deep::Unparsed::NotJson) => Ok(None),
    }
}

/// An SSE event's data as a value (`None`: skip it); a response to `id` nested too deep fails
/// `method`, any other unreadable event is skipped.
pub fn event(data: &str, id: &Value, method: &str) -> Result<Option<Value>, WireError> {
    match deep::parse(data.as_bytes()) {
        Ok(v) => Ok(Some(v)),
        Err(deep::Unparsed::TooDeep {
            response_to: Some(to),
        }) if to == *id => Err(WireError::Protocol(format!(
            "{method}: {}",
            deep::too_deep("event")
        ))),
        Err(_) => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_deep_answer_or_event_fails_its_request_and_other_text_does_not() {
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":4,"result":{{"structuredContent":{}{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let want = "tools/call: the upstream's answer is JSON nested 128 levels deep or more, \
                    past the limit of mws's JSON parser; the request failed";
        assert_eq!(
            answer(deep.as_bytes(), "tools/call"),
            Err(WireError::Protocol(want.into()))
        );
        assert_eq!(answer(b"<html>", "tools/call"), Ok(None));
        assert_eq!(
            answer(br#"{"id":4,"result":{}}"#, "tools/call"),
            Ok(Some(json!({"id": 4, "result": {}})))
        );
        let want = want.replace("answer", "event");
        assert_eq!(
            event(&deep, &json!(4), "tools/call"),
            Err(WireError::Protocol(want))
        );
        // A deep event answering another request is not this request's failure.
        assert_eq!(event(&deep, &json!(5), "tools/call"), Ok(None));
    }
}
