//! The 2025 (session) side of the downstream: `Mcp-Session-Id` sessions minted on `initialize`,
//! looked up on every later request (404 when unknown or expired), ended by DELETE (which also
//! ends the session's GET stream). Holds the client's name per session (capped) so calls are
//! logged under it. A full table makes room by dropping the least recently used idle session and
//! never one in use: then `initialize` is refused. Must not know about the upstream.

use std::collections::{BTreeSet, HashMap};
use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use tokio::sync::watch;

use crate::mcp::LEGACY_VERSIONS;
use crate::upstream::related::Level;

/// Most sessions at once. Past it the least recently used idle session is dropped, and when every
/// session is in use (`SESSION_BUSY`, or a GET stream open) `initialize` is refused (503).
/// Raising it costs up to about `MAX_CLIENT_NAME_BYTES` plus `MAX_SESSION_CAPABILITIES_BYTES` per
/// session.
pub const MAX_SESSIONS: usize = 4096;

/// A session used this recently is in use: a full table never drops it for a newcomer. Raising it
/// protects clients that pause longer, and keeps a table filled in a burst full for longer.
pub const SESSION_BUSY: Duration = Duration::from_secs(10 * 60);

/// Longest client name (`clientInfo.name`) kept per session, in bytes; a longer one is cut at a
/// character boundary. Raising it keeps more of an odd client's name, at that much memory per
/// session.
pub const MAX_CLIENT_NAME_BYTES: usize = 256;

/// Largest relayable input capabilities (`elicitation`, `sampling`, ... from `initialize`) kept per
/// session, as JSON bytes; a larger declaration is refused with invalid params. Raising it admits
/// richer declarations, at that much memory per session.
pub const MAX_SESSION_CAPABILITIES_BYTES: usize = 16 * 1024;

/// `initialize` found every session in use.
#[derive(Debug, thiserror::Error)]
#[error(
    "too many sessions: all {MAX_SESSIONS} are in use; end one with DELETE, or retry once one has \
     been idle for {} minutes",
    SESSION_BUSY.as_secs() / 60
)]
pub struct SessionsFull;

/// A session unused this long is forgotten (its next request gets 404 and the client
/// re-initializes). Raising it keeps idle clients' sessions alive longer.
pub const SESSION_IDLE: Duration = Duration::from_secs(24 * 3600);

/// `name` cut to `MAX_CLIENT_NAME_BYTES` at a character boundary.
pub fn cap_client_name(name: &str) -> String {
    let mut end = name.len().min(MAX_CLIENT_NAME_BYTES);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name[..end].to_string()
}

#[derive(Debug, Clone, PartialEq)]
pub struct LegacySession {
    pub client: Option<String>,
    pub version: String,
    /// The level the client asked for with `logging/setLevel`; its calls' logs are relayed
    /// (`relay::logs`) at or above it. `None`: no logs.
    pub log_level: Option<Level>,
    /// The client's relayable input capabilities from `initialize` (`input::capabilities`).
    pub input: Option<std::sync::Arc<serde_json::Value>>,
    /// Resource URIs the client subscribed to (`resources/subscribe`); their updates go to its GET
    /// stream (`relay::subscriptions`).
    pub subscriptions: BTreeSet<String>,
    /// The session's project (`crate::project`), from its first root; `None` until known.
    pub project: Option<std::sync::Arc<str>>,
    /// Whether mws has asked the client for its roots (once per session).
    pub roots_asked: bool,
    last_seen: Instant,
}

/// A session and the sender whose drop ends its GET streams (`ended`).
struct Entry {
    session: LegacySession,
    end: watch::Sender<()>,
}

impl Entry {
    /// Used recently, or a GET stream open: not to be dropped for a newcomer.
    fn busy(&self, now: Instant) -> bool {
        now.duration_since(self.session.last_seen) <= SESSION_BUSY || self.end.receiver_count() > 0
    }
}

#[derive(Default)]
pub struct Sessions {
    map: Mutex<HashMap<String, Entry>>,
    /// Resource subscriptions of sessions that expired or were evicted, for the caller to let go
    /// of upstream (`take_orphaned`).
    orphaned: Mutex<Vec<String>>,
}

