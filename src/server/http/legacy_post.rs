//! POST in the 2025 revisions: the protocol version header checked, `initialize` minting a
//! session, the session looked up (404 once it ended), the client's answers to our requests
//! (`answer/input.rs`), resource subscriptions and `logging/setLevel` kept per session, then the call
//! answered as JSON or SSE (with progress, logs or input requests when the client can take them).

use std::time::Instant;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

use crate::mcp::{self, Caller, Era, LEGACY_VERSIONS, code, json_len};
use crate::server::answer::input;
use crate::server::answer::{self, Http};
use crate::server::http::reply::{
    AppState, Request, SESSION_HEADER, error_reply, header_str, json_reply,
};
use crate::server::http::{modern, roots};
use crate::server::relay::sessions::{
    MAX_SESSION_CAPABILITIES_BYTES, cap_client_name, negotiate_legacy,
};
use crate::server::relay::{logs, subscriptions};
use crate::upstream::related::Level;

pub(super) async fn post(st: &AppState, msg: Map<String, Value>, req: Request<'_>) -> Response {
    let Request {
        headers,
        id,
        accepts_sse,
        sse_reply,
        user_agent,
        version_header,
    } = req;
    if let Err(resp) = check_version(version_header, &id) {
        return *resp;
    }
    let now = Instant::now();
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let mut log_level = None;
    let (caller, new_session) = if method == "initialize" {
        match initialize(st, &msg, &id, user_agent, now) {
            Ok((caller, sid)) => (caller, Some(sid)),
            Err(resp) => return *resp,
        }
    } else if let Some(sid) = header_str(headers, SESSION_HEADER) {
        match of_session(st, sid, &id, user_agent, now) {
            Ok((caller, level)) => {
                log_level = level;
                (caller, None)
            }
            Err(resp) => return *resp,
        }
    } else {
        let caller = Caller {
            era: Era::Legacy,
            client: user_agent,
            session: None,
            input: None,
            project: None,
        };
        (caller, None)
    };
    if input::is_response(&msg) {
        st.inputs.deliver(caller.session.as_deref(), &msg);
        return StatusCode::ACCEPTED.into_response();
    }
    if subscriptions::is_request(&msg) {
        let sid = caller.session.as_deref();
        let up = st.proxy.upstream().as_ref();
        let resp = subscriptions::answer(up, &st.sessions, sid, &id, &msg).await;
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
    if roots::asks_roots(st, &msg, &caller, accepts_sse) {
        return roots::list_after_roots(st, msg, caller);
    }
    let mut caller = caller;
    let way = answer::decide(&st.proxy, &msg, &mut caller, accepts_sse, log_level);
    match answer::over_http(&st.proxy, &st.inputs, msg, caller, way).await {
        Http::Stream(resp) => resp,
        Http::Plain(None) => StatusCode::ACCEPTED.into_response(),
        Http::Plain(Some(resp)) => {
            json_reply(StatusCode::OK, &resp, sse_reply, new_session.as_deref())
        }
    }
}

/// A `MCP-Protocol-Version` header, when sent, names a 2025 revision (or 2024-11-05); else 400.
fn check_version(version_header: Option<&str>, id: &Value) -> Result<(), Box<Response>> {
    let Some(v) = version_header else {
        return Ok(());
    };
    let v = modern::decode_header(v).unwrap_or_default();
    if LEGACY_VERSIONS.contains(&v.as_str()) || v == "2024-11-05" {
        return Ok(());
    }
    let m = format!(
        "Bad Request: Unsupported protocol version: {v} (supported versions: {})",
        mcp::SUPPORTED_VERSIONS.join(", ")
    );
    Err(Box::new(error_reply(
        StatusCode::BAD_REQUEST,
        id,
        code::INVALID_REQUEST,
        &m,
        None,
    )))
}

/// `initialize`: a new session minted for the client (its name, version and input capabilities
/// kept), or the error reply when its capabilities are too big or the table is full.
fn initialize(
    st: &AppState,
    msg: &Map<String, Value>,
    id: &Value,
    user_agent: Option<String>,
    now: Instant,
) -> Result<(Caller, String), Box<Response>> {
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
        return Err(Box::new(error_reply(
            StatusCode::OK,
            id,
            code::INVALID_PARAMS,
            &m,
            None,
        )));
    }
    let sid = match st
        .sessions
        .create(client.clone(), negotiate_legacy(requested), now)
    {
        Ok(sid) => sid,
        Err(full) => {
            let m = full.to_string();
            let status = StatusCode::SERVICE_UNAVAILABLE;
            return Err(Box::new(error_reply(
                status,
                id,
                code::INTERNAL_ERROR,
                &m,
                None,
            )));
        }
    };
    st.sessions.set_input(&sid, input);
    subscriptions::release(st.proxy.upstream(), st.sessions.take_orphaned());
    let caller = Caller {
        era: Era::Legacy,
        client,
        session: Some(sid.clone()),
        input: None,
        project: None,
    };
    Ok((caller, sid))
}

/// A request in session `sid`: its caller and log level, or 404 once the session ended.
fn of_session(
    st: &AppState,
    sid: &str,
    id: &Value,
    user_agent: Option<String>,
    now: Instant,
) -> Result<(Caller, Option<Level>), Box<Response>> {
    let Some(session) = st.sessions.get(sid, now) else {
        let m =
            "Session not found: it ended or expired; send initialize again without Mcp-Session-Id";
        return Err(Box::new(error_reply(
            StatusCode::NOT_FOUND,
            id,
            code::SESSION_NOT_FOUND,
            m,
            None,
        )));
    };
    let caller = Caller {
        era: Era::Legacy,
        client: session.client.or(user_agent),
        session: Some(sid.to_string()),
        input: session.input,
        project: session.project,
    };
    Ok((caller, session.log_level))
}
