//! The one `Upstream` implementation for one server: a `Conn` over an HTTP or stdio wire, the
//! catalog cache, and the held tools it will not call (`approvals`), reviewed again when
//! `definitions.json` changes. Must not know about other servers (`fleet` merges them).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

mod refresh;

use crate::config::Config;
use crate::mcp::raw::Answer;
use crate::upstream::conn::Call;
use crate::upstream::{
    CallContext, CatalogSnapshot, LOGIN_NAME, NOTIFICATION_BUFFER, REMEMBERED_FILE, Upstream,
    UpstreamError, UpstreamStatus, cache, conn, http, stdio, target, wire,
};
use refresh::{Inner, spawn_refresh};

/// The one `Upstream` implementation: a `Conn` over an HTTP or stdio wire, plus the catalog cache.
pub(crate) struct Remote {
    inner: Arc<Inner>,
}

impl Remote {
    /// `server` is its name among `servers` (`None`: the single upstream); `mws login` knows it
    /// by that name (`LOGIN_NAME` for the single one), which the message that it needs one says.
    pub(crate) fn connect(config: &Config, server: Option<&str>) -> Arc<dyn Upstream> {
        let login = server.unwrap_or(LOGIN_NAME);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Value>();
        let notes = tokio::sync::broadcast::channel(NOTIFICATION_BUFFER).0;
        let relay = notes.clone();
        // Other notifications are relayed at once, so that a call's progress is out before its
        // result is handed back; list_changed goes to the refresh task.
        let on_note: wire::OnNotification = Arc::new(move |msg: &Value| {
            let method = msg.get("method").and_then(Value::as_str);
            if method == Some("notifications/tools/list_changed") {
                let _ = tx.send(msg.clone());
            } else {
                let _ = relay.send(msg.clone());
            }
        });
        let wire: Arc<dyn wire::Wire> = match &config.upstream {
            crate::config::Upstream::Http(h) => Arc::new(
                http::HttpWire::new(h.clone(), on_note)
                    .with_tokens(config.state_dir.clone(), login),
            ),
            crate::config::Upstream::Stdio(s) => {
                Arc::new(stdio::StdioWire::new(s.clone(), on_note))
            }
        };
        let t = &config.timeouts;
        let inner = Arc::new(Inner {
            conn: conn::Conn::new(wire, Some(config.state_dir.join(REMEMBERED_FILE))),
            cache: cache::Cache::open(
                config.catalog_path(),
                Duration::from_millis(t.catalog_ttl_ms),
                config.policy.hold_new_tools,
            ),
            refreshing: tokio::sync::Mutex::new(()),
            list_budget: Duration::from_millis(t.list_ms),
            first_start_budget: Duration::from_millis(t.first_start_ms.max(t.list_ms)),
            listed_once: Default::default(),
            call_budget: Duration::from_millis(t.call_ms),
            notes,
            target: target(config),
            server: server.map(String::from),
        });
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            let weak = Arc::downgrade(&inner);
            rt.spawn(async move {
                while let Some(msg) = rx.recv().await {
                    let Some(inner) = weak.upgrade() else { return };
                    inner.notification(&msg);
                }
            });
            let first = inner.clone();
            rt.spawn(async move { first.refresh(false).await });
            rt.spawn(watch_approvals(Arc::downgrade(&inner)));
        }
        Arc::new(Remote { inner })
    }
}

/// Reviews the served list again whenever `definitions.json` changes under it; ends with the
/// upstream.
async fn watch_approvals(inner: std::sync::Weak<Inner>) {
    loop {
        tokio::time::sleep(crate::upstream::approvals::APPROVALS_POLL).await;
        let Some(inner) = inner.upgrade() else { return };
        if inner.cache.approvals_changed() {
            inner.cache.review_again();
        }
    }
}

impl Remote {
    /// For a `tools/call`: the refusal of a held tool, else the `Mcp-Param-*` headers from the
    /// called tool's schema in the catalog.
    fn call_checks(
        &self,
        method: &str,
        params: &Value,
    ) -> Result<Vec<(String, String)>, UpstreamError> {
        if method != "tools/call" {
            return Ok(Vec::new());
        }
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Ok(Vec::new());
        };
        let Some(snap) = self.inner.cache.snapshot(Instant::now()) else {
            return Ok(Vec::new());
        };
        if let Some(h) = snap.catalog.held_tool(name) {
            return Err(UpstreamError::Held(h.clone()));
        }
        let Some(args) = params.get("arguments") else {
            return Ok(Vec::new());
        };
        Ok(
            match snap
                .catalog
                .with_param_headers(name)
                .and_then(|t| t.get("inputSchema"))
            {
                Some(schema) => crate::mcp::envelope::param_headers(schema, args),
                None => Vec::new(),
            },
        )
    }
}

#[async_trait::async_trait]
impl Upstream for Remote {
    async fn catalog(&self) -> CatalogSnapshot {
        let look = self.inner.cache.lookup(Instant::now());
        if let Some(snap) = look.snapshot {
            if look.refresh {
                spawn_refresh(Arc::downgrade(&self.inner));
            }
            return snap;
        }
        let budget = self.inner.list_budget;
        let _ = tokio::time::timeout(budget, self.inner.refresh(true)).await;
        self.inner
            .cache
            .snapshot(Instant::now())
            .unwrap_or_else(crate::upstream::empty_snapshot)
    }

    async fn call_tool(&self, params: Value, ctx: &CallContext) -> Result<Answer, UpstreamError> {
        let headers = self.call_checks("tools/call", &params)?;
        let call = Call {
            budget: self.inner.call_budget,
            reopen: false,
            param_headers: &headers,
        };
        self.inner.conn.call_tool(params, ctx, call).await
    }

    async fn request(
        &self,
        method: &str,
        params: Value,
        ctx: &CallContext,
    ) -> Result<Value, UpstreamError> {
        let reopen = method.ends_with("/list");
        let headers = self.call_checks(method, &params)?;
        let call = Call {
            budget: self.inner.call_budget,
            reopen,
            param_headers: &headers,
        };
        self.inner.conn.request(method, params, ctx, call).await
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), UpstreamError> {
        self.inner.conn.notify(method, params).await
    }

    fn status(&self) -> UpstreamStatus {
        self.inner.conn.status()
    }

    fn relays_logs(&self) -> bool {
        self.inner.conn.relays_logs()
    }

    fn shutdown(&self) {
        self.inner.conn.close();
    }

    async fn close(&self) {
        self.inner.conn.stop().await;
    }

    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.cache.subscribe()
    }

    fn notifications(&self) -> tokio::sync::broadcast::Receiver<Value> {
        self.inner.notes.subscribe()
    }

    async fn resource_subscription(&self, uri: &str, on: bool) -> Result<(), UpstreamError> {
        let budget = self.inner.call_budget;
        self.inner.conn.resource_subscription(uri, on, budget).await
    }
}
