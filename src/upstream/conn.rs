//! Negotiation and requests over a `Wire`: the `server/discover` probe with legacy fallback (the
//! verdict kept for the life of the process), the `initialize` handshake, the per-request `_meta`
//! envelope for modern upstreams, and what an expired session or a dead peer means for a request.
//! Must not know about the catalog cache or downstream clients beyond `CallContext`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::probe::{Probe, classify, list_changes, lists_modern, subscribes};
use super::remembered;
use super::wire::{Outgoing, Wire, WireError};
use super::{CallContext, UpstreamError, UpstreamStatus};
use crate::mcp::envelope::{envelope, mcp_name, with_meta};
use crate::mcp::{self, Era, LEGACY_VERSIONS, MODERN_VERSION, code};

/// Our name upstream; a modern request adds `/<client>` when the caller is known.
pub const CLIENT_NAME: &str = "mcp-working-set";
/// The longest the `server/discover` probe may take before a stdio peer counts as legacy. Raising
/// it is kinder to slow-starting modern children; lowering it starts legacy ones sooner.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// What negotiation found out; renewed when the peer is new (child restarted, session expired).
#[derive(Debug, Clone)]
pub struct Negotiated {
    pub era: Era,
    pub version: String,
    pub server_info: Option<Value>,
    pub capabilities: Option<Value>,
    pub instructions: Option<String>,
    pub(super) generation: u64,
}

pub struct Conn {
    wire: Arc<dyn Wire>,
    /// Held while negotiating, so one negotiation serves every waiting request.
    state: tokio::sync::Mutex<Option<Arc<Negotiated>>>,
    /// The discover verdict, kept across sessions and restarts.
    verdict: Mutex<Option<Era>>,
    status: Mutex<UpstreamStatus>,
    next_id: AtomicU64,
    /// Where the upstream's identity is remembered across restarts, and what was last written.
    remembered: Option<(PathBuf, Mutex<String>)>,
    /// The log level the legacy session was last told (`conn_logs.rs`).
    sent_level: logs::SentLevel,
    /// Resource URIs our clients are subscribed to, with how many subscribe to each
    /// (`conn_subs.rs`).
    resource_subs: Mutex<std::collections::BTreeMap<String, usize>>,
}

#[path = "conn_logs.rs"]
mod logs;
#[path = "conn_subs.rs"]
mod subs;

fn client_info(client: Option<&str>) -> Value {
    let name = match client {
        Some(c) => format!("{CLIENT_NAME}/{c}"),
        None => CLIENT_NAME.to_string(),
    };
    json!({ "name": name, "version": env!("CARGO_PKG_VERSION") })
}

fn timeout_err(d: Duration) -> UpstreamError {
    UpstreamError::Timeout(d)
}

impl Conn {
    /// `remember`: the file that keeps the upstream's identity; the status starts from it.
    pub fn new(wire: Arc<dyn Wire>, remember: Option<PathBuf>) -> Conn {
        let known = remember.as_deref().and_then(remembered::load);
        let written = known.as_ref().map(remembered::render).unwrap_or_default();
        Conn {
            wire,
            state: tokio::sync::Mutex::new(None),
            verdict: Mutex::new(None),
            status: Mutex::new(known.unwrap_or_default()),
            next_id: AtomicU64::new(1),
            remembered: remember.map(|p| (p, Mutex::new(written))),
            sent_level: Default::default(),
            resource_subs: Default::default(),
        }
    }

    fn remember(&self, s: &UpstreamStatus) {
        let Some((path, written)) = &self.remembered else {
            return;
        };
        let text = remembered::render(s);
        let mut last = written.lock().unwrap();
        if *last != text {
            remembered::store(path, &text);
            *last = text;
        }
    }

    pub fn status(&self) -> UpstreamStatus {
        self.status.lock().unwrap().clone()
    }

    pub fn note_error(&self, e: &UpstreamError) {
        let mut s = self.status.lock().unwrap();
        if !matches!(e, UpstreamError::Rpc { .. }) {
            s.reachable = false;
        }
        s.last_error = Some(e.to_string());
    }

    fn note_ok(&self) {
        let mut s = self.status.lock().unwrap();
        s.reachable = true;
        s.last_error = None;
    }

