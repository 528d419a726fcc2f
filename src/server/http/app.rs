//! The HTTP side: one axum endpoint `/mcp` serving both eras. POST classifies each message
//! (modern envelope → stateless, else legacy with `Mcp-Session-Id`), validates, dispatches through
//! the shared handler and replies as JSON or SSE per `Accept`; GET opens a legacy session's
//! notification stream (405 without a session); DELETE ends a session. `/` is the status page
//! (`status/`), a separate router sharing nothing with `/mcp` but the guards, which run first.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, FromRequest, Request as AxumRequest, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Map, Value};
use tokio::net::TcpListener;
use tokio::sync::watch;

use crate::mcp::{Caller, Era, check, code};
use crate::server::answer::{self, Http};
use crate::server::http::guards::{self, MAX_BODY_BYTES};
use crate::server::http::modern::{self, McpHeaders};
use crate::server::proxy::Proxy;
use crate::server::proxy::held_listing::SessionKey;
use crate::server::relay::sessions::Sessions;
use crate::server::relay::{progress, sse, streams, subscriptions};

pub use crate::server::http::conn::HEADER_READ_TIMEOUT;
use crate::server::http::reply::{
    AppState, Request, SESSION_HEADER, error_reply, header_str, json_reply,
};
use crate::server::http::{conn, legacy_post};

/// How long a client may take to send a request body once its headers are in (408 past it).
/// Raising it tolerates slower clients, and lets one that trickles its body hold a request that
/// much longer.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Binds `host:port` (loopback only; port 0 picks a free one).
pub async fn bind(host: &str, port: u16) -> anyhow::Result<TcpListener> {
    let ip = guards::bind_addr(host).map_err(anyhow::Error::msg)?;
    let addr = SocketAddr::new(ip, port);
    TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr}: {e}"))
}

/// Serves `/mcp` on `listener` until `shutdown` resolves; open GET streams end then too.
pub async fn serve(
    listener: TcpListener,
    proxy: Arc<Proxy>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let (tx, rx) = watch::channel(false);
    let app = router(proxy, rx);
    conn::serve(listener, app, shutdown, move || {
        let _ = tx.send(true);
    })
    .await
}

/// The `/mcp` and status-page router without a listener (the fuzz target drives it with in-memory requests).
pub fn router(proxy: Arc<Proxy>, shutdown: watch::Receiver<bool>) -> Router {
    let state = AppState {
        proxy,
        sessions: Arc::new(Sessions::default()),
        shutdown,
        inputs: Arc::default(),
    };
    let page = crate::server::status::router(state.proxy.clone());
    Router::new()
        .route("/mcp", post(post_mcp).get(get_mcp).delete(delete_mcp))
        .with_state(state)
        .merge(page)
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                "not found: mws serves MCP at /mcp and its status page at /\n",
            )
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(guards::guard))
}

async fn post_mcp(State(st): State<AppState>, headers: HeaderMap, req: AxumRequest) -> Response {
    let body = match tokio::time::timeout(BODY_READ_TIMEOUT, Bytes::from_request(req, &st)).await {
        Ok(Ok(b)) => b,
        Ok(Err(rej)) => {
            let status = rej.status();
            let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
                format!("request body too large: the limit is {MAX_BODY_BYTES} bytes")
            } else {
                format!("cannot read the request body: {rej}")
            };
            return error_reply(status, &Value::Null, code::INVALID_REQUEST, &message, None);
        }
        Err(_) => {
            let message = format!(
                "request timeout: request body not received within {} s",
                BODY_READ_TIMEOUT.as_secs()
            );
            let status = StatusCode::REQUEST_TIMEOUT;
            return error_reply(status, &Value::Null, code::INVALID_REQUEST, &message, None);
        }
    };
    let value: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            let m = format!("Parse error: the body is not JSON ({e})");
            return error_reply(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                code::PARSE_ERROR,
                &m,
                None,
            );
        }
    };
    let mut msg: Map<String, Value> = match value {
        Value::Object(m) if m.get("jsonrpc").and_then(Value::as_str) == Some("2.0") => m,
        Value::Array(_) => {
            let m = "Invalid request: batch arrays are not supported; send one JSON-RPC message per POST";
            return error_reply(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                code::INVALID_REQUEST,
                m,
                None,
            );
        }
        _ => {
            let m = "Invalid request: expected a JSON-RPC 2.0 object";
            return error_reply(
                StatusCode::BAD_REQUEST,
                &Value::Null,
                code::INVALID_REQUEST,
                m,
                None,
            );
        }
    };
    let big_id = match check::id(msg.get("id"), &body).and_then(|big| {
        check::method(&msg)?;
        Ok(big)
    }) {
        Ok(big) => big,
        Err(m) => {
            let (status, null) = (StatusCode::BAD_REQUEST, &Value::Null);
            return error_reply(status, null, code::INVALID_REQUEST, &m, None);
        }
    };
    drop(body);
    match big_id {
        None => post_message(st, headers, msg).await,
        Some(placeholder) => {
            msg.insert("id".into(), placeholder);
            restore_big_id(post_message(st, headers, msg).await)
        }
    }
}

/// A reply whose body carries a big-id placeholder with the id's digits put back
/// (`mcp::check::restore`), chunk by chunk (an SSE reply is written one event per chunk).
fn restore_big_id(resp: Response) -> Response {
    use futures_util::StreamExt;
    resp.map(|body| {
        let chunks = body.into_data_stream().map(|chunk| {
            chunk.map(|b| match check::has_big_id(&b) {
                true => Bytes::from(check::restore(&b)),
                false => b,
            })
        });
        axum::body::Body::from_stream(chunks)
    })
}

