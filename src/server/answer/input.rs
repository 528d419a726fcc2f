//! Input requests for legacy clients (docs/protocol.md): a 2026-07-28 upstream cannot send a
//! server->client request; it answers `InputRequiredResult` (`resultType: "input_required"`,
//! `inputRequests`, `requestState`) and expects the request again with `inputResponses`. A 2025
//! session client that declared `sampling`, `elicitation` or `roots` in `initialize` knows only
//! server->client requests, so mws asks it each input request on the call's SSE response stream,
//! waits (within `callMs`) for the answers it POSTs back with its `Mcp-Session-Id`, and sends the
//! call again with them, for at most `MAX_ROUNDS` rounds; the client sees one call. The upstream
//! hears that the client can take input only when this relay can carry it. The call's progress
//! and (when the session set a level) log messages ride on the same stream. A call that never
//! asks for input costs nothing extra: the first answer is looked at once (`asks_input`).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::response::Response;
use serde_json::{Map, Value, json};
use tokio::sync::{mpsc, oneshot};

use crate::mcp::{self, Caller, RpcError, code};
use crate::server::proxy::Proxy;
use crate::server::relay::{logs, progress, sse};
use crate::upstream::related::Level;

/// Rounds of input one call may ask for before mws gives up on it. Raising it lets an upstream
/// ask more questions in a row; each round costs the client one more answer and the upstream one
/// more request.
pub const MAX_ROUNDS: usize = 8;

/// Client capabilities whose requests mws relays (what a 2026 `InputRequest` may be).
const INPUT_CAPABILITIES: &[&str] = &["sampling", "elicitation", "roots"];

/// Requests a 2026 upstream may answer with `InputRequiredResult`.
const ASKING_METHODS: &[&str] = &["tools/call", "prompts/get", "resources/read"];

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The relayable part of a legacy `initialize`'s `capabilities`; `None` when it declares none.
pub fn capabilities(initialize_params: Option<&Value>) -> Option<Arc<Value>> {
    let caps = initialize_params?.get("capabilities")?.as_object()?;
    let relayed: Map<String, Value> = INPUT_CAPABILITIES
        .iter()
        .filter_map(|k| {
            Some((
                k.to_string(),
                caps.get(*k).filter(|v| v.is_object())?.clone(),
            ))
        })
        .collect();
    (!relayed.is_empty()).then(|| Arc::new(Value::Object(relayed)))
}

/// Keeps `caller.input` (the session's relayable capabilities) only for a request whose answer
/// this relay can carry: one that may ask for input, from a client that accepts an SSE reply
/// (`stream`).
pub fn limit(caller: &mut Caller, msg: &Map<String, Value>, stream: bool) {
    if caller.input.is_none() {
        return;
    }
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    if !ASKING_METHODS.contains(&method) || !stream || !msg.contains_key("id") {
        caller.input = None;
    }
}

/// True when `resp` (a JSON-RPC response) is an `InputRequiredResult`.
pub fn asks_input(resp: &Value) -> bool {
    resp.pointer("/result/resultType").and_then(Value::as_str) == Some("input_required")
}

/// True when `msg` is a JSON-RPC response the client posted (to one of our requests).
pub fn is_response(msg: &Map<String, Value>) -> bool {
    !msg.contains_key("method")
        && msg.contains_key("id")
        && (msg.contains_key("result") || msg.contains_key("error"))
}

/// Our server->client requests waiting for the client's answer: request id → (session, waiter).
#[derive(Default)]
pub struct Pending {
    waiting: Mutex<HashMap<String, (String, oneshot::Sender<Value>)>>,
}

impl Pending {
    fn register(&self, session: &str) -> (String, oneshot::Receiver<Value>) {
        let id = format!("mws-input-{}", NEXT_ID.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), (session.to_string(), tx));
        (id, rx)
    }

    /// Hands a posted response to the call waiting for it. False (and nothing happens) when no
    /// call waits for that id in that session.
    pub fn deliver(&self, session: Option<&str>, msg: &Map<String, Value>) -> bool {
        let Some(id) = msg.get("id").and_then(Value::as_str) else {
            return false;
        };
        let mut waiting = self.lock();
        match waiting.get(id) {
            Some((s, _)) if Some(s.as_str()) == session => {}
            _ => return false,
        }
        let Some((_, tx)) = waiting.remove(id) else {
            return false;
        };
        tx.send(Value::Object(msg.clone())).is_ok()
    }

    fn forget(&self, ids: &[String]) {
        let mut waiting = self.lock();
        for id in ids {
            waiting.remove(id);
        }
    }

    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (String, oneshot::Sender<Value>)>> {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Answers `msg` (from `caller`, whose `input` is set) as an SSE stream: the input requests of
/// each round as server->client requests, the progress of a call that asked for it, then the
/// final answer. `first` is the answer of a first round already made (`None`: make it here).
/// `log_level`: the session asked for log messages (`logging/setLevel`); each round's are relayed.
pub fn relay(
    proxy: Arc<Proxy>,
    pending: Arc<Pending>,
    msg: Map<String, Value>,
    caller: Caller,
    first: Option<Value>,
    log_level: Option<Level>,
) -> Response {
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        let answer = rounds(&proxy, &pending, msg, &caller, first, log_level, &tx).await;
        let _ = tx.send(sse::event(&answer));
    });
    sse::response(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)))
}

