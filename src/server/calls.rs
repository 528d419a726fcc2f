//! `tools/call`: the meta-tools (`search_tools`, forgiving `call_tool`) and forwarding, each call
//! and search logged off the request path (`LogSink`), with the client's own call id and a session.
//! Must never log arguments, results or query text.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::call::{Call, Status};
use crate::clock;
use crate::mcp::code;
use crate::search::{SearchIndex, SearchOptions};
use crate::server::handler::{Caller, Proxy, RpcError, split_meta};
use crate::server::listing::listed_names;
use crate::server::meta_tools::{self, CALL_TOOL, Resolved, SEARCH_TOOLS};
use crate::store::SearchRecord;
use crate::upstream::{CallContext, CatalogSource, UpstreamError};

/// A stateless client (2026-07-28, or legacy without a session) starts a new session after this
/// long without a call. Raising it merges more work into one session, which makes promotion (it
/// counts distinct sessions) slower to promote a tool.
pub const STATELESS_SESSION_GAP: Duration = Duration::from_secs(30 * 60);

/// Request `_meta` keys that carry the client's own call id: Claude Code's tool_use id, Codex's
/// call_id. `ingest` matches transcript calls to proxy rows by it.
pub const CLIENT_CALL_ID_KEYS: &[&str] = &["claudecode/toolUseId", "callId"];

fn text_result(text: String, is_error: bool) -> Value {
    let mut r = json!({"content": [{"type": "text", "text": text}]});
    if is_error {
        r["isError"] = json!(true);
    }
    r
}