async fn post_message(st: AppState, headers: HeaderMap, msg: Map<String, Value>) -> Response {
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let accept = header_str(&headers, "accept");
    let sse_reply = sse::prefers_sse(accept);
    let accepts_sse = progress::accepts_sse(accept);
    let user_agent = header_str(&headers, "user-agent").map(String::from);
    let version_header = header_str(&headers, "mcp-protocol-version");

    if modern::is_modern(&msg, version_header) {
        if !msg.contains_key("id") {
            return StatusCode::ACCEPTED.into_response();
        }
        let mh = McpHeaders {
            protocol_version: version_header.map(String::from),
            method: header_str(&headers, "mcp-method").map(String::from),
            name: header_str(&headers, "mcp-name").map(String::from),
        };
        let env = match modern::validate(&msg, Some(&mh)) {
            Ok(env) => env,
            Err(e) => return error_reply(StatusCode::BAD_REQUEST, &id, e.code, &e.message, e.data),
        };
        if msg.get("method").and_then(Value::as_str) == Some("tools/call")
            && let Some(params) = msg.get("params")
            && let Some(name) = params.get("name").and_then(Value::as_str)
        {
            let snap = st.proxy.upstream().catalog().await;
            if let Some(tool) = snap.catalog.with_param_headers(name) {
                let look = |n: &str| header_str(&headers, n).map(String::from);
                if let Err(e) = modern::validate_param_headers(tool, params.get("arguments"), &look)
                {
                    return error_reply(StatusCode::BAD_REQUEST, &id, e.code, &e.message, e.data);
                }
            }
        }
        if msg.get("method").and_then(Value::as_str) == Some("subscriptions/listen") {
            let filter = msg.get("params").and_then(|p| p.get("notifications"));
            let up = st.proxy.upstream();
            let relays = subscriptions::relays(up.as_ref()).then_some(up);
            let lists = subscriptions::lists(up.as_ref());
            let mut shape = streams::listen_shape(&id, filter, relays, &lists);
            let client = env.client.as_deref().or(user_agent.as_deref());
            let key = SessionKey::of(None, client);
            shape.gate = Some(st.proxy.list_change_gate(key));
            let notify = shape.tools;
            let ws = st.proxy.working_set_changes();
            return streams::stream(ws, up.as_ref(), shape, st.shutdown.clone(), notify);
        }
        let mut caller = Caller {
            era: Era::Modern,
            client: env.client.or(user_agent),
            session: None,
            input: None,
            project: None,
        };
        let way = answer::decide(&st.proxy, &msg, &mut caller, accepts_sse, None);
        return match answer::over_http(&st.proxy, &st.inputs, msg, caller, way).await {
            Http::Stream(resp) => resp,
            Http::Plain(None) => StatusCode::ACCEPTED.into_response(),
            Http::Plain(Some(resp)) => {
                let status = match resp.pointer("/error/code").and_then(Value::as_i64) {
                    Some(code::METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
                    // The spec's HTTP status for an upstream's MissingRequiredClientCapability.
                    Some(code::MISSING_CAPABILITY) => StatusCode::BAD_REQUEST,
                    _ => StatusCode::OK,
                };
                json_reply(status, &resp, sse_reply, None)
            }
        };
    }

    let req = Request {
        headers: &headers,
        id,
        accepts_sse,
        sse_reply,
        user_agent,
        version_header,
    };
    legacy_post::post(&st, msg, req).await
}

fn method_not_allowed() -> Response {
    let mut r = error_reply(
        StatusCode::METHOD_NOT_ALLOWED,
        &Value::Null,
        code::INVALID_REQUEST,
        "Method Not Allowed: GET and DELETE need an Mcp-Session-Id from initialize",
        None,
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    r
}

fn unknown_session() -> Response {
    error_reply(
        StatusCode::NOT_FOUND,
        &Value::Null,
        code::SESSION_NOT_FOUND,
        "Session not found",
        None,
    )
}

/// GET: a legacy session's stream of server notifications (`tools/list_changed` when the working
/// set or the upstream catalog changes, as the session's listing decides), with keep-alives, until the session ends.
async fn get_mcp(State(st): State<AppState>, headers: HeaderMap) -> Response {
    let Some(sid) = header_str(&headers, SESSION_HEADER) else {
        return method_not_allowed();
    };
    let ended = st.sessions.ended(sid);
    let Some(ended) = ended.filter(|_| st.sessions.get(sid, Instant::now()).is_some()) else {
        return unknown_session();
    };
    let wants = subscriptions::session_wants(st.sessions.clone(), sid);
    let (ws, up) = (st.proxy.working_set_changes(), st.proxy.upstream());
    let mut shape = streams::get_shape(wants, &subscriptions::lists(up.as_ref()), ended);
    shape.gate = Some(st.proxy.list_change_gate(SessionKey::of(Some(sid), None)));
    streams::stream(ws, up.as_ref(), shape, st.shutdown.clone(), true)
}

/// DELETE: ends a legacy session (and with it its GET stream).
async fn delete_mcp(State(st): State<AppState>, headers: HeaderMap) -> Response {
    let Some(sid) = header_str(&headers, SESSION_HEADER) else {
        return method_not_allowed();
    };
    if let Some(ended) = st.sessions.take(sid) {
        subscriptions::release(st.proxy.upstream(), ended.subscriptions);
        st.proxy.session_ended(&SessionKey::of(Some(sid), None));
        StatusCode::OK.into_response()
    } else {
        unknown_session()
    }
}
