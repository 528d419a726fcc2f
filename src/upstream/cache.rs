//! The catalog cache: the last good `tools/list` in memory and in `stateDir/catalog.json` (0600,
//! written atomically, the tool objects as the upstream sent them), its age against
//! `catalogTtlMs`, and the version number that changes when the content does. What it serves
//! leaves out the tools whose definitions are held (`approvals`, reviewed again when another
//! process changes `definitions.json`). Must not talk to the upstream (the caller lists and hands
//! the result in).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::approvals::{self, Stamp};
use super::{CatalogSnapshot, CatalogSource};
use crate::catalog::Catalog;

/// After a failed refresh, the least time before a `catalog()` call tries again in the
/// background. Raising it spares a down upstream; lowering it notices recovery sooner.
pub const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(1);

struct Current {
    catalog: Arc<Catalog>,
    /// A hash of the serialized tool array, to tell a changed list from the same one (keeping
    /// the text itself cost as much memory again as `catalog.json`'s size, ~0.4 MB at 1,000 tools).
    digest: u64,
    source: CatalogSource,
    /// When the upstream last listed it (`None`: from disk, never listed in this process).
    listed: Option<Instant>,
    /// `definitions.json` as the review of this list left it.
    stamp: Option<Stamp>,
}

#[derive(Default)]
struct Inner {
    current: Option<Current>,
    /// `list_changed` arrived since the last list.
    stale: bool,
    version: u64,
    last_failure: Option<Instant>,
}

pub struct Cache {
    inner: Mutex<Inner>,
    path: PathBuf,
    ttl: Duration,
    /// `policy.holdNewTools`: a server's new tools wait for approval too.
    hold_new: bool,
    changes: tokio::sync::watch::Sender<u64>,
}

/// What `catalog()` should do with what the cache holds.
pub struct Lookup {
    pub snapshot: Option<CatalogSnapshot>,
    /// Ask the upstream (in the background when there is a snapshot to serve meanwhile).
    pub refresh: bool,
}

impl Cache {
    /// A cache primed from `catalog.json` when there is a readable one (a bad file is logged and
    /// ignored: the upstream will be asked).
    pub fn open(path: PathBuf, ttl: Duration, hold_new: bool) -> Cache {
        let cache = Cache {
            inner: Mutex::new(Inner::default()),
            path,
            ttl,
            hold_new,
            changes: tokio::sync::watch::channel(0).0,
        };
        if let Some((tools, digest)) = cache.stored() {
            let (catalog, stamp) = cache.reviewed(tools);
            cache.replace(catalog, digest, stamp, None);
        }
        cache
    }

    /// The tools in `catalog.json` and their digest, if it can be read.
    fn stored(&self) -> Option<(Vec<Value>, u64)> {
        if !self.path.exists() {
            return None;
        }
        match Catalog::load_file(&self.path) {
            Ok(c) => {
                let text = serde_json::to_string(c.tools()).unwrap_or_default();
                Some((c.into_tools(), digest(&text)))
            }
            Err(e) => {
                tracing::warn!("ignoring the stored catalog: {e}");
                None
            }
        }
    }

    /// The catalog to serve from `tools`: the held ones out (`approvals::review`), the ones a
    /// client would reject out (`Catalog::checked`).
    fn reviewed(&self, tools: Vec<Value>) -> (Arc<Catalog>, Option<Stamp>) {
        let now = crate::clock::fmt(crate::clock::now());
        let review = approvals::review(self.dir(), tools, self.hold_new, &now);
        for h in &review.held {
            tracing::warn!("{}", h.message());
        }
        let catalog = checked(Catalog::checked(review.serve)).with_held(review.held);
        (Arc::new(catalog), review.stamp)
    }

    /// The directory of `catalog.json`, which holds `definitions.json` too.
    fn dir(&self) -> &Path {
        self.path.parent().unwrap_or(Path::new("."))
    }

    /// Whether `definitions.json` changed since the catalog being served was reviewed (`mws
    /// tools approve` or another mws process wrote it).
    pub fn approvals_changed(&self) -> bool {
        let now = approvals::stamp(self.dir());
        let inner = self.inner.lock().unwrap();
        inner.current.as_ref().is_some_and(|c| c.stamp != now)
    }

