//! Negotiation with a new peer: the `server/discover` probe with legacy fallback (the verdict
//! kept for the life of the process), the `initialize` handshake, and the notification stream
//! each era opens afterwards. Must not send requests on behalf of clients (`conn.rs` does).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::discover::{Probe, classify, lists_modern};
use super::{Conn, Negotiated, PROBE_TIMEOUT, client_info, down, rpc_result, timeout_err};
use crate::mcp::caps::{list_changes, other_list_changes, subscribes};
use crate::mcp::envelope::{envelope, with_meta};
use crate::mcp::{self, Era, LEGACY_VERSIONS, MODERN_VERSION, code};
use crate::upstream::UpstreamError;
use crate::upstream::wire::Outgoing;

impl Conn {
    /// The negotiated state, negotiating first if the peer is new. Bounded by `budget`.
    pub async fn ensure(&self, budget: Duration) -> Result<Arc<Negotiated>, UpstreamError> {
        let work = async {
            let mut state = self.state.lock().await;
            let generation = self.wire.connect().await.map_err(down)?;
            if let Some(n) = state.as_ref().filter(|n| n.generation == generation) {
                return Ok(n.clone());
            }
            *state = None;
            let n = Arc::new(self.negotiate(generation, false).await?);
            *state = Some(n.clone());
            let mut s = self.status.lock().unwrap();
            s.era = Some(n.era);
            s.protocol_version = Some(n.version.clone());
            s.server_info = n.server_info.clone();
            s.capabilities = n.capabilities.clone();
            s.instructions = n.instructions.clone();
            s.reachable = true;
            s.last_error = None;
            s.needs_login = false;
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

    /// `retried`: this is the one renewed attempt after a refused `initialize`.
    async fn negotiate(
        &self,
        mut generation: u64,
        retried: bool,
    ) -> Result<Negotiated, UpstreamError> {
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
            // A modern server too slow to answer the probe in time (it was still starting, e.g. a
            // restarted child) read the probe first, so it locked the connection to 2026-07-28 and
            // turns `initialize` down; it is up now, so probe it again, once. Also when an earlier
            // attempt left a legacy verdict behind (its budget ran out between the probe and
            // `initialize`). A modern verdict kept from an earlier child does not prevent this.
            Err(UpstreamError::Rpc {
                code: code::UNSUPPORTED_VERSION,
                data,
                ..
            }) if !retried && lists_modern(data.as_ref()) => {
                *self.verdict.lock().unwrap() = Some(Era::Modern);
                return Box::pin(self.negotiate(generation, true)).await;
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

    /// Opens `subscriptions/listen` when the modern upstream says its tool, prompt or resource list
    /// can change, or our clients are subscribed to resources it can report on (re-opened when
    /// that set changes).
    pub(super) fn listen_modern(&self, n: &Negotiated) {
        let caps = n.capabilities.as_ref();
        let mut filter = Map::new();
        if list_changes(caps) {
            filter.insert("toolsListChanged".into(), json!(true));
        }
        for key in other_list_changes(caps) {
            filter.insert(key.into(), json!(true));
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
        let caps = n.capabilities.as_ref();
        if list_changes(caps) || subscribes(caps) || !other_list_changes(caps).is_empty() {
            self.wire.listen(None, &n.version);
        }
        self.resubscribe_legacy(&n).await;
        Ok(n)
    }
}
