//! The fleet's shared state: its members (one `Upstream` per server), the merged catalog they
//! make under `catalog::exposed` names, who owns which resource, and the server's name put on
//! each member's errors. The fleet's route, status and watch files read it; it imports none of
//! them. Must not wait on a member that is not ready.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::join_all;
use serde_json::Value;

use crate::catalog::Catalog;
use crate::catalog::definitions::HeldTool;
use crate::catalog::exposed::Naming;
use crate::upstream::{CallContext, CatalogSnapshot, CatalogSource, Upstream, UpstreamError};

/// Where a server's own state lives under the state dir: `servers/<name>/`.
pub const SERVERS_DIR: &str = "servers";

/// One server behind the fleet.
pub struct Member {
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
    pub fn new(name: &str, up: Arc<dyn Upstream>, start_error: Option<String>) -> Member {
        Member {
            name: name.to_string(),
            up,
            start_error,
            target: String::new(),
            ready: tokio::sync::watch::channel(false).0,
        }
    }
}

pub struct FleetInner {
    pub members: Vec<Member>,
    /// Longest exposed name (`name_budget` of the config's `serverName`).
    pub(super) budget: usize,
    pub(super) started: Instant,
    pub list_budget: Duration,
    pub(super) merged: Mutex<Option<Merged>>,
    pub(super) next_version: AtomicU64,
    pub(super) changes: tokio::sync::watch::Sender<u64>,
    pub notes: tokio::sync::broadcast::Sender<Value>,
    pub owners: Mutex<Owners>,
    /// `stateDir/catalog.json`: the merged catalog, for the commands that read it offline
    /// (`mws search`, `ingest`, `promote`'s fallback). Written only when every server has one.
    pub(super) merged_file: Option<PathBuf>,
}

#[derive(Clone)]
pub(super) struct Merged {
    /// Each member's (version, source) the merge was made from (`None`: no catalog).
    key: Vec<Option<(u64, CatalogSource)>>,
    snap: CatalogSnapshot,
    naming: Arc<Naming>,
    /// Tools each member had in it.
    counts: Vec<usize>,
}

/// Who owns what, from the last lists.
#[derive(Debug, Default)]
pub struct Owners {
    /// Resource URI → server index.
    pub(super) resources: HashMap<String, usize>,
    /// URI template's fixed head (up to its first `{`) → server index.
    pub(super) templates: Vec<(String, usize)>,
}

impl FleetInner {
    /// The merged catalog from what each ready member has now; never waits on a member.
    pub(super) async fn merge_now(&self) -> (CatalogSnapshot, Arc<Naming>) {
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

/// The name a held tool of `server` goes by in the merged catalog and in `mws tools`:
/// `<server>__<tool>`, never shortened (it is not listed).
pub fn held_name(server: &str, tool: &str) -> String {
    format!("{server}{}{tool}", crate::catalog::exposed::SEPARATOR)
}

/// `e` with the server's name in its message (an upstream's own JSON-RPC error keeps its code
/// and data).
pub fn named(server: &str, e: UpstreamError) -> UpstreamError {
    match e {
        UpstreamError::Rpc {
            code,
            message,
            data,
        } => UpstreamError::Rpc {
            code,
            message: format!("server \"{server}\": {message}"),
            data,
        },
        UpstreamError::Unavailable(m) => {
            UpstreamError::Unavailable(format!("server \"{server}\": {m}"))
        }
        UpstreamError::Protocol(m) => UpstreamError::Protocol(format!("server \"{server}\": {m}")),
        UpstreamError::SessionExpired => UpstreamError::Unavailable(format!(
            "server \"{server}\": its session expired; the call was not retried"
        )),
        UpstreamError::NeedsLogin { why, .. } => UpstreamError::NeedsLogin {
            server: Some(server.to_string()),
            why,
        },
        UpstreamError::Timeout { after, .. } => UpstreamError::Timeout {
            after,
            server: Some(server.to_string()),
        },
        UpstreamError::Held(mut h) => {
            h.name = held_name(server, &h.name);
            UpstreamError::Held(h)
        }
        other => other,
    }
}
