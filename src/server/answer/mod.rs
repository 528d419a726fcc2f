//! How a request is answered, decided in one place for every transport (2026 HTTP, 2025 HTTP,
//! `--stdio`): as one message, with the call's progress and log messages before the answer, or
//! through the input relay (a 2025 session client that can be asked for input). `decide` makes the
//! choice; `over_http` and `over_lines` carry it out (an SSE reply, or lines beside the replies).
//! The transports frame a plain answer themselves (status codes and headers differ by era). Must
//! not read the network or headers: transports say whether their client can take a stream.

use std::sync::Arc;

use axum::response::Response;
use serde_json::{Map, Value};

use crate::mcp::{Caller, Era};
use crate::server::answer::input::Pending;
use crate::server::proxy::Proxy;
use crate::server::relay::{logs, progress};
use crate::upstream::related::Level;

pub mod input;

/// How one request's answer travels.
#[derive(Debug, Clone, PartialEq)]
pub enum Way {
    /// One message.
    Plain,
    /// The call's progress (the client's token) before the answer.
    Progress(Value),
    /// The call's log messages at this level (and its progress, with a token) before the answer.
    Logs(Level, Option<Value>),
    /// The input relay (`input.rs`), with the call's logs at this level when the session asked.
    Input(Option<Level>),
}

/// How to answer `msg` from `caller`. `stream`: the transport can send messages before the answer
/// (an HTTP client that accepts SSE; always over `--stdio`). `session_level`: the level a legacy
/// session set with `logging/setLevel` (a 2026 request names its own in `_meta`). Keeps
/// `caller.input` only when the input relay can carry this request's answer (`input::limit`).
pub fn decide(
    proxy: &Proxy,
    msg: &Map<String, Value>,
    caller: &mut Caller,
    stream: bool,
    session_level: Option<Level>,
) -> Way {
    let relays_logs = || logs::relays(proxy.upstream().as_ref());
    choose(msg, caller, stream, session_level, relays_logs)
}

/// `decide` with `relays_logs` saying whether mws relays log messages at all (`logs::relays`).
/// It is asked only for a request that wants its logs: it reads the upstream's status, which a
/// plain call should not pay for.
fn choose(
    msg: &Map<String, Value>,
    caller: &mut Caller,
    stream: bool,
    session_level: Option<Level>,
    relays_logs: impl FnOnce() -> bool,
) -> Way {
    input::limit(caller, msg, stream);
    let token = progress::token(msg).filter(|_| stream);
    let level = match caller.era {
        Era::Modern => logs::requested(msg),
        Era::Legacy if msg.get("method").and_then(Value::as_str) == Some("tools/call") => {
            session_level
        }
        Era::Legacy => None,
    }
    .filter(|_| stream && relays_logs());
    if caller.input.is_some() && (token.is_some() || level.is_some()) {
        return Way::Input(level);
    }
    match (level, token) {
        (Some(level), token) => Way::Logs(level, token),
        (None, Some(token)) => Way::Progress(token),
        (None, None) => Way::Plain,
    }
}

/// An HTTP answer: a stream already made, or the plain answer for the transport to frame (`None`
/// for a notification or a response the client posted).
pub enum Http {
    Stream(Response),
    Plain(Option<Value>),
}

/// Answers `msg` over HTTP the `way` `decide` chose. A plain answer that asks a client that can
/// be asked for input (`InputRequiredResult`) goes on in the input relay.
pub async fn over_http(
    proxy: &Arc<Proxy>,
    inputs: &Arc<Pending>,
    msg: Map<String, Value>,
    caller: Caller,
    way: Way,
) -> Http {
    let upstream = proxy.upstream().as_ref();
    match way {
        Way::Input(level) => {
            let (p, i) = (proxy.clone(), inputs.clone());
            Http::Stream(input::relay(p, i, msg, caller, None, level))
        }
        Way::Logs(level, token) => {
            let proxy = proxy.clone();
            let call = move |msg| async move { proxy.handle(msg, &caller).await };
            Http::Stream(logs::stream(upstream, msg, level, token, call))
        }
        Way::Progress(token) => {
            let proxy = proxy.clone();
            let call = move |msg| async move { proxy.handle(msg, &caller).await };
            Http::Stream(progress::stream(upstream, msg, token, call))
        }
        Way::Plain => {
            // Kept only for a client that can be asked for input: the call may go on in the relay.
            let kept = caller.input.is_some().then(|| msg.clone());
            let resp = proxy.handle(msg, &caller).await;
            match (kept, resp) {
                (Some(msg), Some(resp)) if input::asks_input(&resp) => {
                    let (p, i) = (proxy.clone(), inputs.clone());
                    Http::Stream(input::relay(p, i, msg, caller, Some(resp), None))
                }
                (_, resp) => Http::Plain(resp),
            }
        }
    }
}

/// Answers `msg` over a line transport (`--stdio`) the `way` `decide` chose: the call's progress
/// (the client's own token, forwarded as sent) and log messages go to `out` as they come, and the
/// answer is returned after them. No input relay here: `--stdio` never sets `caller.input`.
pub async fn over_lines(
    proxy: &Proxy,
    msg: Map<String, Value>,
    caller: &Caller,
    way: Way,
    out: impl Fn(Value) + Sync,
) -> Option<Value> {
    let (level, token) = match way {
        Way::Plain => (None, None),
        Way::Progress(token) => (None, Some(token)),
        Way::Logs(level, token) => (Some(level), token),
        Way::Input(level) => (level, progress::token(&msg)),
    };
    let work = async {
        match token {
            Some(t) => {
                let notes = proxy.upstream().notifications();
                progress::relaying(notes, proxy.handle(msg, caller), &t, &out).await
            }
            None => proxy.handle(msg, caller).await,
        }
    };
    match level {
        Some(level) => logs::relaying(level, work, &out).await,
        None => work.await,
    }
}

#[cfg(test)]
mod tests;