/// The call's rounds until an answer that asks for nothing (or an error for the client).
async fn rounds(
    proxy: &Proxy,
    pending: &Pending,
    mut msg: Map<String, Value>,
    caller: &Caller,
    first: Option<Value>,
    log_level: Option<Level>,
    out: &mpsc::UnboundedSender<String>,
) -> Value {
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let fail = |m: String| mcp::error_response(&id, code::INTERNAL_ERROR, &m, None);
    let budget = Duration::from_millis(proxy.config().timeouts.call_ms);
    let mut answer = match first {
        Some(a) => a,
        None => one_round(proxy, &msg, caller, log_level, out).await,
    };
    for _ in 0..MAX_ROUNDS {
        if !asks_input(&answer) {
            return answer;
        }
        let Some(session) = caller.session.as_deref() else {
            return fail(
                "the upstream asked for input, and this client has no session to answer in".into(),
            );
        };
        let result = answer
            .get_mut("result")
            .map(Value::take)
            .unwrap_or_default();
        let inputs = match ask(pending, session, &result, budget, out).await {
            Ok(inputs) => inputs,
            Err(e) => return mcp::error_response(&id, e.code, &e.message, e.data),
        };
        let params = msg.entry("params").or_insert_with(|| json!({}));
        if let Some(p) = params.as_object_mut() {
            p.insert("inputResponses".into(), Value::Object(inputs));
            match result.get("requestState") {
                Some(state) => p.insert("requestState".into(), state.clone()),
                None => p.remove("requestState"),
            };
        }
        answer = one_round(proxy, &msg, caller, log_level, out).await;
    }
    if asks_input(&answer) {
        return fail(format!(
            "the upstream still asked for input after {MAX_ROUNDS} rounds; mws gave up on the call"
        ));
    }
    answer
}

/// One request upstream, its log messages at `log_level` relayed to `out` as they come.
async fn one_round(
    proxy: &Proxy,
    msg: &Map<String, Value>,
    caller: &Caller,
    log_level: Option<Level>,
    out: &mpsc::UnboundedSender<String>,
) -> Value {
    let call = with_progress(proxy, msg, caller, out);
    let Some(level) = log_level else {
        return call.await;
    };
    let relay = |n: Value| {
        let _ = out.send(sse::event(&n));
    };
    logs::relaying(level, async { Some(call.await) }, relay)
        .await
        .unwrap_or(Value::Null)
}

/// One request upstream; a call carrying a `progressToken` gets its progress relayed to `out`
/// (under a token of ours upstream, so two clients with the same token stay apart).
async fn with_progress(
    proxy: &Proxy,
    msg: &Map<String, Value>,
    caller: &Caller,
    out: &mpsc::UnboundedSender<String>,
) -> Value {
    let Some(client_token) = progress::token(msg) else {
        return proxy
            .handle(msg.clone(), caller)
            .await
            .unwrap_or(Value::Null);
    };
    let ours = Value::String(format!(
        "mws-input-progress-{}",
        NEXT_ID.fetch_add(1, Ordering::Relaxed)
    ));
    let mut msg = msg.clone();
    if let Some(meta) = msg
        .get_mut("params")
        .and_then(|p| p.get_mut("_meta"))
        .and_then(Value::as_object_mut)
    {
        meta.insert("progressToken".into(), ours.clone());
    }
    let relay = |mut n: Value| {
        n["params"]["progressToken"] = client_token.clone();
        let _ = out.send(sse::event(&n));
    };
    let notes = proxy.upstream().notifications();
    progress::relaying(notes, proxy.handle(msg.clone(), caller), &ours, relay)
        .await
        .unwrap_or(Value::Null)
}