impl Proxy {
    pub(crate) async fn tools_call(
        &self,
        params: Value,
        caller: &Caller,
    ) -> Result<Value, RpcError> {
        let Some(name) = params.get("name").and_then(Value::as_str).map(String::from) else {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "tools/call needs a string 'name'",
            ));
        };
        let (params, ctx) = split_meta(params, caller);
        match name.as_str() {
            SEARCH_TOOLS => Ok(self.search_tools(params.get("arguments"), caller).await),
            CALL_TOOL => {
                let input = input_fields(&params);
                self.call_tool(params.get("arguments"), input, ctx, caller)
                    .await
            }
            _ if name.starts_with(meta_tools::SHADOWED_PREFIX) => {
                // `upstream__search_tools` is the upstream's `search_tools` (meta_tools' rule).
                let snap = self.upstream.catalog().await;
                let real = meta_tools::upstream_name(&snap.catalog, &name).to_string();
                let mut params = params;
                params["name"] = json!(real);
                self.forward_call(&real, params, ctx, "direct", caller)
                    .await
            }
            _ => {
                self.forward_call(&name, params, ctx, "direct", caller)
                    .await
            }
        }
    }

    async fn call_tool(
        &self,
        args: Option<&Value>,
        input: serde_json::Map<String, Value>,
        ctx: CallContext,
        caller: &Caller,
    ) -> Result<Value, RpcError> {
        let args = match meta_tools::parse_arguments(args) {
            Ok(a) => a,
            Err(e) => return Ok(text_result(e, true)),
        };
        let Some(name) = args.get("name").and_then(Value::as_str) else {
            return Ok(text_result(
                "call_tool needs 'name' (a tool name; find one with search_tools) and \
                 'arguments' (an object)"
                    .into(),
                true,
            ));
        };
        let arguments = match meta_tools::parse_arguments(args.get("arguments")) {
            Ok(a) => a,
            Err(e) => return Ok(text_result(e, true)),
        };
        let snap = self.upstream.catalog().await;
        let real = match meta_tools::resolve(&snap.catalog, name) {
            Ok(Resolved::Tool(real)) => real,
            Ok(Resolved::Search) => return Ok(self.search_tools(Some(&arguments), caller).await),
            Ok(Resolved::CallTool) => {
                return Ok(text_result(
                    "call_tool: 'name' must be the tool to run, not call_tool itself".into(),
                    true,
                ));
            }
            Err(unknown) => return Ok(text_result(unknown.message(), true)),
        };
        let mut params = json!({"name": real, "arguments": arguments});
        if let Some(p) = params.as_object_mut() {
            p.extend(input);
        }
        self.forward_call(&real, params, ctx, "call_tool", caller)
            .await
    }

    async fn forward_call(
        &self,
        tool: &str,
        params: Value,
        ctx: CallContext,
        via: &str,
        caller: &Caller,
    ) -> Result<Value, RpcError> {
        let client_call_id = ctx.meta.as_ref().and_then(|m| {
            CLIENT_CALL_ID_KEYS
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_str))
                .map(String::from)
        });
        let start = Instant::now();
        let result = self.upstream.request("tools/call", params, &ctx).await;
        let ms = i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX);
        if asks_input(&result) {
            // Not a finished call: the round that completes it (the client's retry) is logged.
            return Ok(result?);
        }
        let status = match &result {
            Ok(r) if r.get("isError") == Some(&json!(true)) => Status::Error,
            Ok(_) => Status::Ok,
            Err(UpstreamError::Rpc { .. }) => Status::Error,
            Err(UpstreamError::Timeout(_)) => Status::Timeout,
            Err(_) => Status::Upstream,
        };
        if let Some(log) = &self.log {
            log.call(Call {
                ts: clock::fmt(clock::now()),
                session_id: self.session_for(caller, Instant::now()),
                tool: tool.to_string(),
                via: via.to_string(),
                status: Some(status),
                ms: Some(ms),
                client: caller.client.clone(),
                client_call_id,
                source_key: format!(
                    "proxy:{}:{}",
                    self.run_id,
                    self.seq.fetch_add(1, Ordering::Relaxed)
                ),
                ..Call::default()
            });
        }
        Ok(result?)
    }

    async fn search_tools(&self, args: Option<&Value>, caller: &Caller) -> Value {
        let query = match meta_tools::search_query(args) {
            Ok(q) => q.to_string(),
            Err(e) => return text_result(e, true),
        };
        let snap = self.upstream.catalog().await;
        if snap.source == CatalogSource::None && snap.catalog.is_empty() {
            let why = self.upstream.status().list_error.unwrap_or_else(|| {
                "the upstream MCP server is down or has not answered yet".into()
            });
            return text_result(
                format!("{why}: there are no tools to search right now"),
                true,
            );
        }
        let index = self.index_for(snap.version, &snap.catalog).await;
        let ws = self.working_set.borrow().clone();
        let listed: HashSet<String> = listed_names(&snap.catalog, &ws, &self.config)
            .into_iter()
            .collect();
        // Ranking is linear in the (bounded) query but still CPU work: off the one worker, for
        // the reason `index_for` gives.
        let search = move || index.search(&query, &listed);
        let reply = match tokio::task::spawn_blocking(search).await {
            Ok(reply) => reply,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        let text = reply.json.to_string();
        if let Some(log) = &self.log {
            log.search(SearchRecord {
                ts: clock::fmt(clock::now()),
                session_id: Some(self.session_for(caller, Instant::now())),
                client: caller.client.clone(),
                mode: reply.mode.to_string(),
                result_count: i64::try_from(reply.result_count).unwrap_or(i64::MAX),
                reply_bytes: i64::try_from(text.len()).unwrap_or(i64::MAX),
            });
        }
        text_result(text, false)
    }

    /// The search index for a catalog version, built once and shared.
    async fn index_for(
        &self,
        version: u64,
        catalog: &Arc<crate::catalog::Catalog>,
    ) -> Arc<SearchIndex> {
        let mut slot = self.index.lock().await;
        if let Some((v, idx)) = slot.as_ref()
            && *v == version
        {
            return idx.clone();
        }
        warn_shadowed(catalog);
        let options = SearchOptions {
            aliases: self.config.search_aliases.clone(),
            backend_hints: self.config.backend_hints.clone(),
        };
        // Shares the catalog the snapshot holds instead of copying every tool object into the
        // index (a second copy of a 1,000-tool catalog is ~1.4 MB of heap for the life of it).
        let catalog = meta_tools::exposed_catalog(catalog);
        let build = move || Arc::new(SearchIndex::build_shared(catalog, &options));
        // A build takes milliseconds (about 50 at 10,000 tools) and `mws serve` runs one worker,
        // so it runs on a blocking thread while calls go on. Not `block_in_place`: that retires
        // the worker thread, and a stdio upstream spawned from it would get its parent-death
        // signal when that thread ends (`upstream/stdio.rs`).
        let idx = match tokio::task::spawn_blocking(build).await {
            Ok(idx) => idx,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        *slot = Some((version, idx.clone()));
        idx
    }

    /// The session a call is logged under: the transport's, else the client's name plus a new id
    /// after `STATELESS_SESSION_GAP` of silence.
    pub(crate) fn session_for(&self, caller: &Caller, now: Instant) -> String {
        if let Some(s) = &caller.session {
            return s.clone();
        }
        let client = caller.client.as_deref().unwrap_or("unknown");
        let mut map = self.stateless.lock().unwrap_or_else(|e| e.into_inner());
        let entry = map
            .entry(client.to_string())
            .or_insert_with(|| (new_stateless_id(client, &self.run_id), now));
        if now.duration_since(entry.1) > STATELESS_SESSION_GAP {
            entry.0 = new_stateless_id(client, &self.run_id);
        }
        entry.1 = now;
        entry.0.clone()
    }
}

/// Says once per process, on stderr, under which name clients see each upstream tool named like
/// a meta-tool (`meta_tools`' rule).
pub(crate) fn warn_shadowed(catalog: &crate::catalog::Catalog) {
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
fn asks_input(result: &Result<Value, UpstreamError>) -> bool {
    matches!(result, Ok(r) if r.get("resultType").and_then(Value::as_str) == Some("input_required"))
}

/// A multi-round call's `inputResponses` and `requestState`, which `call_tool` passes on with the
/// tool it names.
fn input_fields(params: &Value) -> serde_json::Map<String, Value> {
    ["inputResponses", "requestState"]
        .into_iter()
        .filter_map(|k| Some((k.to_string(), params.get(k)?.clone())))
        .collect()
}
