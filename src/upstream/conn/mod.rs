//! Requests over a `Wire`: the per-request `_meta` envelope for modern upstreams, and what an
//! expired session or a dead peer means for a request. Negotiation (discover probe, `initialize`)
//! is in `handshake.rs`, log levels in `logs.rs`, resource subscriptions in `subs.rs`, what an
//! answer is read into in `reading.rs`.
//! Must not know about the catalog cache or downstream clients beyond `CallContext`.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::remembered;
use super::wire::{Outgoing, Wire, WireError};
use super::{CallContext, UpstreamError, UpstreamStatus};
use crate::mcp::envelope::{envelope, mcp_name, with_meta};
use crate::mcp::raw::Answer;
use crate::mcp::{self, Era};

/// Our name upstream; a modern request adds `/<client>` when the caller is known.
pub const CLIENT_NAME: &str = "mcp-working-set";
/// How long stopping waits for the `notifications/cancelled` of abandoned requests to be written
/// before the peer is ended (a stdio child's input closed). Raising it delays mws's exit when a
/// write hangs; lowering it risks a child never hearing that its request was cancelled.
pub const CANCEL_FLUSH: Duration = Duration::from_secs(1);
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
    /// The log level the legacy session was last told (`logs.rs`).
    sent_level: logs::SentLevel,
    /// Resource URIs our clients are subscribed to, with how many subscribe to each
    /// (`subs.rs`).
    resource_subs: Mutex<std::collections::BTreeMap<String, usize>>,
    /// Set once when mws stops: requests in flight end, later ones fail at once.
    closing: tokio::sync::watch::Sender<bool>,
    /// `notifications/cancelled` being sent (`CancelOnDrop`), awaited by `stop`.
    cancels: Arc<InFlight>,
}

/// A count of tasks in flight, and a wake-up when it drops to zero.
#[derive(Default)]
struct InFlight {
    count: std::sync::atomic::AtomicUsize,
    idle: tokio::sync::Notify,
}

impl InFlight {
    fn start(&self) {
        self.count.fetch_add(1, Ordering::SeqCst);
    }
    fn end(&self) {
        if self.count.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.idle.notify_waiters();
        }
    }
    /// Returns once nothing is in flight.
    async fn drained(&self) {
        loop {
            let idle = self.idle.notified();
            tokio::pin!(idle);
            idle.as_mut().enable();
            if self.count.load(Ordering::SeqCst) == 0 {
                return;
            }
            idle.await;
        }
    }
}

mod discover;
mod handshake;
mod logs;
mod reading;
mod subs;

use reading::{Kept, Reading, Tree, rpc_result};

/// How one request is sent (`Conn::request`, `Conn::call_tool`).
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    /// How long it may take, negotiation included.
    pub budget: Duration,
    /// Sent again once on a fresh session when the first one expired (lists).
    pub reopen: bool,
    /// `Mcp-Param-*` headers.
    pub param_headers: &'a [(String, String)],
}

fn client_info(client: Option<&str>) -> Value {
    let name = match client {
        Some(c) => format!("{CLIENT_NAME}/{c}"),
        None => CLIENT_NAME.to_string(),
    };
    json!({ "name": name, "version": env!("CARGO_PKG_VERSION") })
}

