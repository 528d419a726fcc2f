//! Talking to the upstream (docs/protocol.md). This file is the base: the `Upstream` interface the
//! proxy serves from, its errors, `CallContext` and the catalog snapshot. The folders below it are
//! the wires (`http/`, `stdio/`), one connection (`conn/`), one server (`remote/`) and several
//! (`fleet/`, whose `connect` picks between them). Must not know about downstream clients beyond
//! the `CallContext` they hand in.

pub mod approvals;
mod cache;
mod conn;
/// A test double (`feature = "test-support"`); `mws serve` never uses it.
#[cfg(any(test, feature = "test-support"))]
pub mod fake;
pub mod fleet;
pub mod held;
mod http;
pub mod redact;
pub mod related;
mod remembered;
mod remote;
mod resume;
mod stdio;
mod stopped;
mod wire;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::config::Config;
use crate::mcp::Era;
use crate::mcp::raw::Answer;

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

impl CatalogSource {
    /// As `mws report` and the status page name it: `live`, `memory`, `catalog.json`, `none`.
    pub fn name(self) -> &'static str {
        match self {
            CatalogSource::Live => "live",
            CatalogSource::Memory => "memory",
            CatalogSource::Disk => "catalog.json",
            CatalogSource::None => "none",
        }
    }
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
    /// The last error was `UpstreamError::NeedsLogin`: the fix is `mws login`, not a restart.
    pub needs_login: bool,
    /// The upstream answered `tools/list` with something unusable (not a tools array, an
    /// error): what and what was expected. Kept until a list succeeds, even while calls do.
    pub list_error: Option<String>,
    /// With `servers`: each server's own state, in config order (empty with `upstream`).
    pub servers: Vec<ServerState>,
}

/// One server behind mws (`servers`), for the instructions, `mws doctor` and `mws report`.
#[derive(Debug, Clone, Default)]
pub struct ServerState {
    pub name: String,
    /// Its URL or command line, credentials masked.
    pub target: String,
    pub status: UpstreamStatus,
    /// Tools it has in the catalog being served.
    pub tools: usize,
    /// Why it was not started (an unset `${VAR}`, a refused URL).
    pub start_error: Option<String>,
    /// (exposed, `<server>__<tool>`) for each name shortened to fit the client's limit.
    pub shortened: Vec<(String, String)>,
    /// Duplicate tools, tools named like a meta-tool, names already taken.
    pub warnings: Vec<String>,
}

impl ServerState {
    /// Not started, or its last contact failed.
    pub fn down(&self) -> bool {
        self.start_error.is_some() || (!self.status.reachable && self.status.last_error.is_some())
    }
}

/// Who is calling, passed from the downstream request to the upstream one.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    /// The calling client's name (`claude-code`, `codex-mcp-client`, ...).
    pub client: Option<String>,
    /// The client's request `_meta` minus the era envelope keys (progress tokens, call ids, ...).
    pub meta: Option<Map<String, Value>>,
    /// A 2026-07-28 client's declared `clientCapabilities`, sent on in the modern envelope so the
    /// upstream asks (InputRequiredResult) only for what the client can answer. `None`: `{}`.
    pub client_capabilities: Option<Value>,
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
    /// No answer in time; `server` names the server of several it was sent to.
    #[error("{} did not answer within {after:?}", server.as_deref().map_or("upstream".into(), |s| format!("server \"{s}\"")))]
    Timeout {
        after: Duration,
        server: Option<String>,
    },
    #[error("upstream unavailable: {0}")]
    Unavailable(String),
    /// The server needs an OAuth login (`mws login`); `server` names the server of several.
    #[error("{} needs a login: {why}", server.as_deref().map_or("the upstream".into(), |s| format!("server \"{s}\"")))]
    NeedsLogin { server: Option<String>, why: String },
    /// A call landed on an expired legacy session; it is not retried (calls may have side effects).
    #[error("upstream session expired; the call was not retried")]
    SessionExpired,
    #[error("upstream protocol error: {0}")]
    Protocol(String),
    /// mws is stopping: the request was cancelled (or never sent).
    #[error("mws is shutting down; the request was cancelled")]
    ShuttingDown,
    /// The tool's definition is held until the user approves it (`approvals`): never sent.
    #[error("{}", .0.message())]
    Held(crate::catalog::definitions::HeldTool),
}

