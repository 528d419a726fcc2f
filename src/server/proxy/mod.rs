//! The proxy: its shared state and every method a transport reaches through `Proxy::handle`, for
//! HTTP (both eras) and `--stdio` alike: `initialize`, `server/discover`, `tools/list`,
//! `tools/call` (the meta-tools, forwarding, and the call and search log, off the request path
//! through `LogSink`, with the client's own call id and a session), and forwarding of every other
//! method. Transports classify the era and validate headers first, and `answer/` picks how the
//! answer travels; this only sees a JSON-RPC message and who sent it. Must not talk to the
//! upstream except through `Upstream`, and must never log arguments, results or query text.
//!
//! `Proxy` and its dispatch live here; its other methods each in the file of their step:
//! `forward.rs` (`tools/call`: a meta-tool answered, any other tool forwarded),
//! `call_meta.rs` (`call_tool`, `call_read_only_tool`), `search.rs` (`search_tools`),
//! `results_call.rs` (big results shaped and paged), `run_script.rs` (code mode),
//! `session_listing.rs` (`tools/list`: a project's fresh listing, a session's). What they use,
//! none of which knows `Proxy`:
//! `calls.rs` (a request's `_meta`, stateless sessions), `meta_tools.rs`, `tools_list.rs`,
//! `held_listing.rs`, `guard_call.rs`, `search_index.rs`, `embedding.rs`, `bridge.rs` and `instructions.rs`.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio::sync::watch;

use crate::config::Config;
use crate::listed;
use crate::mcp::raw::Answer;
use crate::mcp::{self, Caller, Era, RpcError, SUPPORTED_VERSIONS, code};
use crate::results::Results;
use crate::server::proxy::bridge::server_info;
use crate::server::proxy::calls::{StatelessSessions, split_meta};
use crate::server::proxy::embedding::SemanticState;
use crate::server::proxy::forward::Outcome;
use crate::server::proxy::guard_call::Guard;
use crate::server::proxy::held_listing::HeldListings;
use crate::server::proxy::instructions::Facts;
use crate::server::proxy::search_index::IndexCache;
use crate::server::proxy::session_listing::Built;
use crate::server::relay::sessions::negotiate_legacy;
use crate::server::relay::{logs, subscriptions};
use crate::server::working_set::WorkingSet;
use crate::store::LogSink;
use crate::upstream::{CatalogSource, Upstream, UpstreamError};

pub mod bridge;
mod call_meta;
pub(super) mod calls;
pub mod embedding;
mod forward;
pub mod guard_call;
pub mod held_listing;
pub mod instructions;
pub mod meta_tools;
mod results_call;
mod run_script;
pub mod search;
mod search_index;
mod session_listing;
pub mod tools_list;

impl From<UpstreamError> for RpcError {
    fn from(e: UpstreamError) -> RpcError {
        match e {
            UpstreamError::Rpc {
                code,
                message,
                data,
            } => RpcError {
                code,
                message,
                data,
            },
            other => RpcError::new(code::INTERNAL_ERROR, other.to_string()),
        }
    }
}

/// A response as `Proxy::handle_line` gives it: a message, or one already written as a line's
/// bytes (no newline).
#[derive(Debug)]
pub enum Reply {
    Msg(Value),
    Line(Vec<u8>),
}

impl From<Value> for Reply {
    fn from(msg: Value) -> Reply {
        Reply::Msg(msg)
    }
}

