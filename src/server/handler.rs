//! Method dispatch shared by HTTP (both eras) and `--stdio`: `initialize`, `server/discover`,
//! `tools/list`, `tools/call` (meta-tools in `calls.rs`), and forwarding of every other method to
//! the upstream. Transports classify the era and validate headers first; this only sees a JSON-RPC
//! message and who sent it. Must not talk to the upstream except through `Upstream`.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Map, Value, json};
use tokio::sync::watch;

use crate::config::Config;
use crate::mcp::{self, Era, LEGACY_VERSIONS, SUPPORTED_VERSIONS, code};
use crate::search::SearchIndex;
use crate::server::bridge::{self, server_info};
use crate::server::instructions::{self, Facts};
use crate::server::listing::{listed_names, listed_tools};
use crate::server::working_set::WorkingSet;
use crate::store::LogSink;
use crate::upstream::{CallContext, CatalogSource, Upstream, UpstreamError};

/// Who sent a message, as the transport knows it.
#[derive(Debug, Clone)]
pub struct Caller {
    pub era: Era,
    /// Client name (`_meta` clientInfo, `initialize` clientInfo, else User-Agent).
    pub client: Option<String>,
    /// The proxy session (legacy `Mcp-Session-Id`, one `--stdio` connection); `None` for stateless
    /// clients, whose session is their name plus an idle gap (see `calls::STATELESS_SESSION_GAP`).
    pub session: Option<String>,
    /// A legacy session client's `sampling`/`elicitation`/`roots` capabilities, set only on a
    /// request whose input requests mws can relay to it (`input.rs`); told to the upstream.
    pub input: Option<Arc<Value>>,
}

/// A JSON-RPC error to send back.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }
}

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

