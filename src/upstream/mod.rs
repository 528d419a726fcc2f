//! Talking to the upstream MCP server (SPEC §5): the `Upstream` interface the proxy serves from, and
//! its implementations (HTTP modern + legacy, stdio child) with negotiation and the catalog cache.
//! Must not know about downstream clients beyond the `CallContext` they hand in.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::mcp::Era;

/// Where the catalog being served came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogSource {
    /// Listed by the upstream within the catalog TTL.
    Live,
    /// The last good list, kept in memory (the upstream failed or is being asked again).
    Memory,
    /// `stateDir/catalog.json` from an earlier run.
    Disk,
    /// Nothing at all: only the meta-tools can be listed.
    None,
}

/// The catalog to serve right now.
#[derive(Debug, Clone)]
pub struct CatalogSnapshot {
    pub catalog: Arc<Catalog>,
    pub source: CatalogSource,
    /// Changes whenever the catalog's content changes; the search index is rebuilt per version.
    pub version: u64,
}

/// What the proxy knows of the upstream (for instructions, `server/discover`, report and doctor).
#[derive(Debug, Clone, Default)]
pub struct UpstreamStatus {
    pub era: Option<Era>,
    pub protocol_version: Option<String>,
    pub server_info: Option<Value>,
    pub capabilities: Option<Value>,
    pub instructions: Option<String>,
    pub reachable: bool,
    pub last_error: Option<String>,
}

/// Who is calling, passed from the downstream request to the upstream one.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// The calling client's name (`claude-code`, `codex-mcp-client`, ...).
    pub client: Option<String>,
    /// The client's request `_meta` minus the era envelope keys (progress tokens, call ids, ...).
    pub meta: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, thiserror::Error)]
pub enum UpstreamError {
    /// The upstream answered with a JSON-RPC error: passed to the client as is.
    #[error("upstream error {code}: {message}")]
    Rpc {
        code: i64,
        message: String,
        data: Option<Value>,
    },
    #[error("upstream did not answer within {0:?}")]
    Timeout(Duration),
    #[error("upstream unavailable: {0}")]
    Unavailable(String),
    /// A call landed on an expired legacy session; it is not retried (calls may have side effects).
    #[error("upstream session expired; the call was not retried")]
    SessionExpired,
    #[error("upstream protocol error: {0}")]
    Protocol(String),
}

/// The upstream as the proxy sees it.
#[async_trait::async_trait]
pub trait Upstream: Send + Sync + 'static {
    /// The catalog to serve now. Answers at once from memory or `catalog.json` when it has one and
    /// revalidates in the background; waits at most `listMs` otherwise.
    async fn catalog(&self) -> CatalogSnapshot;

    /// Sends one request (`tools/call`, `resources/read`, `prompts/get`, ...) and returns the
    /// upstream's `result` object as sent.
    async fn request(
        &self,
        method: &str,
        params: Value,
        ctx: &CallContext,
    ) -> Result<Value, UpstreamError>;

    /// Sends a notification (e.g. `notifications/cancelled`).
    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), UpstreamError>;

    fn status(&self) -> UpstreamStatus;

    /// Fires with a new catalog version when the upstream's catalog changes (`list_changed`, or a
    /// refresh that found a different list).
    fn changes(&self) -> tokio::sync::watch::Receiver<u64>;
}

/// Connects to the configured upstream (HTTP or stdio child). Returns at once: negotiation and
/// the first list happen in the background, and `catalog()` serves `catalog.json` meanwhile.
pub fn connect(config: &crate::config::Config) -> Arc<dyn Upstream> {
    Arc::new(Unconnected {
        reason: format!("upstream support is not built yet ({:?})", config.upstream),
        changes: tokio::sync::watch::channel(0).1,
    })
}

/// Placeholder until the HTTP and stdio implementations land: always unavailable.
struct Unconnected {
    reason: String,
    changes: tokio::sync::watch::Receiver<u64>,
}

#[async_trait::async_trait]
impl Upstream for Unconnected {
    async fn catalog(&self) -> CatalogSnapshot {
        CatalogSnapshot {
            catalog: Arc::new(Catalog::default()),
            source: CatalogSource::None,
            version: 0,
        }
    }
    async fn request(&self, _: &str, _: Value, _: &CallContext) -> Result<Value, UpstreamError> {
        Err(UpstreamError::Unavailable(self.reason.clone()))
    }
    async fn notify(&self, _: &str, _: Option<Value>) -> Result<(), UpstreamError> {
        Err(UpstreamError::Unavailable(self.reason.clone()))
    }
    fn status(&self) -> UpstreamStatus {
        UpstreamStatus {
            last_error: Some(self.reason.clone()),
            ..UpstreamStatus::default()
        }
    }
    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.clone()
    }
}