    /// Reviews the list being served again against `definitions.json` (from `catalog.json`,
    /// without asking the upstream), and announces the result when it differs.
    pub fn review_again(&self) {
        if self.inner.lock().unwrap().current.is_none() {
            return;
        }
        let Some((tools, digest)) = self.stored() else {
            return;
        };
        let (catalog, stamp) = self.reviewed(tools);
        self.replace(catalog, digest, stamp, None);
    }

    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }

    pub fn lookup(&self, now: Instant) -> Lookup {
        let inner = self.inner.lock().unwrap();
        let may_retry = inner
            .last_failure
            .is_none_or(|t| now.saturating_duration_since(t) >= RETRY_AFTER_FAILURE);
        let Some(c) = &inner.current else {
            return Lookup {
                snapshot: None,
                refresh: true,
            };
        };
        let fresh = !inner.stale
            && c.listed
                .is_some_and(|t| now.saturating_duration_since(t) < self.ttl);
        let source = match (fresh, c.source) {
            (true, s) => s,
            (false, CatalogSource::Live) => CatalogSource::Memory,
            (false, s) => s,
        };
        Lookup {
            snapshot: Some(CatalogSnapshot {
                catalog: c.catalog.clone(),
                source,
                version: inner.version,
            }),
            refresh: !fresh && may_retry,
        }
    }

    /// The serving snapshot right now, if any (after a refresh attempt).
    pub fn snapshot(&self, now: Instant) -> Option<CatalogSnapshot> {
        self.lookup(now).snapshot
    }

    /// Marks the cached list stale (`list_changed`): the next `catalog()` revalidates.
    pub fn invalidate(&self) {
        let mut inner = self.inner.lock().unwrap();
        inner.stale = true;
        inner.last_failure = None;
    }

    pub fn failed(&self, now: Instant) {
        let mut inner = self.inner.lock().unwrap();
        inner.last_failure = Some(now);
        if let Some(c) = inner.current.as_mut()
            && c.source == CatalogSource::Live
        {
            c.source = CatalogSource::Memory;
        }
    }

    /// Stores a fresh list. A changed list gets a new version, is written to `catalog.json` and
    /// announced on `changes`.
    pub fn store(&self, tools: Vec<Value>, now: Instant) {
        let text = serde_json::to_string(&tools).unwrap_or_default();
        let digest = digest(&text);
        let stamp_now = approvals::stamp(self.dir());
        {
            let mut inner = self.inner.lock().unwrap();
            inner.stale = false;
            inner.last_failure = None;
            if let Some(c) = inner.current.as_mut()
                && c.digest == digest
                && c.stamp == stamp_now
            {
                c.source = CatalogSource::Live;
                c.listed = Some(now);
                // A first list that matches an old file: still write it if the file went away.
                if !self.path.exists()
                    && let Err(e) = write_catalog(&self.path, &text)
                {
                    tracing::warn!("cannot store the catalog: {e}");
                }
                return;
            }
            if inner.current.as_ref().is_none_or(|c| c.digest != digest)
                && let Err(e) = write_catalog(&self.path, &text)
            {
                tracing::warn!("cannot store the catalog in {}: {e}", self.path.display());
            }
        }
        // Reviewed without the lock: other readers go on with the list being served.
        let (catalog, stamp) = self.reviewed(tools);
        self.replace(catalog, digest, stamp, Some(now));
    }

    /// Serves `catalog` (the list with digest `digest`, reviewed at `stamp`; `listed`: just now
    /// by the upstream, else as before) under a new version, announced, unless it serves what is
    /// served already.
    fn replace(
        &self,
        catalog: Arc<Catalog>,
        digest: u64,
        stamp: Option<Stamp>,
        listed: Option<Instant>,
    ) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(c) = inner.current.as_mut()
            && c.digest == digest
            && c.catalog.held() == catalog.held()
            && c.catalog.names().eq(catalog.names())
        {
            c.stamp = stamp;
            if listed.is_some() {
                c.listed = listed;
                c.source = CatalogSource::Live;
            }
            return;
        }
        let (source, listed) = match (listed, inner.current.as_ref()) {
            (Some(t), _) => (CatalogSource::Live, Some(t)),
            (None, Some(c)) => (c.source, c.listed),
            (None, None) => (CatalogSource::Disk, None),
        };
        inner.version += 1;
        inner.current = Some(Current {
            catalog,
            digest,
            source,
            listed,
            stamp,
        });
        let v = inner.version;
        drop(inner);
        self.changes.send_replace(v);
    }
}

/// Says on stderr, once per catalog, which tools are left out and why.
fn checked(c: Catalog) -> Catalog {
    for (name, why) in c.rejected() {
        tracing::warn!(
            "upstream tool {name} is left out: {why} (clients reject a tools/list holding it)"
        );
    }
    c
}

