//! The transport seam under the negotiation: one JSON-RPC message out, its response back, over
//! HTTP or a stdio child. A `Wire` knows framing, sessions and processes; it does not know eras,
//! envelopes or the catalog. Must not retry anything on its own.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::mcp::raw::Answer;

/// One outgoing message and the request metadata its headers need.
#[derive(Debug, Clone, Copy)]
pub struct Outgoing<'a> {
    /// The whole JSON-RPC message.
    pub msg: &'a Value,
    pub method: &'a str,
    /// `params.name` / `params.uri` for the `Mcp-Name` header.
    pub name: Option<&'a str>,
    /// The protocol version in force (`None` before a legacy `initialize` has answered).
    pub version: Option<&'a str>,
    /// Modern request: send `Mcp-Method` / `Mcp-Name`.
    pub modern: bool,
    /// `Mcp-Param-*` headers (modern `tools/call` with annotated arguments).
    pub params: &'a [(String, String)],
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    /// Nothing to talk to: connection refused, the child exited or could not start.
    #[error("{0}")]
    Down(String),
    /// An HTTP status that carried no JSON-RPC answer.
    #[error("HTTP {0}: {1}")]
    Status(u16, String),
    /// The legacy session is gone (404, or 400 naming our session).
    #[error("session expired")]
    SessionExpired,
    #[error("{0}")]
    Protocol(String),
    /// The request cannot be built from the config (a `${VAR}` that is not set, a bad header).
    #[error("{0}")]
    Config(String),
    /// The server wants an OAuth login (or more scope) that only the user can give.
    /// The text says what to run and why.
    #[error("needs a login: {0}")]
    NeedsLogin(String),
}

/// Called with every notification the upstream sends us (on any stream).
pub type OnNotification = Arc<dyn Fn(&Value) + Send + Sync>;

#[async_trait::async_trait]
pub trait Wire: Send + Sync {
    /// Makes the transport ready (spawns the child when there is none, honouring the restart
    /// back-off). Returns a generation number that changes whenever the peer behind it is new, so
    /// the caller knows to negotiate again.
    async fn connect(&self) -> Result<u64, WireError>;

    /// Sends a request and returns its JSON-RPC response (with `result` or `error`) and the HTTP
    /// status it came with (200 on stdio).
    async fn request(&self, out: Outgoing<'_>) -> Result<(u16, Value), WireError>;

    /// `request` for a `tools/call` whose result the proxy may pass on as sent: a transport that
    /// reads the answer's bytes itself (stdio) keeps the result's bulk unread (`Answer::Raw`);
    /// otherwise the response as `request` gives it (`Answer::Tree`).
    async fn request_result(&self, out: Outgoing<'_>) -> Result<(u16, Answer), WireError> {
        let (status, msg) = self.request(out).await?;
        Ok((status, Answer::Tree(msg)))
    }

    async fn notify(&self, out: Outgoing<'_>) -> Result<(), WireError>;

    /// Forgets the session (HTTP) or ends the child (stdio, `restart`) before negotiating afresh.
    async fn reset(&self, restart: bool);

    /// Opens the stream `list_changed` arrives on: an HTTP GET (legacy, `listen` is `None`) or a
    /// `subscriptions/listen` POST (modern). On stdio every message arrives on the one stdout: a
    /// legacy child needs nothing, a modern one the `subscriptions/listen` request.
    fn listen(&self, _listen: Option<Value>, _version: &str) {}

    /// A probe that kills the peer or is ignored means "legacy" (stdio), rather than "down" (HTTP).
    fn probe_failure_means_legacy(&self) -> bool;

    /// Does a request's own response carry the log messages sent for it (HTTP, each request its
    /// own stream)? On stdio every message shares one stdout and none can be tied to a call.
    fn carries_call_logs(&self) -> bool {
        false
    }

    /// Does closing the request's connection cancel it upstream (modern HTTP)? Otherwise an
    /// abandoned request is followed by `notifications/cancelled`.
    fn closing_cancels(&self, _modern: bool) -> bool {
        false
    }

    /// Restart bookkeeping: the peer negotiated and answered, so its back-off starts over.
    fn healthy(&self) {}

    /// mws is exiting: end the peer politely (a stdio child's input is closed).
    async fn stop(&self) {}
}

/// What we answer to a request the upstream sends us (we declare no client capabilities, so only
/// `ping` is expected).
pub fn answer_server_request(msg: &Value) -> Option<Value> {
    let id = msg.get("id")?;
    let method = msg.get("method")?.as_str()?;
    Some(if method == "ping" {
        crate::mcp::response(id, json!({}))
    } else {
        crate::mcp::error_response(
            id,
            crate::mcp::code::METHOD_NOT_FOUND,
            "mcp-working-set does not serve requests from its upstream",
            None,
        )
    })
}

/// Is this message the response to request `id`?
pub fn is_response_to(msg: &Value, id: &Value) -> bool {
    msg.get("method").is_none()
        && msg.get("id") == Some(id)
        && (msg.get("result").is_some() || msg.get("error").is_some())
}

/// Sorts an incoming message: `Some` when it is a notification or a server request.
pub fn is_notification(msg: &Value) -> bool {
    msg.get("method").is_some() && msg.get("id").is_none()
}
