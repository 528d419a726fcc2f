//! The upstream's catalog kept fresh: listing every `tools/list` page within `listMs` (the first
//! listing, which waits for the server to start, within `firstStartMs`), held to
//! `MAX_LISTING_TOOLS` and `MAX_LISTING_BYTES` in all, storing the result in the cache,
//! refreshing on `list_changed`, and saying what is wrong with an answer that is no tool list.
//! Must not know about downstream clients.

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::upstream::conn::Call;
use crate::upstream::{CallContext, MAX_PAGES, UpstreamError};

/// Tools one listing of one server may hold: a server that passes it (endless cursors, or a
/// catalog no client could use) fails the listing and its last good catalog is served. Raising
/// it admits larger catalogs, at about 1 KB of memory per tool while listing.
pub const MAX_LISTING_TOOLS: usize = 10_000;

/// Bytes of tool JSON one listing of one server may hold, its pages together (one page is also
/// held to `MAX_MESSAGE_BYTES`). 10,000 tools of real servers take about 15 MiB. Raising it
/// admits larger catalogs, at about twice the raise in peak memory while the last page is parsed
/// beside the pages before it (the endless-cursor bench's peak).
pub const MAX_LISTING_BYTES: usize = 16 * 1024 * 1024;

/// One server's connection and catalog cache, as `Remote` and its refresh task share them.
pub(super) struct Inner {
    pub(super) conn: crate::upstream::conn::Conn,
    pub(super) cache: crate::upstream::cache::Cache,
    /// One refresh at a time; others wait for it or (in the background) skip.
    pub(super) refreshing: tokio::sync::Mutex<()>,
    pub(super) list_budget: Duration,
    /// The first listing's budget, the server's start included (`timeouts.firstStartMs`).
    pub(super) first_start_budget: Duration,
    /// Set once the first listing has been tried: later ones get `list_budget`.
    pub(super) listed_once: std::sync::atomic::AtomicBool,
    pub(super) call_budget: Duration,
    pub(super) notes: tokio::sync::broadcast::Sender<Value>,
    /// `target(config)`, for messages.
    pub(super) target: String,
    /// Its name among `servers` (`None`: the single upstream), for warnings.
    pub(super) server: Option<String>,
}

impl Inner {
    pub(super) fn notification(self: &Arc<Self>, msg: &Value) {
        if msg.get("method").and_then(Value::as_str) == Some("notifications/tools/list_changed") {
            tracing::info!("upstream tool list changed; listing again");
            self.cache.invalidate();
            spawn_refresh(Arc::downgrade(self));
        } else {
            let _ = self.notes.send(msg.clone());
        }
    }

    /// Lists the upstream and stores the result. `wait`: queue behind a running refresh rather
    /// than skip (the caller has nothing to serve meanwhile).
    pub(super) async fn refresh(&self, wait: bool) {
        let _guard = if wait {
            self.refreshing.lock().await
        } else {
            match self.refreshing.try_lock() {
                Ok(g) => g,
                Err(_) => return,
            }
        };
        if wait && self.cache.snapshot(Instant::now()).is_some() {
            return; // the refresh we queued behind found something
        }
        match self.list_all().await {
            Ok(tools) => {
                self.conn.note_list_error(None);
                self.cache.store(tools, Instant::now());
            }
            Err(e) => {
                match &self.server {
                    Some(name) => {
                        tracing::warn!("listing the tools of server \"{name}\" failed: {e}")
                    }
                    None => tracing::warn!("listing the upstream's tools failed: {e}"),
                }
                // It answered, but not with a usable list: say what, not "down".
                let answered = match &e {
                    UpstreamError::Protocol(m) => Some(m.clone()),
                    UpstreamError::Rpc { .. } => Some(format!(
                        "upstream {} answered tools/list with an error: {e}",
                        self.target
                    )),
                    _ => None,
                };
                if answered.is_some() {
                    self.conn.note_list_error(answered);
                }
                self.cache.failed(Instant::now());
            }
        }
    }

    async fn list_all(&self) -> Result<Vec<Value>, UpstreamError> {
        let first = !self
            .listed_once
            .swap(true, std::sync::atomic::Ordering::Relaxed);
        let budget = if first {
            self.first_start_budget
        } else {
            self.list_budget
        };
        let work = async {
            let mut tools = Vec::new();
            let mut bytes = 0;
            let mut cursor: Option<Value> = None;
            for _ in 0..MAX_PAGES {
                let params = match &cursor {
                    Some(c) => serde_json::json!({ "cursor": c }),
                    None => serde_json::json!({}),
                };
                let ctx = CallContext::default();
                let call = Call {
                    budget,
                    reopen: true,
                    param_headers: &[],
                };
                let mut result = self.conn.request("tools/list", params, &ctx, call).await?;
                match result.get_mut("tools").map(Value::take) {
                    Some(Value::Array(page)) => {
                        bytes += page.iter().map(crate::mcp::json_len).sum::<usize>();
                        tools.extend(page);
                    }
                    other => return Err(self.bad_list(&result, other.as_ref())),
                }
                if tools.len() > MAX_LISTING_TOOLS {
                    return Err(self.over_cap(format!("{MAX_LISTING_TOOLS} tools")));
                }
                if bytes > MAX_LISTING_BYTES {
                    return Err(self.over_cap(format!("{} MiB", MAX_LISTING_BYTES >> 20)));
                }
                match result.get("nextCursor") {
                    Some(c)
                        if !c.is_null() && c.as_str() != Some("") && Some(c) != cursor.as_ref() =>
                    {
                        cursor = Some(c.clone())
                    }
                    _ => return Ok(tools),
                }
            }
            Err(UpstreamError::Protocol(format!(
                "tools/list did not end after {MAX_PAGES} pages"
            )))
        };
        let r = tokio::time::timeout(budget, work)
            .await
            .unwrap_or(Err(UpstreamError::Timeout {
                after: budget,
                server: None,
            }));
        if let Err(e) = &r {
            self.conn.note_error(e);
        }
        r
    }
}

impl Inner {
    /// The failure of a listing that passed `cap` (its pages together).
    fn over_cap(&self, cap: String) -> UpstreamError {
        UpstreamError::Protocol(format!(
            "upstream {} listed more than {cap} (the cap on one server's tools/list, its pages \
             together); mws stopped asking for pages and serves its last good catalog",
            self.target
        ))
    }

    /// What is wrong with a `tools/list` result whose `tools` is `tools`.
    fn bad_list(&self, result: &Value, tools: Option<&Value>) -> UpstreamError {
        use crate::catalog::check::kind;
        let what = match (result, tools) {
            (Value::Object(_), Some(t)) => format!("\"tools\" {}", kind(t)),
            (Value::Object(_), None) => "a result without \"tools\"".to_string(),
            (other, _) => format!("{} as its result", kind(other)),
        };
        UpstreamError::Protocol(format!(
            "upstream {} answered tools/list with {what}: expected an array of tool objects",
            self.target
        ))
    }
}

pub(super) fn spawn_refresh(inner: Weak<Inner>) {
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(async move {
            if let Some(inner) = inner.upgrade() {
                inner.refresh(false).await;
            }
        });
    }
}
