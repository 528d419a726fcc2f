//! A 2025 HTTP session's project (docs/working-set.md#per-project): the first `tools/list` of a
//! session whose client declared `roots` is answered as an SSE stream that first asks the client
//! `roots/list` (`answer::input::ask_roots`), keeps the project of its first root for the session,
//! then carries the listing of that project. Asked once per session; a client that does not
//! answer within `ROOTS_WAIT` gets the listing of an unknown project. Must not decide what a
//! project lists (`crate::listed`).

use std::sync::Arc;
use std::time::Duration;

use axum::response::Response;
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::mcp::Caller;
use crate::server::answer::input;
use crate::server::http::reply::AppState;
use crate::server::relay::sse;

/// How long the first `tools/list` waits for the client's roots. Raising it lets a slow client
/// still name its project; the listing waits that long for a client that never answers.
pub const ROOTS_WAIT: Duration = Duration::from_secs(2);

/// Whether `msg` from `caller` is the one request that asks its session's roots: the session's
/// first `tools/list`, from a client that declared `roots` and takes an SSE reply, with
/// `promote.perProject` on. Marks the roots as asked.
pub(super) fn asks_roots(
    st: &AppState,
    msg: &Map<String, Value>,
    caller: &Caller,
    sse: bool,
) -> bool {
    let Some(sid) = caller.session.as_deref() else {
        return false;
    };
    let declared = caller
        .input
        .as_ref()
        .is_some_and(|c| c.get("roots").is_some());
    sse && declared
        && caller.project.is_none()
        && st.proxy.config().promote.per_project
        && msg.get("method").and_then(Value::as_str) == Some("tools/list")
        && msg.contains_key("id")
        && st.sessions.ask_roots_once(sid)
}

/// Answers the session's first `tools/list` after asking its roots (`asks_roots` said yes).
pub(super) fn list_after_roots(
    st: &AppState,
    msg: Map<String, Value>,
    mut caller: Caller,
) -> Response {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let (proxy, sessions, pending) = (st.proxy.clone(), st.sessions.clone(), st.inputs.clone());
    tokio::spawn(async move {
        let sid = caller.session.clone().unwrap_or_default();
        let project: Option<Arc<str>> = input::ask_roots(&pending, &sid, ROOTS_WAIT, &tx)
            .await
            .map(Arc::from);
        sessions.set_project(&sid, project.clone());
        caller.project = project;
        caller.input = None;
        if let Some(answer) = proxy.handle(msg, &caller).await {
            let _ = tx.send(sse::event(&answer));
        }
    });
    sse::response(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)))
}
