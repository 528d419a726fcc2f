//! Several upstreams as one (`servers` in the config): one `Remote` per server, each with its own
//! negotiation, catalog cache (`stateDir/servers/<name>/`), back-off, timeouts and notifications;
//! their catalogs merged under `catalog::exposed` names, and each request routed to the server
//! that owns the tool, prompt or resource. Must not let one server's state slow or fail another's:
//! `catalog()` never waits for a server once the startup budget is spent, and calls go to one
//! server only.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::Value;

use super::fleet_route::{Owners, held_name, named};
pub(super) use super::stopped::Stopped;
use super::{
    CallContext, CatalogSnapshot, CatalogSource, NOTIFICATION_BUFFER, Remote, Upstream,
    UpstreamError, UpstreamStatus,
};
use crate::catalog::Catalog;
use crate::catalog::definitions::HeldTool;
use crate::catalog::exposed::{Naming, name_budget};
use crate::config::{Config, servers};

/// Where a server's own state lives under the state dir: `servers/<name>/`.
pub const SERVERS_DIR: &str = "servers";

/// One server behind the fleet.
pub(super) struct Member {
    pub name: String,
    pub up: Arc<dyn Upstream>,
    /// Why it was not started (an unset `${VAR}`, a refused URL), if so.
    pub start_error: Option<String>,
    /// Its URL or command line, credentials masked.
    pub target: String,
    /// True once it has a catalog to serve (stored or listed); `catalog()` then asks it without
    /// waiting.
    pub ready: tokio::sync::watch::Sender<bool>,
}

impl Member {
    pub(super) fn new(name: &str, up: Arc<dyn Upstream>, start_error: Option<String>) -> Member {
        Member {
            name: name.to_string(),
            up,
            start_error,
            target: String::new(),
            ready: tokio::sync::watch::channel(false).0,
        }
    }
}

pub(super) struct FleetInner {
    pub members: Vec<Member>,
    /// Longest exposed name (`name_budget` of the config's `serverName`).
    budget: usize,
    started: Instant,
    pub list_budget: Duration,
    merged: Mutex<Option<Merged>>,
    next_version: AtomicU64,
    changes: tokio::sync::watch::Sender<u64>,
    pub notes: tokio::sync::broadcast::Sender<Value>,
    pub owners: Mutex<Owners>,
    /// `stateDir/catalog.json`: the merged catalog, for the commands that read it offline
    /// (`mws search`, `ingest`, `promote`'s fallback). Written only when every server has one.
    merged_file: Option<PathBuf>,
}

#[derive(Clone)]
struct Merged {
    /// Each member's (version, source) the merge was made from (`None`: no catalog).
    key: Vec<Option<(u64, CatalogSource)>>,
    snap: CatalogSnapshot,
    naming: Arc<Naming>,
    /// Tools each member had in it.
    counts: Vec<usize>,
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
                    (
                        Remote::connect(&sub, Some(&s.name)),
                        None,
                        super::target(&sub),
                    )
                }
                Err(e) => {
                    tracing::warn!("{e}; its stored catalog is served and its calls fail");
                    let stored = server_config(config, &s.name, s.upstream.clone());
                    let up = Stopped::serving(
                        stored.catalog_path(),
                        e.message.clone(),
                        config.policy.hold_new_tools,
                    );
                    (up, Some(e.message), super::target(&stored))
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
                rt.spawn(super::fleet_watch::watch_member(Arc::downgrade(&inner), i));
                rt.spawn(super::fleet_watch::relay_notes(Arc::downgrade(&inner), i));
            }
        }
        Arc::new(Fleet { inner })
    }
}

impl FleetInner {
    /// The merged catalog from what each ready member has now; never waits on a member.
    async fn merge_now(&self) -> (CatalogSnapshot, Arc<Naming>) {
        let snaps = join_all(self.members.iter().map(|m| async move {
            if *m.ready.borrow() {
                Some(m.up.catalog().await)
            } else {
                None
            }
        }))
        .await;
        self.merge(snaps)
    }

