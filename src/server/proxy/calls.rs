//! What the proxy's methods (`mod.rs`) use around a request: its `_meta` split into a
//! `CallContext`, the client's call id keys, the session a stateless client's calls are logged
//! under, the shape of a meta-tool's answer. Must never log arguments, results or query text.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
use crate::clock;
use crate::mcp::{self, Caller, Era};
use crate::server::proxy::meta_tools;
use crate::upstream::{CallContext, UpstreamError};

/// A stateless client (2026-07-28, or legacy without a session) starts a new session after this
/// long without a call. Raising it merges more work into one session, which makes promotion (it
/// counts distinct sessions) slower to promote a tool.
pub const STATELESS_SESSION_GAP: Duration = Duration::from_secs(30 * 60);

/// Request `_meta` keys that carry the client's own call id: Claude Code's tool_use id, Codex's
/// call_id. `ingest` matches transcript calls to proxy rows by it.
pub const CLIENT_CALL_ID_KEYS: &[&str] = &["claudecode/toolUseId", "callId"];

pub(crate) fn text_result(text: String, is_error: bool) -> Value {
    let mut r = json!({"content": [{"type": "text", "text": text}]});
    if is_error {
        r["isError"] = json!(true);
    }
    r
}

/// The `tools/call` answer when the upstream could not be asked or did not answer (down, the
/// connection dropped, a timeout, a broken answer): an `isError` result the model can read,
/// naming the server and what happened, rather than a JSON-RPC error it would never see.
pub(crate) fn outage_result(tool: &str, e: &UpstreamError) -> Value {
    let after = match e {
        UpstreamError::Timeout { .. } => "; it may still have run there",
        _ => "",
    };
    text_result(
        format!("mws could not complete the call to '{tool}': {e}{after}"),
        true,
    )
}

/// The sessions of stateless clients: the client's name plus a new id after
/// `STATELESS_SESSION_GAP` of silence.
#[derive(Default)]
pub(crate) struct StatelessSessions {
    by_client: Mutex<HashMap<String, (String, Instant)>>,
}

impl StatelessSessions {
    /// The session a call is logged under: the transport's, else the client's stateless one
    /// (`run_id` names this proxy process).
    pub(crate) fn session(&self, caller: &Caller, run_id: &str, now: Instant) -> String {
        if let Some(s) = &caller.session {
            return s.clone();
        }
        let client = caller.client.as_deref().unwrap_or("unknown");
        let mut map = self.by_client.lock().unwrap_or_else(|e| e.into_inner());
        let entry = map
            .entry(client.to_string())
            .or_insert_with(|| (new_stateless_id(client, run_id), now));
        if now.duration_since(entry.1) > STATELESS_SESSION_GAP {
            entry.0 = new_stateless_id(client, run_id);
        }
        entry.1 = now;
        entry.0.clone()
    }
}

/// Says once per process, on stderr, under which name clients see each upstream tool named like
/// a meta-tool (`meta_tools`' rule).
pub(crate) fn warn_shadowed(catalog: &Catalog) {
    static WARNED: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    for (name, shown) in meta_tools::shadowed(catalog) {
        let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
        if warned.contains(&name) {
            continue;
        }
        warned.push(name);
        match shown {
            Some(alias) => tracing::warn!(
                "the upstream has a tool named '{name}', like mws's own meta-tool: clients see it \
                 as '{alias}' (the bare name runs mws's {name})"
            ),
            None => tracing::warn!(
                "the upstream has a tool named '{name}', like mws's own meta-tool, and one named \
                 '{SHADOWED}{name}': its '{name}' is not offered to clients",
                SHADOWED = meta_tools::SHADOWED_PREFIX
            ),
        }
    }
}

fn new_stateless_id(client: &str, run_id: &str) -> String {
    format!(
        "proxy:{client}:{}:{run_id}",
        clock::fmt(clock::now()).replace([':', '.'], "")
    )
}

/// True when the upstream answered `InputRequiredResult`: the call goes on in another round.
/// Whether a result asks the client for input (an `InputRequiredResult`) instead of finishing.
pub(crate) fn is_input_request(r: &Value) -> bool {
    r.get("resultType").and_then(Value::as_str) == Some(INPUT_REQUIRED)
}

/// The `resultType` of a result that asks the client for input.
pub(crate) const INPUT_REQUIRED: &str = "input_required";

/// A multi-round call's `inputResponses` and `requestState`, which `call_tool` passes on with the
/// tool it names.
pub(crate) fn input_fields(params: &Value) -> Map<String, Value> {
    ["inputResponses", "requestState"]
        .into_iter()
        .filter_map(|k| Some((k.to_string(), params.get(k)?.clone())))
        .collect()
}

/// Splits a request's `params` into what goes upstream and the context: the `_meta` minus the
/// 2026 envelope keys travels in `CallContext.meta`, the client's name in `CallContext.client`.
pub fn split_meta(mut params: Value, caller: &Caller) -> (Value, CallContext) {
    let client_capabilities = match caller.era {
        Era::Modern => params
            .get("_meta")
            .and_then(|m| m.get(mcp::META_CLIENT_CAPABILITIES))
            .filter(|c| c.is_object())
            .cloned(),
        Era::Legacy => caller.input.as_deref().cloned(),
    };
    let meta = params
        .as_object_mut()
        .and_then(|p| p.remove("_meta"))
        .and_then(|m| match m {
            Value::Object(mut m) => {
                for k in [
                    mcp::META_PROTOCOL_VERSION,
                    mcp::META_CLIENT_INFO,
                    mcp::META_CLIENT_CAPABILITIES,
                    "io.modelcontextprotocol/logLevel",
                ] {
                    m.remove(k);
                }
                (!m.is_empty()).then_some(m)
            }
            _ => None,
        });
    (
        params,
        CallContext {
            client: caller.client.clone(),
            meta,
            client_capabilities,
        },
    )
}