    fn id(&self) -> Value {
        json!(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// The negotiated state, negotiating first if the peer is new. Bounded by `budget`.
    pub async fn ensure(&self, budget: Duration) -> Result<Arc<Negotiated>, UpstreamError> {
        let work = async {
            let mut state = self.state.lock().await;
            let generation = self.wire.connect().await.map_err(down)?;
            if let Some(n) = state.as_ref().filter(|n| n.generation == generation) {
                return Ok(n.clone());
            }
            *state = None;
            let n = Arc::new(self.negotiate(generation).await?);
            *state = Some(n.clone());
            let mut s = self.status.lock().unwrap();
            s.era = Some(n.era);
            s.protocol_version = Some(n.version.clone());
            s.server_info = n.server_info.clone();
            s.capabilities = n.capabilities.clone();
            s.instructions = n.instructions.clone();
            s.reachable = true;
            s.last_error = None;
            self.remember(&s);
            Ok(n)
        };
        let r = tokio::time::timeout(budget, work)
            .await
            .unwrap_or(Err(timeout_err(budget)));
        if let Err(e) = &r {
            self.note_error(e);
        }
        r
    }

    async fn negotiate(&self, mut generation: u64) -> Result<Negotiated, UpstreamError> {
        let cached = *self.verdict.lock().unwrap();
        if cached != Some(Era::Legacy) {
            match self.probe(generation).await? {
                Probe::Modern(n) => {
                    *self.verdict.lock().unwrap() = Some(Era::Modern);
                    self.listen_modern(&n);
                    self.wire.healthy();
                    return Ok(*n);
                }
                Probe::Legacy => {}
                Probe::LegacyRespawn => {
                    self.wire.reset(true).await;
                    generation = self.wire.connect().await.map_err(down)?;
                }
            }
            *self.verdict.lock().unwrap() = Some(Era::Legacy);
        }
        let n = match self.initialize(generation).await {
            // A modern server too slow to answer the probe in time (it was still starting) turns
            // `initialize` down; it is up now, so ask it again. Also when an earlier attempt left a
            // legacy verdict behind (its budget ran out between the probe and `initialize`).
            Err(UpstreamError::Rpc {
                code: code::UNSUPPORTED_VERSION,
                data,
                ..
            }) if cached != Some(Era::Modern) && lists_modern(data.as_ref()) => {
                *self.verdict.lock().unwrap() = Some(Era::Modern);
                return Box::pin(self.negotiate(generation)).await;
            }
            r => r?,
        };
        self.wire.healthy();
        Ok(n)
    }

    async fn probe(&self, generation: u64) -> Result<Probe, UpstreamError> {
        let env = envelope(MODERN_VERSION, client_info(None), json!({}));
        let msg = mcp::request(
            &self.id(),
            "server/discover",
            with_meta(json!({}), None, env),
        );
        let out = Outgoing {
            msg: &msg,
            method: "server/discover",
            name: None,
            version: Some(MODERN_VERSION),
            modern: true,
            params: &[],
        };
        let lenient = self.wire.probe_failure_means_legacy();
        let outcome = match tokio::time::timeout(PROBE_TIMEOUT, self.wire.request(out)).await {
            Err(_) => Err(None),
            Ok(r) => r.map_err(Some),
        };
        classify(outcome, lenient, generation)
    }

    /// Opens `subscriptions/listen` when the modern upstream says its tool list can change, or
    /// our clients are subscribed to resources it can report on (re-opened when that set changes).
    fn listen_modern(&self, n: &Negotiated) {
        let caps = n.capabilities.as_ref();
        let mut filter = Map::new();
        if list_changes(caps) {
            filter.insert("toolsListChanged".into(), json!(true));
        }
        let uris = self.subscribed_uris();
        if subscribes(caps) && !uris.is_empty() {
            filter.insert("resourceSubscriptions".into(), json!(uris));
        }
        if filter.is_empty() {
            return;
        }
        let env = envelope(&n.version, client_info(None), json!({}));
        let params = with_meta(json!({ "notifications": filter }), None, env);
        self.wire.listen(
            Some(mcp::request(&self.id(), "subscriptions/listen", params)),
            &n.version,
        );
    }

    async fn initialize(&self, generation: u64) -> Result<Negotiated, UpstreamError> {
        let params = json!({
            "protocolVersion": LEGACY_VERSIONS[0],
            "capabilities": {},
            "clientInfo": client_info(None),
        });
        let msg = mcp::request(&self.id(), "initialize", params);
        let out = Outgoing {
            msg: &msg,
            method: "initialize",
            name: None,
            version: None,
            modern: false,
            params: &[],
        };
        let (_, resp) = self.wire.request(out).await.map_err(down)?;
        let result = rpc_result(resp)?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or(LEGACY_VERSIONS[LEGACY_VERSIONS.len() - 1])
            .to_string();
        let note = mcp::notification("notifications/initialized", None);
        let out = Outgoing {
            msg: &note,
            method: "notifications/initialized",
            name: None,
            version: Some(&version),
            modern: false,
            params: &[],
        };
        self.wire.notify(out).await.map_err(down)?;
        let n = Negotiated {
            era: Era::Legacy,
            capabilities: result.get("capabilities").cloned(),
            server_info: result.get("serverInfo").cloned(),
            instructions: result
                .get("instructions")
                .and_then(Value::as_str)
                .map(str::to_string),
            version,
            generation,
        };
        if list_changes(n.capabilities.as_ref()) || subscribes(n.capabilities.as_ref()) {
            self.wire.listen(None, &n.version);
        }
        self.resubscribe_legacy(&n).await;
        Ok(n)
    }

    /// Sends one request. `reopen` re-negotiates and sends again once if the legacy session had
    /// expired (for `tools/list`, never for calls, which may have side effects).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        ctx: &CallContext,
        budget: Duration,
        reopen: bool,
        param_headers: &[(String, String)],
    ) -> Result<Value, UpstreamError> {
        let r = tokio::time::timeout(
            budget,
            self.request_inner(method, params, ctx, budget, reopen, param_headers),
        )
        .await
        .unwrap_or(Err(timeout_err(budget)));
        match &r {
            Ok(_) => self.note_ok(),
            Err(e) => self.note_error(e),
        }
        r
    }

    async fn request_inner(
        &self,
        method: &str,
        params: Value,
        ctx: &CallContext,
        budget: Duration,
        reopen: bool,
        param_headers: &[(String, String)],
    ) -> Result<Value, UpstreamError> {
        let mut tries = if reopen { 2 } else { 1 };
        let mut params = Some(params);
        loop {
            tries -= 1;
            let n = self.ensure(budget).await?;
            // Only a request that may be sent again keeps a copy of its params.
            let p = match tries {
                0 => params.take().unwrap_or(Value::Null),
                _ => params.clone().unwrap_or(Value::Null),
            };
            let params = self.params(&n, p, ctx);
            let params = self.ask_for_logs(method, &n, params).await;
            let msg = mcp::request(&self.id(), method, params);
            let out = Outgoing {
                msg: &msg,
                method,
                name: mcp_name(method, &msg["params"]),
                version: Some(&n.version),
                modern: n.era == Era::Modern,
                params: param_headers,
            };
            let mut guard = CancelOnDrop {
                wire: (!self.wire.closing_cancels(out.modern)).then(|| self.wire.clone()),
                id: msg["id"].clone(),
                version: n.version.clone(),
            };
            let answer = self.wire.request(out).await;
            guard.wire = None;
            match answer {
                Ok((_, resp)) => return rpc_result(resp),
                Err(WireError::SessionExpired) => {
                    self.forget(&n).await;
                    if tries == 0 {
                        return Err(UpstreamError::SessionExpired);
                    }
                }
                Err(e) => {
                    if matches!(e, WireError::Down(_)) {
                        self.forget(&n).await;
                    }
                    return Err(down(e));
                }
            }
        }
    }

    /// Drops the negotiated state so the next request negotiates again.
    async fn forget(&self, n: &Negotiated) {
        let mut state = self.state.lock().await;
        if state.as_ref().is_some_and(|s| s.generation == n.generation) {
            *state = None;
            self.wire.reset(false).await;
        }
    }

    fn params(&self, n: &Negotiated, params: Value, ctx: &CallContext) -> Value {
        let env = match n.era {
            Era::Modern => envelope(
                &n.version,
                client_info(ctx.client.as_deref()),
                ctx.client_capabilities.clone().unwrap_or_else(|| json!({})),
            ),
            Era::Legacy => Map::new(),
        };
        if env.is_empty() && ctx.meta.is_none() {
            return params;
        }
        with_meta(params, ctx.meta.as_ref(), env)
    }

    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), UpstreamError> {
        let n = self.state.lock().await.clone();
        let Some(n) = n else {
            return Err(UpstreamError::Unavailable(
                "not connected to the upstream yet".into(),
            ));
        };
        let params = match (n.era, params) {
            (Era::Modern, p) => Some(with_meta(
                p.unwrap_or(json!({})),
                None,
                envelope(&n.version, client_info(None), json!({})),
            )),
            (Era::Legacy, p) => p,
        };
        let msg = mcp::notification(method, params);
        let out = Outgoing {
            msg: &msg,
            method,
            name: None,
            version: Some(&n.version),
            modern: n.era == Era::Modern,
            params: &[],
        };
        self.wire.notify(out).await.map_err(down)
    }
}