/// The proxy's shared state: one per process, behind an `Arc`, used by every transport.
pub struct Proxy {
    pub(crate) upstream: Arc<dyn Upstream>,
    pub(crate) config: Arc<Config>,
    pub(crate) working_set: watch::Receiver<WorkingSet>,
    pub(crate) log: Option<LogSink>,
    pub(crate) index: IndexCache,
    pub(crate) semantic: SemanticState,
    /// The fresh listing per project (`None`: unknown), with the catalog version and working
    /// sets it was built from.
    pub(crate) listing: Mutex<HashMap<Option<Arc<str>>, Built>>,
    pub(crate) held: HeldListings,
    pub(crate) run_id: String,
    pub(crate) seq: AtomicU64,
    pub(crate) stateless: StatelessSessions,
    pub(crate) guard: Guard,
    pub(crate) results: Arc<Results>,
    /// Code mode's scripts running at once (`run_script::MAX_RUNNING_SCRIPTS`).
    pub(crate) scripts: Arc<tokio::sync::Semaphore>,
    /// This proxy, for a script's thread to make its tool calls on (`run_script.rs`).
    pub(crate) me: std::sync::Weak<Proxy>,
}

impl Proxy {
    /// `log` is `None` only in tests that do not look at the database.
    pub fn new(
        upstream: Arc<dyn Upstream>,
        config: Config,
        working_set: watch::Receiver<WorkingSet>,
        log: Option<LogSink>,
    ) -> Arc<Proxy> {
        let start = crate::clock::now().unix_timestamp_nanos() / 1_000_000;
        let guard = Guard::new(&config);
        let run_id = format!("{start:x}-{:x}", std::process::id());
        let results = Arc::new(Results::new(&config.results));
        Arc::new_cyclic(|me| Proxy {
            upstream,
            config: Arc::new(config),
            working_set,
            log,
            index: IndexCache::default(),
            semantic: SemanticState::default(),
            listing: Mutex::new(HashMap::new()),
            held: HeldListings::default(),
            run_id,
            seq: AtomicU64::new(0),
            stateless: StatelessSessions::default(),
            guard,
            results,
            scripts: Arc::new(tokio::sync::Semaphore::new(run_script::MAX_RUNNING_SCRIPTS)),
            me: me.clone(),
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Fires when the working set changes (transports turn it into `list_changed`).
    pub fn working_set_changes(&self) -> watch::Receiver<WorkingSet> {
        self.working_set.clone()
    }

    pub fn upstream(&self) -> &Arc<dyn Upstream> {
        &self.upstream
    }

    /// Handles one JSON-RPC message (an object). Returns the response for a request, `None` for a
    /// notification or a response the client posted. Takes the message, so a call's arguments
    /// move on upstream instead of being copied.
    pub async fn handle(&self, msg: Map<String, Value>, caller: &Caller) -> Option<Value> {
        self.respond::<Value>(msg, caller).await
    }

    /// `handle` for a transport that writes lines (`--stdio`): a forwarded call's result that the
    /// upstream's wire kept as sent is written as it came (`mcp::raw`), never read into a tree.
    pub async fn handle_line(&self, msg: Map<String, Value>, caller: &Caller) -> Option<Reply> {
        self.respond::<Answer>(msg, caller).await
    }

    /// `handle`, a forwarded call's result as `A` takes it.
    async fn respond<A: Outcome>(
        &self,
        mut msg: Map<String, Value>,
        caller: &Caller,
    ) -> Option<A::Reply> {
        let params = msg.remove("params").unwrap_or_else(|| json!({}));
        let id = msg.remove("id");
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            if msg.contains_key("result") || msg.contains_key("error") {
                return None;
            }
            let id = id.unwrap_or(Value::Null);
            let error = mcp::error_response(
                &id,
                code::INVALID_REQUEST,
                "invalid request: no method",
                None,
            );
            return Some(error.into());
        };
        let Some(id) = id else {
            // Notifications: nothing to answer. Cancellation cannot be mapped to the upstream's
            // request ids, and the call it names simply runs to its end.
            tracing::debug!("notification {method}");
            return None;
        };
        let result = match method {
            "tools/call" => self.tools_call::<A>(params, caller).await,
            _ => self.dispatch(method, params, caller).await.map(A::tree),
        };
        Some(match result {
            Ok(r) => A::reply(&id, method, r, caller.era),
            Err(e) => mcp::error_response(&id, e.code, &e.message, e.data).into(),
        })
    }

    async fn dispatch(
        &self,
        method: &str,
        params: Value,
        caller: &Caller,
    ) -> Result<Value, RpcError> {
        match (method, caller.era) {
            ("initialize", Era::Legacy) => Ok(self.initialize_result(&params, caller).await),
            ("server/discover", _) => {
                self.discovered(caller);
                Ok(self.discover_result(caller).await)
            }
            ("ping" | "logging/setLevel", Era::Legacy) => Ok(json!({})),
            ("initialize" | "ping" | "logging/setLevel" | "subscriptions/listen", Era::Modern) => {
                Err(RpcError {
                    code: code::METHOD_NOT_FOUND,
                    message: "Method not found".into(),
                    data: Some(json!(method)),
                })
            }
            ("tools/list", _) => Ok(self.tools_list(caller).await),
            _ => {
                let (params, ctx) = split_meta(params, caller);
                Ok(self.upstream.request(method, params, &ctx).await?)
            }
        }
    }

    /// The server instructions for a session of `project` (they count and name what its
    /// listing holds).
    pub async fn instructions(&self, project: Option<&str>) -> String {
        let snap = self.upstream.catalog().await;
        let ws = self.working_set_for(project);
        let status = self.upstream.status();
        let down: Vec<String> = status
            .servers
            .iter()
            .filter(|s| s.down())
            .map(|s| match s.status.needs_login {
                true => format!(
                    "{} (it needs a login: ask the user to run `mws login {}`)",
                    s.name, s.name
                ),
                false => s.name.clone(),
            })
            .collect();
        let chosen = crate::server::proxy::tools_list::choose(&snap.catalog, &ws, &self.config);
        instructions::instructions(&Facts {
            catalog: &listed::searchable_view(&snap.catalog, &self.config),
            have_catalog: snap.source != CatalogSource::None || !snap.catalog.is_empty(),
            listed: chosen.names.len(),
            mode: &chosen.mode,
            hints: &self.config.backend_hints,
            upstream_instructions: status.instructions.as_deref(),
            down: &down,
            code_mode: self.config.code_mode.enabled,
        })
    }

    fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        caps.insert("tools".into(), json!({"listChanged": true}));
        let subscribe = subscriptions::relays(self.upstream.as_ref());
        if let Some(Value::Object(up)) = self.upstream.status().capabilities {
            for key in ["resources", "prompts", "completions"] {
                if let Some(v) = up.get(key) {
                    // Prompt and resource list changes are passed on (`subscriptions::lists`);
                    // resource updates when mws can hear them (`subscriptions::relays`).
                    let mut v = v.clone();
                    if let Some(o) = v.as_object_mut() {
                        if !subscribe {
                            o.remove("subscribe");
                        }
                        if key == "completions" {
                            o.remove("listChanged");
                        }
                    }
                    caps.insert(key.into(), v);
                }
            }
        }
        if logs::relays(self.upstream.as_ref()) {
            caps.insert("logging".into(), json!({}));
        }
        Value::Object(caps)
    }

    async fn initialize_result(&self, params: &Value, caller: &Caller) -> Value {
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        // The instructions wait for the upstream (bounded by listMs), whose capabilities ours
        // follow: ask them first.
        let instructions = self.instructions(caller.project.as_deref()).await;
        json!({
            "protocolVersion": negotiate_legacy(requested),
            "capabilities": self.capabilities(),
            "serverInfo": server_info(),
            "instructions": instructions,
        })
    }

    async fn discover_result(&self, caller: &Caller) -> Value {
        let instructions = self.instructions(caller.project.as_deref()).await;
        json!({
            "supportedVersions": SUPPORTED_VERSIONS,
            "capabilities": self.capabilities(),
            "instructions": instructions,
        })
    }
}