/// The name `mws login` knows the single `upstream` by.
pub const LOGIN_NAME: &str = "upstream";

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

    /// `request("tools/call", params, ctx)` for a caller that can pass the result on as sent:
    /// where the upstream's transport keeps it so (`Wire::request_result`), `Answer::Raw`.
    async fn call_tool(&self, params: Value, ctx: &CallContext) -> Result<Answer, UpstreamError> {
        self.request("tools/call", params, ctx)
            .await
            .map(Answer::Tree)
    }

    /// Sends a notification (e.g. `notifications/cancelled`).
    async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), UpstreamError>;

    fn status(&self) -> UpstreamStatus;

    /// Can a call's own log messages be told apart and handed to its caller (`related`)? Over an
    /// HTTP upstream that offers `logging`: its messages come on the call's own response stream
    /// (a stdio child's carry nothing that ties them to a call).
    fn relays_logs(&self) -> bool {
        false
    }

    /// mws is stopping: every request in flight ends at once with `ShuttingDown` (the upstream is
    /// told it is cancelled where the era allows), and so does every later one.
    fn shutdown(&self) {}

    /// mws is exiting, after `shutdown` and the last replies: ends the upstream politely (a stdio
    /// child's input is closed, then it is given `CHILD_EXIT_WAIT` before it is killed).
    async fn close(&self) {}

    /// Fires with a new catalog version when the upstream's catalog changes (`list_changed`, or a
    /// refresh that found a different list).
    fn changes(&self) -> tokio::sync::watch::Receiver<u64>;

    /// Every other notification the upstream sends (`notifications/progress` carrying the
    /// client's forwarded `progressToken`, `notifications/message`, resource updates), for the
    /// server to route to the client it belongs to. Lagging receivers lose the oldest.
    fn notifications(&self) -> tokio::sync::broadcast::Receiver<Value> {
        tokio::sync::broadcast::channel(1).1
    }

    /// One client subscribes to (`on`) or lets go of resource `uri`; its
    /// `notifications/resources/updated` then arrive on `notifications()`. Refcounted: only the
    /// first subscriber and the last to leave reach the upstream.
    async fn resource_subscription(&self, _uri: &str, _on: bool) -> Result<(), UpstreamError> {
        Err(UpstreamError::Unavailable(
            "this upstream does not relay resource subscriptions".into(),
        ))
    }
}

/// The configured upstream as a user would recognise it: the URL, or the command line, with
/// credentials masked (`redact`).
pub fn target(config: &Config) -> String {
    if !config.servers.is_empty() {
        let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
        return format!("{} servers ({})", names.len(), names.join(", "));
    }
    match &config.upstream {
        crate::config::Upstream::Http(h) => redact::url(&h.url),
        crate::config::Upstream::Stdio(s) => redact::text(
            &std::iter::once(s.command.as_str())
                .chain(s.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        ),
    }
}

/// The upstream's last known identity, beside `catalog.json` in the state dir.
pub const REMEMBERED_FILE: &str = "upstream.json";

/// The most mws buffers of one upstream message: an HTTP answer body, one SSE event, one stdio
/// line. The largest real tool results (a file or an image as base64) are a few MB; 32 MiB leaves
/// room for those while a runaway upstream costs at most a few times this much memory (the bytes,
/// the parsed value, the reply). Raising it admits bigger answers at that memory cost; an answer
/// over it fails its call with an error naming the cap.
pub const MAX_MESSAGE_BYTES: usize = 32 * 1024 * 1024;

/// `MAX_MESSAGE_BYTES` in words for error messages ("32 MiB").
fn cap_text() -> String {
    format!("{} MiB", MAX_MESSAGE_BYTES / (1024 * 1024))
}

/// Upstream notifications buffered per slow receiver before the oldest are dropped.
const NOTIFICATION_BUFFER: usize = 256;

/// `tools/list` pages followed at most; a server whose cursors never end is cut off here.
const MAX_PAGES: usize = 1_000;

/// The catalog of an upstream that has none: only the meta-tools can be listed.
pub(crate) fn empty_snapshot() -> CatalogSnapshot {
    CatalogSnapshot {
        catalog: Arc::new(Catalog::default()),
        source: CatalogSource::None,
        version: 0,
    }
}