fn timeout_err(d: Duration) -> UpstreamError {
    UpstreamError::Timeout {
        after: d,
        server: None,
    }
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
            closing: tokio::sync::watch::Sender::new(false),
            cancels: Arc::default(),
        }
    }

    /// Ends every request in flight with `ShuttingDown`; dropping them sends
    /// `notifications/cancelled` where closing the connection does not say so (`CancelOnDrop`).
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// After `close`, once the replies are out: ends the peer (`Wire::stop`), after the
    /// cancellations of abandoned requests are written (at most `CANCEL_FLUSH`).
    pub async fn stop(&self) {
        self.close();
        let _ = tokio::time::timeout(CANCEL_FLUSH, self.cancels.drained()).await;
        self.wire.stop().await;
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

    /// `Upstream::relays_logs` (`logs::relays`), without copying the status.
    pub fn relays_logs(&self) -> bool {
        logs::relays(self.wire.as_ref(), &self.status.lock().unwrap())
    }

    pub fn note_error(&self, e: &UpstreamError) {
        let mut s = self.status.lock().unwrap();
        if !matches!(e, UpstreamError::Rpc { .. }) {
            s.reachable = false;
        }
        s.last_error = Some(e.to_string());
        s.needs_login = matches!(e, UpstreamError::NeedsLogin { .. });
    }

    /// Records (or, `None`, clears) what was wrong with the last `tools/list` answer.
    pub fn note_list_error(&self, why: Option<String>) {
        self.status.lock().unwrap().list_error = why;
    }

    fn note_ok(&self) {
        let mut s = self.status.lock().unwrap();
        s.reachable = true;
        s.last_error = None;
        s.needs_login = false;
    }

    fn id(&self) -> Value {
        json!(self.next_id.fetch_add(1, Ordering::Relaxed))
    }

    /// Sends one request and returns its `result`. `call.reopen` re-negotiates and sends again
    /// once if the legacy session had expired (for `tools/list`, never for calls, which may have
    /// side effects).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
        ctx: &CallContext,
        call: Call<'_>,
    ) -> Result<Value, UpstreamError> {
        let sent = async {
            rpc_result(
                self.request_inner::<Tree>(method, params, ctx, call)
                    .await?,
            )
        };
        self.settled(call.budget, sent).await
    }

    /// `request("tools/call", ..)` with the result as the wire gives it: kept as sent where it
    /// can (`Wire::request_result`).
    pub async fn call_tool(
        &self,
        params: Value,
        ctx: &CallContext,
        call: Call<'_>,
    ) -> Result<Answer, UpstreamError> {
        let sent = async {
            match self
                .request_inner::<Kept>("tools/call", params, ctx, call)
                .await?
            {
                Answer::Tree(resp) => rpc_result(resp).map(Answer::Tree),
                kept => Ok(kept),
            }
        };
        self.settled(call.budget, sent).await
    }

    /// `sent` within `budget` and cut short by closing, its outcome noted in the status.
    async fn settled<T>(
        &self,
        budget: Duration,
        sent: impl Future<Output = Result<T, UpstreamError>>,
    ) -> Result<T, UpstreamError> {
        let mut closing = self.closing.subscribe();
        let work = tokio::time::timeout(budget, sent);
        let r = tokio::select! {
            r = work => r.unwrap_or(Err(timeout_err(budget))),
            _ = closing.wait_for(|c| *c) => Err(UpstreamError::ShuttingDown),
        };
        match &r {
            Ok(_) => self.note_ok(),
            Err(e) => self.note_error(e),
        }
        r
    }

    /// Sends the request, negotiating first where needed, and gives the wire's answer as `R`
    /// reads it.
    async fn request_inner<R: Reading>(
        &self,
        method: &str,
        params: Value,
        ctx: &CallContext,
        call: Call<'_>,
    ) -> Result<R::Out, UpstreamError> {
        let Call {
            budget,
            reopen,
            param_headers,
        } = call;
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
                in_flight: self.cancels.clone(),
            };
            let answer = R::read(&*self.wire, out).await;
            guard.wire = None;
            match answer {
                Ok((_, answer)) => return Ok(answer),
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

pub(super) fn down(e: WireError) -> UpstreamError {
    match e {
        WireError::SessionExpired => UpstreamError::SessionExpired,
        WireError::Protocol(m) => UpstreamError::Protocol(m),
        WireError::NeedsLogin(why) => UpstreamError::NeedsLogin { server: None, why },
        other => UpstreamError::Unavailable(other.to_string()),
    }
}

/// Tells the upstream that a request was abandoned (our caller timed out or went away) where
/// closing the connection does not already say so (stdio, legacy HTTP): `notifications/cancelled`.
struct CancelOnDrop {
    wire: Option<Arc<dyn Wire>>,
    id: Value,
    version: String,
    /// Counts the cancellation until it is written, so that `Conn::stop` can wait for it.
    in_flight: Arc<InFlight>,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(wire) = self.wire.take() else { return };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (id, version) = (self.id.take(), std::mem::take(&mut self.version));
        let in_flight = self.in_flight.clone();
        in_flight.start();
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
            in_flight.end();
        });
    }
}
