//! Reading an HTTP upstream's answer within `MAX_MESSAGE_BYTES`: a JSON body read chunk by chunk,
//! the cap check for an SSE event being assembled, and reqwest errors described without the URL
//! (which may hold credentials). Must not interpret what it reads.

use futures_util::StreamExt;

use super::super::{MAX_MESSAGE_BYTES, cap_text};
use super::WireError;

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
