//! A listing stable within a session (docs/working-set.md#a-listing-stable-within-a-session): with
//! `listingUpdates: "session"` a session's first `tools/list` fixes what it lists, so a client's
//! cached prompt prefix (the tool list is at its front) keeps hitting. A promotion or a newly
//! started server reaches new sessions only; a held tool that can no longer be called (gone from
//! the served catalog: its server gone or restarted without it, removed upstream, held by the
//! definition check; or denied by policy) drops out, and the transports tell the client.
//!
//! What is held per session is the basis of its first listing (the meta-tools as then defined, the
//! upstream tools' catalog names in order), shared between the sessions that listed the same
//! listing, and the listing last answered or announced to it. A held tool is listed as the catalog
//! serves it now: a definition the definition check let through is shown in place (and announced).
//! Memory is bounded: a session's entry goes when it ends or idles, and at most
//! `MAX_HELD_LISTINGS` are kept, the least recently used evicted first. Pure but for the clock
//! the callers pass in; must not do I/O.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::catalog::Catalog;
use crate::catalog::exposed;
use crate::config::Config;
use crate::mcp::Caller;
use crate::policy;
use crate::server::proxy::calls::STATELESS_SESSION_GAP;
use crate::server::proxy::tools_list::present;
use crate::server::relay::sessions::SESSION_IDLE;

/// Most sessions whose listing is held at once. Past it the least recently used is forgotten (its
/// next `tools/list` gets the listing of a new session). Raising it costs a key and a few shared
/// pointers per session, and the listings of sessions whose tools dropped out.
pub const MAX_HELD_LISTINGS: usize = 4096;

/// Whom a listing is held for: the transport's session (a legacy `Mcp-Session-Id`, a `--stdio`
/// connection), else the stateless session: the client's name, from its `server/discover` (a new
/// process of the client) until `STATELESS_SESSION_GAP` passes without a `tools/list` or a call.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SessionKey {
    id: String,
    stateless: bool,
}

impl SessionKey {
    /// The key of a transport `session`, else of the stateless `client`'s session.
    pub fn of(session: Option<&str>, client: Option<&str>) -> SessionKey {
        match session {
            Some(s) => SessionKey {
                id: s.to_string(),
                stateless: false,
            },
            None => SessionKey {
                id: client.unwrap_or("unknown").to_string(),
                stateless: true,
            },
        }
    }

    /// The key of the session `caller` speaks in.
    pub fn of_caller(caller: &Caller) -> SessionKey {
        SessionKey::of(caller.session.as_deref(), caller.client.as_deref())
    }

    /// How long the session may go unseen before its listing is forgotten.
    fn idle_limit(&self) -> Duration {
        match self.stateless {
            true => STATELESS_SESSION_GAP,
            false => SESSION_IDLE,
        }
    }
}

/// What a session's listing is made from, fixed at its first `tools/list`.
#[derive(Debug, PartialEq)]
struct Basis {
    /// The meta-tools listed before the upstream tools, as first listed (their descriptions count
    /// the catalog; they stay callable).
    meta: Vec<Value>,
    /// The upstream tools by the names the catalog held them under, in listing order.
    tools: Vec<String>,
    /// The meta-tools listed after the upstream tools (`run_script` when every tool is listed).
    after: Vec<Value>,
}

/// One session's held listing.
struct Held {
    basis: Arc<Basis>,
    /// The catalog version `listing` was checked against.
    version: u64,
    /// The `tools/list` result last answered or announced.
    listing: Arc<Value>,
    last_seen: Instant,
}

/// A basis listed at a catalog version.
type Rebuilt = (Arc<Basis>, u64, Arc<Value>);

/// The held listings of every session, and what they share.
#[derive(Default)]
pub struct HeldListings {
    map: Mutex<HashMap<SessionKey, Held>>,
    /// The last fresh listing and its basis, shared by the sessions that first listed it.
    fresh: Mutex<Option<(Arc<Value>, Arc<Basis>)>>,
    /// The last listing rebuilt from a basis at a catalog version, shared likewise.
    rebuilt: Mutex<Option<Rebuilt>>,
}

impl HeldListings {
    /// The listing `key`'s session gets, given the `fresh` listing a new session would get of
    /// `catalog` at `version`. A session seen for the first time (or again after it idled out or
    /// was evicted) gets `fresh`, held from then on; a listing made without a catalog (the upstream
    /// not there yet) is not held.
    pub fn listing(
        &self,
        key: &SessionKey,
        catalog: &Catalog,
        version: u64,
        fresh: &Arc<Value>,
        config: &Config,
        now: Instant,
    ) -> Arc<Value> {
        let mut map = lock(&self.map);
        if let Some(held) = live_entry(&mut map, key, now) {
            held.last_seen = now;
            self.refresh(held, catalog, version, config);
            return held.listing.clone();
        }
        if catalog.is_empty() {
            return fresh.clone();
        }
        let basis = self.basis_of(fresh, catalog);
        make_room(&mut map, now);
        let held = Held {
            basis,
            version,
            listing: fresh.clone(),
            last_seen: now,
        };
        map.insert(key.clone(), held);
        fresh.clone()
    }

