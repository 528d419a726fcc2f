//! `tools/list` per session, the `Proxy` side of `held_listing.rs`: the fresh listing of a
//! project (built once per catalog version and working sets), the listing a session gets (the
//! fresh one with `listingUpdates: "live"`, else the one it holds), whether a transport
//! tells a session `notifications/tools/list_changed` after a change of the working set or the
//! catalog, and the end of a session's listing (a transport's session ended, a stateless client
//! discovered anew).

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Value, json};

use crate::config::ListingUpdates;
use crate::listed;
use crate::mcp::Caller;
use crate::server::proxy::Proxy;
use crate::server::proxy::calls::warn_shadowed;
use crate::server::proxy::held_listing::SessionKey;
use crate::server::proxy::tools_list::listed_tools;
use crate::server::relay::streams::Gate;
use crate::server::working_set::WorkingSet;
use crate::upstream::CatalogSnapshot;

/// Most fresh listings cached at once, one per project seen; past it the cache starts anew.
/// Raising it keeps more projects' listings built; each is the size of one `tools/list` answer.
pub const MAX_CACHED_LISTINGS: usize = 64;

/// A fresh listing and what it was built from: the catalog version and the working sets.
pub(crate) type Built = (u64, WorkingSet, Arc<Value>);

impl Proxy {
    /// The working set a session of `project` lists (`listed::for_project`).
    pub(crate) fn working_set_for(&self, project: Option<&str>) -> Vec<String> {
        let sets = self.working_set.borrow().clone();
        listed::for_project(&sets, project, &self.config.promote)
    }

    /// The `tools/list` result a new session of `project` gets: meta-tools plus its working set,
    /// cached per project, catalog version and working sets so that repeated lists cost a clone
    /// (`tools_list` answers a session that has listed, from `held_listing.rs`).
    pub(crate) fn fresh_listing(
        &self,
        snap: &CatalogSnapshot,
        project: Option<&Arc<str>>,
    ) -> Arc<Value> {
        let sets = self.working_set.borrow().clone();
        let key = project.filter(|_| self.config.promote.per_project).cloned();
        {
            let cache = self.listing.lock().unwrap_or_else(|e| e.into_inner());
            if let Some((v, w, r)) = cache.get(&key)
                && *v == snap.version
                && Arc::ptr_eq(w, &sets)
            {
                return r.clone();
            }
        }
        warn_shadowed(&snap.catalog);
        let ws = listed::for_project(&sets, key.as_deref(), &self.config.promote);
        let result = Arc::new(json!({"tools": listed_tools(&snap.catalog, &ws, &self.config)}));
        let mut cache = self.listing.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= MAX_CACHED_LISTINGS {
            cache.clear();
        }
        cache.insert(key, (snap.version, sets, result.clone()));
        result
    }
}

impl Proxy {
    /// The `tools/list` result for `caller`'s session.
    pub async fn tools_list(&self, caller: &Caller) -> Value {
        let snap = self.upstream.catalog().await;
        let fresh = self.fresh_listing(&snap, caller.project.as_ref());
        if self.config.listing_updates == ListingUpdates::Live {
            return (*fresh).clone();
        }
        let key = SessionKey::of_caller(caller);
        let (catalog, version) = (&snap.catalog, snap.version);
        let now = Instant::now();
        let listing = self
            .held
            .listing(&key, catalog, version, &fresh, &self.config, now);
        (*listing).clone()
    }

    /// Whether `key`'s session hears `notifications/tools/list_changed` after the working set or
    /// the catalog changed: always with `listingUpdates: "live"`, else when its listing changed
    /// or it holds none (`HeldListings::announces`).
    pub async fn announces_list_change(&self, key: &SessionKey) -> bool {
        if self.config.listing_updates == ListingUpdates::Live {
            return true;
        }
        let snap = self.upstream.catalog().await;
        let (catalog, version) = (&snap.catalog, snap.version);
        self.held
            .announces(key, catalog, version, &self.config, Instant::now())
    }

    /// The `Gate` of a notification stream of `key`'s session (`announces_list_change`).
    pub fn list_change_gate(self: &Arc<Self>, key: SessionKey) -> Gate {
        let proxy = self.clone();
        Arc::new(move || {
            let (proxy, key) = (proxy.clone(), key.clone());
            Box::pin(async move { proxy.announces_list_change(&key).await })
        })
    }

    /// Forgets the listing `key`'s session holds: the session ended.
    pub fn session_ended(&self, key: &SessionKey) {
        self.held.forget(key);
    }

    /// A `server/discover`: a stateless client starts a new session with it (a new process of
    /// the client), so the listing its name held is forgotten.
    pub(crate) fn discovered(&self, caller: &Caller) {
        if caller.session.is_none() {
            self.held.forget(&SessionKey::of_caller(caller));
        }
    }

    /// Marks `caller`'s session as seen (a call keeps a stateless session's listing).
    pub(crate) fn seen(&self, caller: &Caller) {
        if self.config.listing_updates == ListingUpdates::Session {
            self.held
                .touch(&SessionKey::of_caller(caller), Instant::now());
        }
    }
}