/// SipHash of a serialized tool array: a changed list and the same one told apart without keeping
/// the text (a collision, which would keep serving the old list until the next change, is a 2^-64
/// chance).
fn digest(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// Writes `{"tools": <tools>}` to `path`: the tool objects keep the upstream's key order.
fn write_catalog(path: &Path, tools_json: &str) -> std::io::Result<()> {
    let mut body = Vec::with_capacity(tools_json.len() + 12);
    body.extend_from_slice(b"{\"tools\":");
    body.extend_from_slice(tools_json.as_bytes());
    body.extend_from_slice(b"}\n");
    crate::private_file::write(path, &body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TTL: Duration = Duration::from_secs(30);

    #[test]
    fn lifecycle_disk_live_stale_failed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state/catalog.json");
        let t0 = Instant::now();
        let cache = Cache::open(path.clone(), TTL, false);
        let l = cache.lookup(t0);
        assert!(l.snapshot.is_none() && l.refresh);

        let tools = vec![
            json!({"name": "b", "x-vendor": {"z": 1, "a": 2}, "execution": {"taskSupport": "forbidden"}, "inputSchema": {"type": "object"}}),
            json!({"name": "a", "inputSchema": {"type": "object"}}),
            // Stored as sent, but never served: a client would reject it.
            json!({"name": "bad", "inputSchema": "not a schema"}),
        ];
        cache.store(tools.clone(), t0);
        let s = cache.snapshot(t0).unwrap();
        assert_eq!((s.source, s.version), (CatalogSource::Live, 1));
        assert_eq!(s.catalog.names().collect::<Vec<_>>(), ["b", "a"]);
        assert_eq!(s.catalog.rejected()[0].0, "\"bad\"");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\"tools\":[{\"name\":\"b\",\"x-vendor\":{\"z\":1,\"a\":2},\"execution\":{\"taskSupport\":\"forbidden\"},\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"a\",\"inputSchema\":{\"type\":\"object\"}},{\"name\":\"bad\",\"inputSchema\":\"not a schema\"}]}\n"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
                0o600
            );
        }
        // Within the TTL: no refresh. After it: served from memory while asking again.
        assert!(!cache.lookup(t0 + Duration::from_secs(1)).refresh);
        let later = cache.lookup(t0 + TTL);
        assert!(later.refresh);
        assert_eq!(later.snapshot.unwrap().source, CatalogSource::Memory);
        // The same list again keeps the version; list_changed makes it stale.
        cache.store(tools.clone(), t0);
        assert_eq!(cache.snapshot(t0).unwrap().version, 1);
        cache.invalidate();
        assert!(cache.lookup(t0).refresh);
        // A failure keeps the last good list and waits before retrying.
        cache.failed(t0);
        let l = cache.lookup(t0);
        assert!(!l.refresh);
        assert_eq!(l.snapshot.unwrap().catalog.len(), 2);
        assert!(cache.lookup(t0 + RETRY_AFTER_FAILURE).refresh);
        // A different list bumps the version and announces it.
        let rx = cache.subscribe();
        cache.store(
            vec![json!({"name": "c", "inputSchema": {"type": "object"}})],
            t0,
        );
        assert_eq!(*rx.borrow(), 2);

        // A new process starts from the file at once.
        let reopened = Cache::open(path, TTL, false);
        let l = reopened.lookup(t0);
        let s = l.snapshot.unwrap();
        assert_eq!(
            (s.source, s.catalog.len(), l.refresh),
            (CatalogSource::Disk, 1, true)
        );
    }

    #[test]
    fn a_changed_definition_is_left_out_until_approved_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.json");
        let t0 = Instant::now();
        let cache = Cache::open(path.clone(), TTL, false);
        let tool =
            |d: &str| json!({"name": "a", "description": d, "inputSchema": {"type": "object"}});
        cache.store(vec![tool("A.")], t0);
        assert!(!cache.approvals_changed());
        let rx = cache.subscribe();
        cache.store(vec![tool("Evil.")], t0);
        let s = cache.snapshot(t0).unwrap();
        assert!(s.catalog.is_empty());
        assert_eq!(s.catalog.held()[0].name, "a");
        assert_eq!(*rx.borrow(), 2);
        // `mws tools approve` in another process: noticed, reviewed again from catalog.json.
        approvals::approve(dir.path(), &["a".into()]).unwrap();
        assert!(cache.approvals_changed());
        cache.review_again();
        let s = cache.snapshot(t0).unwrap();
        assert_eq!(s.catalog.get("a").unwrap()["description"], "Evil.");
        assert!(s.catalog.held().is_empty());
        assert_eq!((s.version, s.source), (3, CatalogSource::Live));
        assert!(!cache.approvals_changed());
        // Nothing new to review: the version stays.
        cache.review_again();
        assert_eq!(cache.snapshot(t0).unwrap().version, 3);
        // A new process holds what this one held.
        cache.store(vec![tool("Worse.")], t0);
        let reopened = Cache::open(path, TTL, false);
        assert_eq!(reopened.snapshot(t0).unwrap().catalog.held().len(), 1);
    }

    #[test]
    fn a_broken_file_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.json");
        std::fs::write(&path, "{not json").unwrap();
        let cache = Cache::open(path, TTL, false);
        assert!(cache.lookup(Instant::now()).snapshot.is_none());
    }
}