/// The proxy's shared state: one per process, behind an `Arc`, used by every transport.
pub struct Proxy {
    pub(crate) upstream: Arc<dyn Upstream>,
    pub(crate) config: Arc<Config>,
    pub(crate) working_set: watch::Receiver<WorkingSet>,
    pub(crate) log: Option<LogSink>,
    /// The search index and the catalog version it was built for; held across a build, so one
    /// build serves every search waiting on it.
    pub(crate) index: tokio::sync::Mutex<Option<(u64, Arc<SearchIndex>)>>,
    pub(crate) listing: Mutex<Option<(u64, WorkingSet, Arc<Value>)>>,
    pub(crate) run_id: String,
    pub(crate) seq: AtomicU64,
    pub(crate) stateless: Mutex<HashMap<String, (String, Instant)>>,
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
        Arc::new(Proxy {
            upstream,
            config: Arc::new(config),
            working_set,
            log,
            index: tokio::sync::Mutex::new(None),
            listing: Mutex::new(None),
            run_id: format!("{start:x}-{:x}", std::process::id()),
            seq: AtomicU64::new(0),
            stateless: Mutex::new(HashMap::new()),
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
    pub async fn handle(&self, mut msg: Map<String, Value>, caller: &Caller) -> Option<Value> {
        let params = msg.remove("params").unwrap_or_else(|| json!({}));
        let id = msg.remove("id");
        let Some(method) = msg.get("method").and_then(Value::as_str) else {
            if msg.contains_key("result") || msg.contains_key("error") {
                return None;
            }
            let id = id.unwrap_or(Value::Null);
            return Some(mcp::error_response(
                &id,
                code::INVALID_REQUEST,
                "invalid request: no method",
                None,
            ));
        };
        let Some(id) = id else {
            // Notifications: nothing to answer. Cancellation cannot be mapped to the upstream's
            // request ids, and the call it names simply runs to its end.
            tracing::debug!("notification {method}");
            return None;
        };
        let result = self.dispatch(method, params, caller).await;
        Some(match result {
            Ok(r) => mcp::response(&id, bridge::for_client(method, r, caller.era)),
            Err(e) => mcp::error_response(&id, e.code, &e.message, e.data),
        })
    }

    async fn dispatch(
        &self,
        method: &str,
        params: Value,
        caller: &Caller,
    ) -> Result<Value, RpcError> {
        match (method, caller.era) {
            ("initialize", Era::Legacy) => Ok(self.initialize_result(&params).await),
            ("server/discover", _) => Ok(self.discover_result().await),
            ("ping" | "logging/setLevel", Era::Legacy) => Ok(json!({})),
            ("initialize" | "ping" | "logging/setLevel" | "subscriptions/listen", Era::Modern) => {
                Err(RpcError {
                    code: code::METHOD_NOT_FOUND,
                    message: "Method not found".into(),
                    data: Some(json!(method)),
                })
            }
            ("tools/list", _) => Ok(self.tools_list().await),
            ("tools/call", _) => self.tools_call(params, caller).await,
            _ => {
                let (params, ctx) = split_meta(params, caller);
                Ok(self.upstream.request(method, params, &ctx).await?)
            }
        }
    }

    /// The `tools/list` result: meta-tools plus the working set, cached per catalog version and
    /// working set so that repeated lists cost a clone.
    pub async fn tools_list(&self) -> Value {
        let snap = self.upstream.catalog().await;
        let ws = self.working_set.borrow().clone();
        {
            let cache = self.listing.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((v, w, r)) = cache.as_ref()
                && *v == snap.version
                && Arc::ptr_eq(w, &ws)
            {
                return (**r).clone();
            }
        }
        crate::server::calls::warn_shadowed(&snap.catalog);
        let result = json!({"tools": listed_tools(&snap.catalog, &ws, &self.config)});
        *self.listing.lock().unwrap_or_else(|e| e.into_inner()) =
            Some((snap.version, ws, Arc::new(result.clone())));
        result
    }

    pub async fn instructions(&self) -> String {
        let snap = self.upstream.catalog().await;
        let ws = self.working_set.borrow().clone();
        let status = self.upstream.status();
        let down: Vec<String> = status
            .servers
            .iter()
            .filter(|s| s.down())
            .map(|s| s.name.clone())
            .collect();
        instructions::instructions(&Facts {
            catalog: &snap.catalog,
            have_catalog: snap.source != CatalogSource::None || !snap.catalog.is_empty(),
            listed: listed_names(&snap.catalog, &ws, &self.config).len(),
            hints: &self.config.backend_hints,
            upstream_instructions: status.instructions.as_deref(),
            down: &down,
        })
    }

    fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        caps.insert("tools".into(), json!({"listChanged": true}));
        let subscribe = crate::server::subscriptions::relays(self);
        if let Some(Value::Object(up)) = self.upstream.status().capabilities {
            for key in ["resources", "prompts", "completions"] {
                if let Some(v) = up.get(key) {
                    // list_changed from the upstream is not relayed; resource updates are when
                    // mws can hear them (`subscriptions::relays`).
                    let mut v = v.clone();
                    if let Some(o) = v.as_object_mut() {
                        if !subscribe {
                            o.remove("subscribe");
                        }
                        o.remove("listChanged");
                    }
                    caps.insert(key.into(), v);
                }
            }
        }
        if crate::server::logs::relays(self) {
            caps.insert("logging".into(), json!({}));
        }
        Value::Object(caps)
    }

    async fn initialize_result(&self, params: &Value) -> Value {
        let requested = params
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        // The instructions wait for the upstream (bounded by listMs), whose capabilities ours
        // follow: ask them first.
        let instructions = self.instructions().await;
        json!({
            "protocolVersion": negotiate_legacy(requested),
            "capabilities": self.capabilities(),
            "serverInfo": server_info(),
            "instructions": instructions,
        })
    }

    async fn discover_result(&self) -> Value {
        let instructions = self.instructions().await;
        json!({
            "supportedVersions": SUPPORTED_VERSIONS,
            "capabilities": self.capabilities(),
            "instructions": instructions,
        })
    }
}

/// The version an `initialize` answer names: the client's when we speak it, else our newest legacy
/// one (initialize always selects legacy semantics: docs/protocol.md, Eras).
pub fn negotiate_legacy(requested: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LEGACY_VERSIONS[0])
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