/// Asks the client of `session` for its roots (`roots/list`) on `out` and waits at most `budget`
/// for the answer; the project of its first `file://` root (`crate::project::from_file_uri`), or
/// `None` when it has none, refuses, answers garbage or does not answer in time.
pub async fn ask_roots(
    pending: &Pending,
    session: &str,
    budget: Duration,
    out: &mpsc::UnboundedSender<String>,
) -> Option<String> {
    let (id, rx) = pending.register(session);
    let _ = out.send(sse::event(&mcp::request(
        &json!(id),
        "roots/list",
        json!({}),
    )));
    let reply = tokio::select! {
        r = tokio::time::timeout(budget, rx) => r.ok().and_then(Result::ok),
        () = out.closed() => None,
    };
    pending.forget(std::slice::from_ref(&id));
    let roots = reply?;
    let first = roots.pointer("/result/roots/0/uri")?.as_str()?.to_string();
    // Resolving symlinks asks the file system, which a root on a hung mount could stall: off the
    // runtime's workers, and bounded like the ask.
    let resolve = tokio::task::spawn_blocking(move || crate::project::from_file_uri(&first));
    tokio::time::timeout(budget, resolve).await.ok()?.ok()?
}

/// Sends each of `result`'s `inputRequests` to the client and collects its answers by key, all
/// within `budget`.
async fn ask(
    pending: &Pending,
    session: &str,
    result: &Value,
    budget: Duration,
    out: &mpsc::UnboundedSender<String>,
) -> Result<Map<String, Value>, RpcError> {
    let requests = result
        .get("inputRequests")
        .and_then(Value::as_object)
        .filter(|r| !r.is_empty());
    let Some(requests) = requests else {
        return Err(RpcError::new(
            code::INTERNAL_ERROR,
            "the upstream asked for input (input_required) but named no inputRequests",
        ));
    };
    let waits = send_requests(pending, session, requests, out)?;
    collect_answers(pending, waits, budget, out).await
}

/// One input request the client was sent: its key in `inputRequests`, our id, its method, and
/// where the answer arrives.
type Wait = (String, String, String, oneshot::Receiver<Value>);

/// Sends the client each of the upstream's input requests under an id of ours (none when one
/// names no method).
fn send_requests(
    pending: &Pending,
    session: &str,
    requests: &Map<String, Value>,
    out: &mpsc::UnboundedSender<String>,
) -> Result<Vec<Wait>, RpcError> {
    let mut waits = Vec::with_capacity(requests.len());
    for (key, request) in requests {
        let Some(method) = request.get("method").and_then(Value::as_str) else {
            pending.forget(
                &waits
                    .iter()
                    .map(|(_, id, _, _)| String::clone(id))
                    .collect::<Vec<_>>(),
            );
            return Err(RpcError::new(
                code::INTERNAL_ERROR,
                format!("the upstream's input request {key:?} names no method"),
            ));
        };
        let (id, rx) = pending.register(session);
        let params = request.get("params").cloned().unwrap_or_else(|| json!({}));
        let _ = out.send(sse::event(&mcp::request(&json!(id), method, params)));
        waits.push((key.clone(), id, method.to_string(), rx));
    }
    Ok(waits)
}

/// The client's answers, keyed as the upstream asked, all within `budget`; the first refusal,
/// timeout or hang-up abandons the rest.
async fn collect_answers(
    pending: &Pending,
    waits: Vec<Wait>,
    budget: Duration,
    out: &mpsc::UnboundedSender<String>,
) -> Result<Map<String, Value>, RpcError> {
    let ids: Vec<String> = waits.iter().map(|(_, id, _, _)| id.clone()).collect();
    let deadline = tokio::time::Instant::from_std(Instant::now() + budget);
    let mut inputs = Map::new();
    for (key, _, method, rx) in waits {
        let answered = tokio::select! {
            r = tokio::time::timeout_at(deadline, rx) => r,
            () = out.closed() => {
                // The client hung up: nobody is left to answer or to tell.
                pending.forget(&ids);
                return Err(RpcError::new(code::INTERNAL_ERROR, "the client closed the call's stream"));
            }
        };
        let reply = match answered {
            Ok(Ok(reply)) => reply,
            _ => {
                pending.forget(&ids);
                return Err(RpcError::new(
                    code::INTERNAL_ERROR,
                    format!(
                        "the client did not answer the upstream's {method} request within {:.1} s \
                         (timeouts.callMs); the call was abandoned",
                        budget.as_secs_f64()
                    ),
                ));
            }
        };
        if let Some(r) = reply.get("result") {
            inputs.insert(key, r.clone());
            continue;
        }
        pending.forget(&ids);
        let e = reply.get("error").cloned().unwrap_or_default();
        let mut err = RpcError::new(
            e.get("code")
                .and_then(Value::as_i64)
                .unwrap_or(code::INTERNAL_ERROR),
            format!(
                "the client refused the upstream's {method} request: {}",
                e.get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("no message")
            ),
        );
        err.data = e.get("data").cloned();
        return Err(err);
    }
    Ok(inputs)
}

#[cfg(test)]
#[path = "input_tests.rs"]
mod tests;
