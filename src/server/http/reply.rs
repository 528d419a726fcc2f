//! What the HTTP POST paths share (`app.rs` for both eras' entry and the 2026 path,
//! `legacy_post.rs` for the 2025 session path): the app's state, the request as read before the
//! era is known, and the JSON or SSE replies with the session header. Must not decide anything.

use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::sync::watch;

use crate::mcp;
use crate::server::answer::input;
use crate::server::proxy::Proxy;
use crate::server::relay::sessions::Sessions;
use crate::server::relay::sse;

pub const SESSION_HEADER: &str = "mcp-session-id";

/// What `post_mcp` read from a POST before it knew the era.
pub(super) struct Request<'a> {
    pub(super) headers: &'a HeaderMap,
    pub(super) id: Value,
    /// The client accepts an SSE reply (`progress::accepts_sse`).
    pub(super) accepts_sse: bool,
    pub(super) sse_reply: bool,
    pub(super) user_agent: Option<String>,
    pub(super) version_header: Option<&'a str>,
}

#[derive(Clone)]
pub(super) struct AppState {
    pub(super) proxy: Arc<Proxy>,
    pub(super) sessions: Arc<Sessions>,
    pub(super) shutdown: watch::Receiver<bool>,
    /// Our requests to legacy clients waiting for their answers (`answer/input.rs`).
    pub(super) inputs: Arc<input::Pending>,
}

pub(super) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

pub(super) fn json_reply(
    status: StatusCode,
    body: &Value,
    sse_reply: bool,
    session: Option<&str>,
) -> Response {
    let (ctype, text) = if sse_reply {
        (sse::CONTENT_TYPE, sse::event(body))
    } else {
        (
            "application/json",
            serde_json::to_string(body).unwrap_or_default(),
        )
    };
    let mut resp = (status, [(header::CONTENT_TYPE, ctype)], text).into_response();
    if let Some(sid) = session
        && let Ok(v) = HeaderValue::from_str(sid)
    {
        resp.headers_mut().insert(SESSION_HEADER, v);
    }
    resp
}

pub(super) fn error_reply(
    status: StatusCode,
    id: &Value,
    code: i64,
    message: &str,
    data: Option<Value>,
) -> Response {
    json_reply(
        status,
        &mcp::error_response(id, code, message, data),
        false,
        None,
    )
}