pub(super) fn rpc_result(mut resp: Value) -> Result<Value, UpstreamError> {
    if let Some(r) = resp.get_mut("result") {
        return Ok(r.take());
    }
    let e = resp.get("error").cloned().unwrap_or(Value::Null);
    Err(UpstreamError::Rpc {
        code: e
            .get("code")
            .and_then(Value::as_i64)
            .unwrap_or(code::INTERNAL_ERROR),
        message: e
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        data: e.get("data").cloned(),
    })
}

pub(super) fn down(e: WireError) -> UpstreamError {
    match e {
        WireError::SessionExpired => UpstreamError::SessionExpired,
        WireError::Protocol(m) => UpstreamError::Protocol(m),
        other => UpstreamError::Unavailable(other.to_string()),
    }
}

/// Tells the upstream that a request was abandoned (our caller timed out or went away) where
/// closing the connection does not already say so (stdio, legacy HTTP): `notifications/cancelled`.
struct CancelOnDrop {
    wire: Option<Arc<dyn Wire>>,
    id: Value,
    version: String,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(wire) = self.wire.take() else { return };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (id, version) = (self.id.take(), std::mem::take(&mut self.version));
        rt.spawn(async move {
            let params = json!({ "requestId": id, "reason": "the proxy's caller gave up" });
            let msg = mcp::notification("notifications/cancelled", Some(params));
            let out = Outgoing {
                msg: &msg,
                method: "notifications/cancelled",
                name: None,
                version: Some(&version),
                modern: false,
                params: &[],
            };
            let _ = wire.notify(out).await;
        });
    }
}