    /// Whether `key`'s session is to be told `notifications/tools/list_changed` now that the
    /// catalog is at `version`: yes when it holds no listing (it has not listed, or idled out),
    /// else only when its listing changed (a held tool dropped out or changed definition); the
    /// changed listing is then the one its next `tools/list` answers.
    pub fn announces(
        &self,
        key: &SessionKey,
        catalog: &Catalog,
        version: u64,
        config: &Config,
        now: Instant,
    ) -> bool {
        let mut map = lock(&self.map);
        let Some(held) = live_entry(&mut map, key, now) else {
            return true;
        };
        let before = held.listing.clone();
        self.refresh(held, catalog, version, config);
        !Arc::ptr_eq(&before, &held.listing)
    }

    /// Marks `key`'s session as seen (a call), so a stateless session that calls without listing
    /// keeps its listing.
    pub fn touch(&self, key: &SessionKey, now: Instant) {
        if let Some(held) = lock(&self.map).get_mut(key) {
            held.last_seen = now;
        }
    }

    /// Forgets `key`'s listing: its session ended.
    pub fn forget(&self, key: &SessionKey) {
        lock(&self.map).remove(key);
    }

    /// How many listings are held.
    pub fn len(&self) -> usize {
        lock(&self.map).len()
    }

    /// Whether no listing is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Brings `held` to the catalog at `version`: its basis listed as the catalog serves it now,
    /// its `listing` replaced only when that differs.
    fn refresh(&self, held: &mut Held, catalog: &Catalog, version: u64, config: &Config) {
        if held.version == version {
            return;
        }
        let now_listed = self.rebuilt(&held.basis, catalog, version, config);
        if *now_listed != *held.listing {
            held.listing = now_listed;
        }
        held.version = version;
    }

    /// `basis` listed of `catalog` at `version`, shared with the last session that asked the same.
    fn rebuilt(
        &self,
        basis: &Arc<Basis>,
        catalog: &Catalog,
        version: u64,
        config: &Config,
    ) -> Arc<Value> {
        let mut memo = lock(&self.rebuilt);
        if let Some((b, v, listing)) = memo.as_ref()
            && Arc::ptr_eq(b, basis)
            && *v == version
        {
            return listing.clone();
        }
        let listing = Arc::new(rebuild(basis, catalog, config));
        *memo = Some((basis.clone(), version, listing.clone()));
        listing
    }

    /// The basis of the listing `fresh` of `catalog`, shared with the sessions that listed it too.
    fn basis_of(&self, fresh: &Arc<Value>, catalog: &Catalog) -> Arc<Basis> {
        let mut last = lock(&self.fresh);
        if let Some((f, basis)) = last.as_ref()
            && (Arc::ptr_eq(f, fresh) || **f == **fresh)
        {
            return basis.clone();
        }
        let basis = Arc::new(basis(fresh, catalog));
        *last = Some((fresh.clone(), basis.clone()));
        basis
    }
}

/// `key`'s entry unless it idled out (then it is removed).
fn live_entry<'a>(
    map: &'a mut HashMap<SessionKey, Held>,
    key: &SessionKey,
    now: Instant,
) -> Option<&'a mut Held> {
    let idle = map
        .get(key)
        .map(|h| now.saturating_duration_since(h.last_seen) > key.idle_limit())?;
    if idle {
        map.remove(key);
        return None;
    }
    map.get_mut(key)
}

/// Forgets the listings of sessions that idled out, then, while `MAX_HELD_LISTINGS` are held,
/// the least recently used.
fn make_room(map: &mut HashMap<SessionKey, Held>, now: Instant) {
    if map.len() < MAX_HELD_LISTINGS {
        return;
    }
    map.retain(|k, h| now.saturating_duration_since(h.last_seen) <= k.idle_limit());
    while map.len() >= MAX_HELD_LISTINGS {
        let oldest = map
            .iter()
            .min_by_key(|(_, h)| h.last_seen)
            .map(|(k, _)| k.clone());
        match oldest {
            Some(k) => map.remove(&k),
            None => return,
        };
    }
}

/// What a listing is made of: its meta-tools, and its upstream tools by their catalog names.
fn basis(listing: &Value, catalog: &Catalog) -> Basis {
    let mut out = Basis {
        meta: Vec::new(),
        tools: Vec::new(),
        after: Vec::new(),
    };
    let tools = listing.get("tools").and_then(Value::as_array);
    for tool in tools.into_iter().flatten() {
        let shown = tool.get("name").and_then(Value::as_str).unwrap_or("");
        if exposed::is_meta(shown) && out.tools.is_empty() {
            out.meta.push(tool.clone());
        } else if exposed::is_meta(shown) {
            out.after.push(tool.clone());
        } else {
            out.tools
                .push(exposed::catalog_name(catalog, shown).to_string());
        }
    }
    out
}

/// The `tools/list` result of `basis` now: its meta-tools, then each of its tools the catalog
/// still serves and the policy allows, presented as `tools_list` presents it, in basis order,
/// then the meta-tools that came after them.
fn rebuild(basis: &Basis, catalog: &Catalog, config: &Config) -> Value {
    let rule = policy::Rule::new(&config.policy);
    let mut tools = basis.meta.clone();
    for name in &basis.tools {
        let Some(tool) = catalog.get(name).filter(|_| rule.allows(catalog, name)) else {
            continue;
        };
        let Some(shown) = exposed::exposed_name(catalog, name) else {
            continue;
        };
        let tool = present(tool, config.compact_descriptions);
        tools.push(match shown {
            Cow::Borrowed(_) => tool,
            Cow::Owned(alias) => exposed::renamed(tool, alias),
        });
    }
    tools.extend(basis.after.iter().cloned());
    json!({ "tools": tools })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
#[path = "held_listing_tests.rs"]
mod tests;
