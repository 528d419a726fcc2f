//! The catalog cache: the last good `tools/list` in memory and in `stateDir/catalog.json` (0600,
//! written atomically, the tool objects as the upstream sent them), its age against
//! `catalogTtlMs`, and the version number that changes when the content does. Must not talk to
//! the upstream (the caller lists and hands the result in).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;

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
    pub fn open(path: PathBuf, ttl: Duration) -> Cache {
        let mut inner = Inner::default();
        if path.exists() {
            match Catalog::load_file(&path) {
                Ok(c) => {
                    let text = serde_json::to_string(c.tools()).unwrap_or_default();
                    inner.version = 1;
                    inner.current = Some(Current {
                        catalog: Arc::new(checked(c.into_checked())),
                        digest: digest(&text),
                        source: CatalogSource::Disk,
                        listed: None,
                    });
                }
                Err(e) => tracing::warn!("ignoring the stored catalog: {e}"),
            }
        }
        let (changes, _) = tokio::sync::watch::channel(inner.version);
        Cache {
            inner: Mutex::new(inner),
            path,
            ttl,
            changes,
        }
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
        let mut inner = self.inner.lock().unwrap();
        inner.stale = false;
        inner.last_failure = None;
        let digest = digest(&text);
        let same = inner.current.as_ref().is_some_and(|c| c.digest == digest);
        if same {
            let c = inner.current.as_mut().expect("checked");
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
        if let Err(e) = write_catalog(&self.path, &text) {
            tracing::warn!("cannot store the catalog in {}: {e}", self.path.display());
        }
        inner.version += 1;
        inner.current = Some(Current {
            catalog: Arc::new(checked(Catalog::checked(tools))),
            digest,
            source: CatalogSource::Live,
            listed: Some(now),
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
        let cache = Cache::open(path.clone(), TTL);
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
        let reopened = Cache::open(path, TTL);
        let l = reopened.lookup(t0);
        let s = l.snapshot.unwrap();
        assert_eq!(
            (s.source, s.catalog.len(), l.refresh),
            (CatalogSource::Disk, 1, true)
        );
    }

    #[test]
    fn a_broken_file_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.json");
        std::fs::write(&path, "{not json").unwrap();
        let cache = Cache::open(path, TTL);
        assert!(cache.lookup(Instant::now()).snapshot.is_none());
    }
}
