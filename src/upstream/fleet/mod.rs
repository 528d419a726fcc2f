//! Several upstreams as one (`servers` in the config): one `Remote` per server, each with its own
//! negotiation, catalog cache (`stateDir/servers/<name>/`), back-off, timeouts and notifications;
//! their catalogs merged under `catalog::exposed` names, and each request routed to the server
//! that owns the tool, prompt or resource. Must not let one server's state slow or fail another's:
//! `catalog()` never waits for a server once the startup budget is spent, and calls go to one
//! server only.

mod members;
mod route;
mod status;
mod watch;

pub use members::{SERVERS_DIR, held_name};

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::Value;

use crate::catalog::exposed::name_budget;
use crate::config::{Config, servers};
use crate::mcp::raw::Answer;
use crate::upstream::remote::Remote;
use crate::upstream::stopped::Stopped;
use crate::upstream::{
    CallContext, CatalogSnapshot, NOTIFICATION_BUFFER, Upstream, UpstreamError, UpstreamStatus,
    target,
};
use members::{FleetInner, Member, Owners, named};

/// Connects to the configured upstream: the fleet of `servers`, or the one server `upstream`
/// names (HTTP or a stdio child). Returns at once: negotiation and the first list happen in the
/// background, and `catalog()` serves `catalog.json` meanwhile.
pub fn connect(config: &Config) -> Arc<dyn Upstream> {
    if config.servers.is_empty() {
        Remote::connect(config, None)
    } else {
        Fleet::connect(config)
    }
}

/// The fleet as the proxy sees it: an `Upstream`.
pub struct Fleet {
    pub(super) inner: Arc<FleetInner>,
}

/// The state dir of server `name`.
pub fn server_dir(config: &Config, name: &str) -> PathBuf {
    config.state_dir.join(SERVERS_DIR).join(name)
}

/// The config one server's `Remote` runs with: its upstream and its own state dir.
pub fn server_config(config: &Config, name: &str, upstream: crate::config::Upstream) -> Config {
    Config {
        upstream,
        servers: Vec::new(),
        state_dir: server_dir(config, name),
        ..config.clone()
    }
}

impl Fleet {
    /// Starts every server in `config.servers` (in the background; returns at once). A server
    /// whose config cannot be expanded is kept as a stopped member that serves its stored catalog
    /// and fails its calls with the reason.
    pub fn connect(config: &Config) -> Arc<dyn Upstream> {
        let env = |v: &str| std::env::var(v).ok();
        let mut members = Vec::with_capacity(config.servers.len());
        for s in &config.servers {
            let dir = server_dir(config, &s.name);
            if let Err(e) = std::os::unix::fs::DirBuilderExt::mode(
                std::fs::DirBuilder::new().recursive(true),
                0o700,
            )
            .create(&dir)
            {
                tracing::warn!(
                    "server \"{}\": cannot create {}: {e}",
                    s.name,
                    dir.display()
                );
            }
            let (up, start_error, target) = match servers::expand(s, &env) {
                Ok(upstream) => {
                    let sub = server_config(config, &s.name, upstream);
                    (Remote::connect(&sub, Some(&s.name)), None, target(&sub))
                }
                Err(e) => {
                    tracing::warn!("{e}; its stored catalog is served and its calls fail");
                    let stored = server_config(config, &s.name, s.upstream.clone());
                    let up = Stopped::serving(
                        stored.catalog_path(),
                        e.message.clone(),
                        config.policy.hold_new_tools,
                    );
                    (up, Some(e.message), target(&stored))
                }
            };
            members.push(Member {
                target,
                ..Member::new(&s.name, up, start_error)
            });
        }
        Fleet::assemble(
            members,
            name_budget(&config.server_name),
            Duration::from_millis(config.timeouts.list_ms),
            Some(config.catalog_path()),
        )
    }

    /// A fleet over `members` (watched in the background when there is a runtime).
    pub(super) fn assemble(
        members: Vec<Member>,
        budget: usize,
        list_budget: Duration,
        merged_file: Option<PathBuf>,
    ) -> Arc<dyn Upstream> {
        let inner = Arc::new(FleetInner {
            members,
            budget,
            started: Instant::now(),
            list_budget,
            merged: Mutex::new(None),
            next_version: AtomicU64::new(0),
            changes: tokio::sync::watch::channel(0).0,
            notes: tokio::sync::broadcast::channel(NOTIFICATION_BUFFER).0,
            owners: Mutex::new(Owners::default()),
            merged_file,
        });
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            for i in 0..inner.members.len() {
                rt.spawn(watch::watch_member(Arc::downgrade(&inner), i));
                rt.spawn(watch::relay_notes(Arc::downgrade(&inner), i));
            }
        }
        Arc::new(Fleet { inner })
    }
}

#[async_trait::async_trait]
impl Upstream for Fleet {
    async fn catalog(&self) -> CatalogSnapshot {
        let deadline = self.inner.started + self.inner.list_budget;
        // Only while starting: wait (together, at most `listMs` in all) for servers that have no
        // catalog yet. Afterwards a server without one is left out until it lists.
        if Instant::now() < deadline {
            join_all(self.inner.members.iter().map(|m| async move {
                let mut ready = m.ready.subscribe();
                let left = deadline.saturating_duration_since(Instant::now());
                let _ = tokio::time::timeout(left, ready.wait_for(|r| *r)).await;
            }))
            .await;
        }
        self.inner.merge_now().await.0
    }

    async fn request(
        &self,
        method: &str,
        params: Value,
        ctx: &CallContext,
    ) -> Result<Value, UpstreamError> {
        route::request(&self.inner, method, params, ctx).await
    }

    async fn call_tool(&self, params: Value, ctx: &CallContext) -> Result<Answer, UpstreamError> {
        route::call_tool(&self.inner, params, ctx).await
    }

    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), UpstreamError> {
        // A cancellation names a request id only one server knows; the others ignore it.
        for m in &self.inner.members {
            let _ = m.up.notify(method, params.clone()).await;
        }
        Ok(())
    }

    fn relays_logs(&self) -> bool {
        self.inner.members.iter().any(|m| m.up.relays_logs())
    }

    fn status(&self) -> UpstreamStatus {
        status::status(&self.inner)
    }

    fn shutdown(&self) {
        for m in &self.inner.members {
            m.up.shutdown();
        }
    }

    async fn close(&self) {
        join_all(self.inner.members.iter().map(|m| m.up.close())).await;
    }

    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    fn notifications(&self) -> tokio::sync::broadcast::Receiver<Value> {
        self.inner.notes.subscribe()
    }

    async fn resource_subscription(&self, uri: &str, on: bool) -> Result<(), UpstreamError> {
        let i = route::resource_owner(&self.inner, uri).await?;
        let m = &self.inner.members[i];
        m.up.resource_subscription(uri, on)
            .await
            .map_err(|e| named(&m.name, e))
    }
}

#[cfg(test)]
mod tests;
