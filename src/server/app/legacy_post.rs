//! POST in the 2025 revisions: the protocol version header checked, `initialize` minting a
//! session, the session looked up (404 once it ended), the client's answers to our requests
//! (`input.rs`), resource subscriptions and `logging/setLevel` kept per session, then the call
//! answered as JSON or SSE (with progress, logs or input requests when the client can take them).

use std::time::Instant;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use super::{AppState, Request, SESSION_HEADER, error_reply, header_str, json_reply};
use crate::mcp::{self, Era, LEGACY_VERSIONS, code};
use crate::server::handler::{Caller, negotiate_legacy};
use crate::server::legacy::{MAX_SESSION_CAPABILITIES_BYTES, cap_client_name};
use crate::server::{input, logs, modern, progress, subscriptions};

pub(super) async fn post(st: &AppState, msg: Map<String, Value>, req: Request<'_>) -> Response {
    let Request {
        headers,
        id,
        accept,
        sse_reply,
        user_agent,
        version_header,
    } = req;
    if let Some(v) = version_header {
        let v = modern::decode_header(v).unwrap_or_default();
        if !LEGACY_VERSIONS.contains(&v.as_str()) && v != "2024-11-05" {
            let m = format!(
                "Bad Request: Unsupported protocol version: {v} (supported versions: {})",
                mcp::SUPPORTED_VERSIONS.join(", ")
            );
            return error_reply(
                StatusCode::BAD_REQUEST,
                &id,
                code::INVALID_REQUEST,
                &m,
                None,
            );
        }
    }
    let now = Instant::now();
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let mut log_level = None;
    let (caller, new_session) = if method == "initialize" {
        let params = msg.get("params");
        let client = params
            .and_then(|p| p.pointer("/clientInfo/name"))
            .and_then(Value::as_str)
            .map(cap_client_name)
            .or(user_agent);
        let requested = params
            .and_then(|p| p.get("protocolVersion"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let input = input::capabilities(params);
        let size = input.as_deref().map_or(0, json_len);
        if size > MAX_SESSION_CAPABILITIES_BYTES {
            let m = format!(
                "invalid params: the input capabilities in params.capabilities take {size} bytes; \
                 a session keeps at most {MAX_SESSION_CAPABILITIES_BYTES}"
            );
            return error_reply(StatusCode::OK, &id, code::INVALID_PARAMS, &m, None);
        }
        let sid = match st
            .sessions
            .create(client.clone(), negotiate_legacy(requested), now)
        {
            Ok(sid) => sid,
            Err(full) => {
                let m = full.to_string();
                let status = StatusCode::SERVICE_UNAVAILABLE;
                return error_reply(status, &id, code::INTERNAL_ERROR, &m, None);
            }
        };
        st.sessions.set_input(&sid, input);
        subscriptions::release(st.proxy.upstream(), st.sessions.take_orphaned());
        let caller = Caller {
            era: Era::Legacy,
            client,
            session: Some(sid.clone()),
            input: None,
        };
        (caller, Some(sid))
    } else if let Some(sid) = header_str(headers, SESSION_HEADER) {
        let Some(session) = st.sessions.get(sid, now) else {
            let m = "Session not found: it ended or expired; send initialize again without Mcp-Session-Id";
            return error_reply(StatusCode::NOT_FOUND, &id, -32001, m, None);
        };
        log_level = session.log_level;
        let caller = Caller {
            era: Era::Legacy,
            client: session.client.or(user_agent),
            session: Some(sid.to_string()),
            input: session.input,
        };
        (caller, None)
    } else {
        let caller = Caller {
            era: Era::Legacy,
            client: user_agent,
            session: None,
            input: None,
        };
        (caller, None)
    };
    if input::is_response(&msg) {
        st.inputs.deliver(caller.session.as_deref(), &msg);
        return StatusCode::ACCEPTED.into_response();
    }
    if subscriptions::is_request(&msg) {
        let sid = caller.session.as_deref();
        let resp = subscriptions::answer(&st.proxy, &st.sessions, sid, &id, &msg).await;
        return json_reply(StatusCode::OK, &resp, sse_reply, new_session.as_deref());
    }
    if method == "logging/setLevel" {
        match logs::set_level_params(msg.get("params")) {
            Ok(level) => {
                if let Some(sid) = &caller.session {
                    st.sessions.set_log_level(sid, level);
                }
            }
            Err(e) => return error_reply(StatusCode::OK, &id, e.code, &e.message, e.data),
        }
    }
    let mut caller = caller;
    input::limit(&mut caller, &msg, accept);
    let log_level = log_level.filter(|_| {
        method == "tools/call" && progress::accepts_sse(accept) && logs::relays(&st.proxy)
    });
    // A call that may be asked for input streams through the input relay, with its logs.
    if caller.input.is_some() && (progress::token(&msg).is_some() || log_level.is_some()) {
        let (p, i) = (st.proxy.clone(), st.inputs.clone());
        return input::relay(p, i, msg, caller, None, log_level);
    }
    if let Some(level) = log_level {
        let t = progress::token(&msg);
        return logs::stream(st.proxy.clone(), msg, caller, level, t);
    }
    if new_session.is_none()
        && let Some(t) = progress::token(&msg).filter(|_| progress::accepts_sse(accept))
    {
        return progress::stream(st.proxy.clone(), msg, caller, t);
    }
    // Kept only for a client that can be asked for input: the call may go on in the input relay.
    let kept = caller.input.is_some().then(|| msg.clone());
    let Some(resp) = st.proxy.handle(msg, &caller).await else {
        return StatusCode::ACCEPTED.into_response();
    };
    if let Some(msg) = kept
        && input::asks_input(&resp)
    {
        let (p, i) = (st.proxy.clone(), st.inputs.clone());
        return input::relay(p, i, msg, caller, Some(resp), None);
    }
    json_reply(StatusCode::OK, &resp, sse_reply, new_session.as_deref())
}

/// The length of `v` as JSON text, without building the text.
fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}
