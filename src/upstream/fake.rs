//! An in-memory `Upstream` for tests and benchmarks: serves a given catalog, answers `tools/call`
//! for its tools (`isError` for tools whose name contains `fail`; -32021 for tools whose name
//! contains `needs_sampling` unless the forwarded client capabilities declare `sampling`; two
//! `notifications/progress` first for tools whose name contains `progress`, when the request
//! carries a `progressToken`), records what it was sent, and can be switched to "down". Not used by
//! `mws serve`.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::catalog::Catalog;
use crate::mcp::{Era, code};
use crate::upstream::{
    CallContext, CatalogSnapshot, CatalogSource, Upstream, UpstreamError, UpstreamStatus,
};

/// One request the fake received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub params: Value,
    pub client: Option<String>,
    pub meta: Option<serde_json::Map<String, Value>>,
    pub client_capabilities: Option<Value>,
}

pub struct FakeUpstream {
    state: Mutex<(Arc<Catalog>, u64, bool)>,
    seen: Mutex<Vec<Seen>>,
    changes: watch::Sender<u64>,
    notes: tokio::sync::broadcast::Sender<Value>,
}

impl FakeUpstream {
    pub fn new(tools: Vec<Value>) -> Arc<FakeUpstream> {
        Arc::new(FakeUpstream {
            state: Mutex::new((Arc::new(Catalog::new(tools)), 1, true)),
            seen: Mutex::new(Vec::new()),
            changes: watch::channel(1).0,
            notes: tokio::sync::broadcast::channel(16).0,
        })
    }

    /// Replaces the catalog (a new version) and fires `changes`.
    pub fn set_tools(&self, tools: Vec<Value>) {
        let mut s = self.state.lock().unwrap();
        s.0 = Arc::new(Catalog::new(tools));
        s.1 += 1;
        self.changes.send_replace(s.1);
    }

    /// Down: no catalog at all, every request fails as unavailable.
    pub fn set_up(&self, up: bool) {
        self.state.lock().unwrap().2 = up;
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

#[async_trait::async_trait]
impl Upstream for FakeUpstream {
    async fn catalog(&self) -> CatalogSnapshot {
        let s = self.state.lock().unwrap();
        if !s.2 {
            return CatalogSnapshot {
                catalog: Arc::new(Catalog::default()),
                source: CatalogSource::None,
                version: 0,
            };
        }
        CatalogSnapshot {
            catalog: s.0.clone(),
            source: CatalogSource::Live,
            version: s.1,
        }
    }

    async fn request(
        &self,
        method: &str,
        params: Value,
        ctx: &CallContext,
    ) -> Result<Value, UpstreamError> {
        self.seen.lock().unwrap().push(Seen {
            method: method.into(),
            params: params.clone(),
            client: ctx.client.clone(),
            meta: ctx.meta.clone(),
            client_capabilities: ctx.client_capabilities.clone(),
        });
        let (catalog, up) = {
            let s = self.state.lock().unwrap();
            (s.0.clone(), s.2)
        };
        if !up {
            return Err(UpstreamError::Unavailable("connection refused".into()));
        }
        match method {
            "tools/call" => {
                let name = params.get("name").and_then(Value::as_str).unwrap_or("");
                if !catalog.contains(name) {
                    return Err(UpstreamError::Rpc {
                        code: code::INVALID_PARAMS,
                        message: format!("Unknown tool: {name}"),
                        data: None,
                    });
                }
                let declared = ctx.client_capabilities.as_ref();
                if name.contains("needs_sampling")
                    && declared.and_then(|c| c.get("sampling")).is_none()
                {
                    return Err(UpstreamError::Rpc {
                        code: code::MISSING_CAPABILITY,
                        message: "Missing required client capability".into(),
                        data: Some(json!({"requiredCapabilities": {"sampling": {}}})),
                    });
                }
                if name.contains("progress")
                    && let Some(token) = ctx.meta.as_ref().and_then(|m| m.get("progressToken"))
                {
                    for step in 1..=2 {
                        let _ = self.notes.send(crate::mcp::notification(
                            "notifications/progress",
                            Some(json!({"progressToken": token, "progress": step, "total": 2})),
                        ));
                    }
                }
                let args = params.get("arguments").cloned().unwrap_or(json!({}));
                let mut r = json!({"content": [{"type": "text", "text": format!("{name} ran with {args}")}]});
                if name.contains("fail") {
                    r["isError"] = json!(true);
                }
                Ok(r)
            }
            "resources/list" => Ok(json!({"resources": [{"uri": "mem://a", "name": "a"}]})),
            _ => Err(UpstreamError::Rpc {
                code: code::METHOD_NOT_FOUND,
                message: "Method not found".into(),
                data: None,
            }),
        }
    }

    async fn notify(&self, _: &str, _: Option<Value>) -> Result<(), UpstreamError> {
        Ok(())
    }

    fn status(&self) -> UpstreamStatus {
        let up = self.state.lock().unwrap().2;
        UpstreamStatus {
            era: Some(Era::Legacy),
            protocol_version: Some("2025-11-25".into()),
            server_info: Some(json!({"name": "fake", "version": "1"})),
            capabilities: Some(
                json!({"tools": {"listChanged": true}, "resources": {"subscribe": true}}),
            ),
            instructions: Some("Fake upstream for tests.".into()),
            reachable: up,
            last_error: (!up).then(|| "connection refused".into()),
            needs_login: false,
            list_error: None,
            servers: Vec::new(),
        }
    }

    fn changes(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    fn notifications(&self) -> tokio::sync::broadcast::Receiver<Value> {
        self.notes.subscribe()
    }
}