impl Sessions {
    /// Starts a session; returns its id, or `SessionsFull` when every session is in use.
    pub fn create(
        &self,
        client: Option<String>,
        version: &str,
        now: Instant,
    ) -> Result<String, SessionsFull> {
        let id = new_session_id();
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let mut gone = Vec::new();
        map.retain(|_, e| {
            let keep = now.duration_since(e.session.last_seen) <= SESSION_IDLE;
            if !keep {
                gone.extend(std::mem::take(&mut e.session.subscriptions));
            }
            keep
        });
        if map.len() >= MAX_SESSIONS {
            let idle = map
                .iter()
                .filter(|(_, e)| !e.busy(now))
                .min_by_key(|(_, e)| e.session.last_seen)
                .map(|(k, _)| k.clone());
            match idle.and_then(|k| map.remove(&k)) {
                Some(e) => gone.extend(e.session.subscriptions),
                None => {
                    drop(map);
                    self.orphan(gone);
                    return Err(SessionsFull);
                }
            }
        }
        self.orphan(gone);
        let session = LegacySession {
            client: client.as_deref().map(cap_client_name),
            version: version.to_string(),
            log_level: None,
            input: None,
            subscriptions: BTreeSet::new(),
            project: None,
            roots_asked: false,
            last_seen: now,
        };
        let end = watch::Sender::new(());
        map.insert(id.clone(), Entry { session, end });
        Ok(id)
    }