    fn merge(&self, snaps: Vec<Option<CatalogSnapshot>>) -> (CatalogSnapshot, Arc<Naming>) {
        let key: Vec<Option<(u64, CatalogSource)>> = snaps
            .iter()
            .map(|s| s.as_ref().map(|s| (s.version, s.source)))
            .collect();
        let mut merged = self.merged.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = merged.as_ref()
            && m.key == key
        {
            return (m.snap.clone(), m.naming.clone());
        }
        let empty = Catalog::default();
        let named: Vec<(&str, &Catalog)> = self
            .members
            .iter()
            .zip(&snaps)
            .map(|(m, s)| (m.name.as_str(), s.as_ref().map_or(&empty, |s| &*s.catalog)))
            .collect();
        let (naming, tools) = Naming::build(&named, self.budget);
        let warned_before = merged.as_ref().map(|m| m.naming.warnings.clone());
        if warned_before.as_ref() != Some(&naming.warnings) {
            for (i, w) in &naming.warnings {
                tracing::warn!("server \"{}\" {w}", self.members[*i].name);
            }
        }
        let source = merged_source(snaps.iter().map(|s| s.as_ref().map(|s| s.source)));
        let held = named
            .iter()
            .flat_map(|(server, c)| {
                c.held().iter().map(|h| HeldTool {
                    name: held_name(server, &h.name),
                    ..h.clone()
                })
            })
            .collect();
        let snap = CatalogSnapshot {
            catalog: Arc::new(
                Catalog::new(tools)
                    .with_real_names(naming.real_names())
                    .with_held(held),
            ),
            source,
            version: self.next_version.fetch_add(1, Ordering::Relaxed) + 1,
        };
        if let Some(path) = &self.merged_file
            && snaps.iter().all(Option::is_some)
        {
            write_merged(path.clone(), snap.catalog.clone());
        }
        let naming = Arc::new(naming);
        let counts = named.iter().map(|(_, c)| c.len()).collect();
        *merged = Some(Merged {
            key,
            snap: snap.clone(),
            naming: naming.clone(),
            counts,
        });
        (snap, naming)
    }

    /// Each member's tool count and the naming of the last merge, if there was one.
    pub fn last_merge(&self) -> Option<(Vec<usize>, Arc<Naming>)> {
        let merged = self.merged.lock().unwrap_or_else(|e| e.into_inner());
        merged
            .as_ref()
            .map(|m| (m.counts.clone(), m.naming.clone()))
    }

    /// Tells `changes()` subscribers when the merged catalog has a new version.
    /// Before the first merge (no list served yet) there is nobody to tell, and merging for
    /// each server that becomes ready would only delay that first list.
    pub async fn announce(&self) {
        if self
            .merged
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_none()
        {
            return;
        }
        let (snap, _) = self.merge_now().await;
        self.changes.send_if_modified(|v| {
            let changed = *v != snap.version;
            *v = snap.version;
            changed
        });
    }

    /// The naming of the catalog last merged (built now if there is none yet).
    pub async fn naming(&self) -> Arc<Naming> {
        self.merge_now().await.1
    }

    /// Sends one request to member `i`; its errors name the server.
    pub async fn send(
        &self,
        i: usize,
        method: &str,
        params: Value,
        ctx: &CallContext,
    ) -> Result<Value, UpstreamError> {
        let m = &self.members[i];
        m.up.request(method, params, ctx)
            .await
            .map_err(|e| named(&m.name, e))
    }
}

/// Writes the merged catalog off the request path (serializing and syncing ~0.5 MB at 1,000
/// tools would hold up the list that produced it).
fn write_merged(path: PathBuf, catalog: Arc<Catalog>) {
    let work = move || {
        let body = catalog.to_value().to_string();
        if let Err(e) = crate::private_file::write(&path, body.as_bytes()) {
            tracing::warn!("cannot write the merged catalog {}: {e}", path.display());
        }
    };
    match tokio::runtime::Handle::try_current() {
        Ok(rt) => drop(rt.spawn_blocking(work)),
        Err(_) => work(),
    }
}

/// The merged catalog's source: `Live` when every server's is, else the stalest source any server
/// has; `None` only when no server has a catalog.
fn merged_source(sources: impl Iterator<Item = Option<CatalogSource>>) -> CatalogSource {
    let rank = |s: CatalogSource| match s {
        CatalogSource::Live => 3,
        CatalogSource::Memory => 2,
        CatalogSource::Disk => 1,
        CatalogSource::None => 0,
    };
    let mut worst: Option<CatalogSource> = None;
    let mut any = false;
    for s in sources {
        let s = s.unwrap_or(CatalogSource::None);
        if s != CatalogSource::None {
            any = true;
        }
        if worst.is_none_or(|w| rank(s) < rank(w)) {
            worst = Some(s);
        }
    }
    match worst {
        Some(CatalogSource::None) if any => CatalogSource::Disk,
        Some(s) => s,
        None => CatalogSource::None,
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
        super::fleet_route::request(&self.inner, method, params, ctx).await
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
        super::fleet_status::status(&self.inner)
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
        let i = super::fleet_route::resource_owner(&self.inner, uri).await?;
        let m = &self.inner.members[i];
        m.up.resource_subscription(uri, on)
            .await
            .map_err(|e| named(&m.name, e))
    }
}

#[cfg(test)]
#[path = "fleet_tests.rs"]
mod tests;