    /// The session with this id, touched; `None` when unknown or expired.
    pub fn get(&self, id: &str, now: Instant) -> Option<LegacySession> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let s = &mut map.get_mut(id)?.session;
        if now.duration_since(s.last_seen) > SESSION_IDLE {
            if let Some(e) = map.remove(id) {
                self.orphan(e.session.subscriptions);
            }
            return None;
        }
        s.last_seen = now;
        Some(s.clone())
    }

    /// A receiver whose `changed()` fails once the session ends (DELETE, expiry, eviction): the
    /// session's GET stream ends with it. `None` when the session is unknown.
    pub fn ended(&self, id: &str) -> Option<watch::Receiver<()>> {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get(id).map(|e| e.end.subscribe())
    }

    /// Records the session's `logging/setLevel`; false when the session is unknown.
    pub fn set_log_level(&self, id: &str, level: Level) -> bool {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get_mut(id)
            .map(|e| e.session.log_level = Some(level))
            .is_some()
    }

    /// Records the input capabilities the session's client declared in `initialize`.
    pub fn set_input(&self, id: &str, input: Option<std::sync::Arc<serde_json::Value>>) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = map.get_mut(id) {
            e.session.input = input;
        }
    }

    /// Marks the session's roots as asked for; true when this call is the first to (so exactly
    /// one request asks), false when they were asked already or the session is unknown.
    pub fn ask_roots_once(&self, id: &str) -> bool {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        match map.get_mut(id) {
            Some(e) if !e.session.roots_asked => {
                e.session.roots_asked = true;
                true
            }
            _ => false,
        }
    }

    /// Keeps the session's project (from its roots) for its later requests.
    pub fn set_project(&self, id: &str, project: Option<std::sync::Arc<str>>) {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = map.get_mut(id) {
            e.session.project = project;
        }
    }

    fn orphan(&self, uris: impl IntoIterator<Item = String>) {
        let mut o = self.orphaned.lock().unwrap_or_else(|e| e.into_inner());
        o.extend(uris);
    }

    /// The subscriptions of sessions that expired since the last call (one entry per session
    /// that held the URI).
    pub fn take_orphaned(&self) -> Vec<String> {
        std::mem::take(&mut *self.orphaned.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// Adds (`on`) or removes a resource subscription; `None` when the session is unknown, else
    /// whether the set changed.
    pub fn subscribe(&self, id: &str, uri: &str, on: bool) -> Option<bool> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        let subs = &mut map.get_mut(id)?.session.subscriptions;
        Some(if on {
            subs.insert(uri.to_string())
        } else {
            subs.remove(uri)
        })
    }

    /// Is the session subscribed to `uri`? (false when it is unknown)
    pub fn is_subscribed(&self, id: &str, uri: &str) -> bool {
        let map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.get(id)
            .is_some_and(|e| e.session.subscriptions.contains(uri))
    }

    /// Ends a session; false when it did not exist.
    pub fn remove(&self, id: &str) -> bool {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.remove(id).is_some()
    }

    /// Ends a session and hands back what it held; `None` when it did not exist.
    pub fn take(&self, id: &str) -> Option<LegacySession> {
        let mut map = self.map.lock().unwrap_or_else(|e| e.into_inner());
        map.remove(id).map(|e| e.session)
    }

    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// 128 random bits from the OS, as 32 hex digits (visible ASCII, as the spec requires).
pub fn new_session_id() -> String {
    let mut buf = [0u8; 16];
    let filled = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .is_ok();
    if !filled {
        // No /dev/urandom: fall back to the std hasher's per-process random keys.
        use std::hash::{BuildHasher, Hasher};
        let s = std::collections::hash_map::RandomState::new();
        for (i, chunk) in buf.chunks_mut(8).enumerate() {
            let mut h = s.build_hasher();
            h.write_usize(i);
            h.write_u128(Instant::now().elapsed().as_nanos());
            chunk.copy_from_slice(&h.finish().to_le_bytes());
        }
    }
    buf.iter().map(|b| format!("{b:02x}")).collect()
}

/// The version an `initialize` answer names: the client's when we speak it, else our newest legacy
/// one (initialize always selects legacy semantics: docs/protocol.md, Eras).
pub fn negotiate_legacy(requested: &str) -> &'static str {
    LEGACY_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LEGACY_VERSIONS[0])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lifecycle_and_expiry() {
        let s = Sessions::default();
        let t0 = Instant::now();
        let id = s
            .create(Some("codex-mcp-client".into()), "2025-06-18", t0)
            .unwrap();
        assert_eq!(id.len(), 32);
        assert_ne!(id, new_session_id());
        let got = s.get(&id, t0).unwrap();
        assert_eq!(got.client.as_deref(), Some("codex-mcp-client"));
        assert!(s.get("nope", t0).is_none());
        s.subscribe(&id, "test://kept", true);
        assert!(
            s.get(&id, t0 + SESSION_IDLE + Duration::from_secs(1))
                .is_none()
        );
        assert_eq!(
            s.take_orphaned(),
            ["test://kept"],
            "an expired session's URIs are let go"
        );
        assert!(s.take_orphaned().is_empty());
        let id = s.create(None, "2025-11-25", t0).unwrap();
        assert_eq!(s.get(&id, t0).unwrap().log_level, None);
        let debug = Level::parse("debug").unwrap();
        assert!(s.set_log_level(&id, debug));
        assert_eq!(s.get(&id, t0).unwrap().log_level, Some(debug));
        assert!(!s.set_log_level("nope", debug));
        assert_eq!(s.subscribe(&id, "test://a", true), Some(true));
        assert_eq!(s.subscribe(&id, "test://a", true), Some(false));
        assert!(s.is_subscribed(&id, "test://a"));
        assert!(!s.is_subscribed(&id, "test://b"));
        assert_eq!(s.subscribe("nope", "test://a", true), None);
        assert_eq!(s.subscribe(&id, "test://a", false), Some(true));
        assert!(!s.is_subscribed(&id, "test://a"));
        s.subscribe(&id, "test://a", true);
        assert_eq!(s.take(&id).map(|t| t.subscriptions.len()), Some(1));
        assert!(s.take(&id).is_none());
        let id = s.create(None, "2025-11-25", t0).unwrap();
        assert!(s.remove(&id));
        assert!(!s.remove(&id));
        assert!(s.is_empty());
    }

    #[test]
    fn a_full_table_drops_only_idle_sessions() {
        let s = Sessions::default();
        let t0 = Instant::now();
        let first = s.create(None, "2025-11-25", t0).unwrap();
        let streaming = s.create(None, "2025-11-25", t0).unwrap();
        let stream = s.ended(&streaming).unwrap();
        for _ in 2..MAX_SESSIONS {
            s.create(None, "2025-11-25", t0).unwrap();
        }
        assert!(s.create(None, "2025-11-25", t0).is_err(), "all in use");
        let later = t0 + SESSION_BUSY + Duration::from_secs(1);
        s.get(&first, later).unwrap();
        s.create(None, "2025-11-25", later).unwrap();
        assert!(s.get(&first, later).is_some(), "the used session stays");
        assert!(
            s.get(&streaming, later).is_some(),
            "so does a streaming one"
        );
        assert_eq!(s.len(), MAX_SESSIONS);
        drop(stream);
        assert!(s.take(&streaming).is_some());
        let name = format!("{}é", "n".repeat(MAX_CLIENT_NAME_BYTES - 1));
        assert_eq!(cap_client_name(&name).len(), MAX_CLIENT_NAME_BYTES - 1);
    }

    #[tokio::test]
    async fn ending_a_session_ends_its_streams() {
        let s = Sessions::default();
        let id = s.create(None, "2025-11-25", Instant::now()).unwrap();
        let mut ended = s.ended(&id).unwrap();
        assert!(s.remove(&id));
        assert!(ended.changed().await.is_err());
    }
}
