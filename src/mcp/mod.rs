//! JSON-RPC and MCP wire basics shared by both sides of the proxy: protocol versions, eras, error
//! codes and message builders. Messages stay `serde_json::Value` so that bytes pass through
//! faithfully; this module only names things. Must not do I/O.

use std::sync::Arc;

use serde_json::{Map, Value, json};

/// The stateless revision.
pub const MODERN_VERSION: &str = "2026-07-28";
/// Session-based revisions we serve and speak, newest first.
pub const LEGACY_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];
/// Every revision we accept, newest first.
pub const SUPPORTED_VERSIONS: &[&str] = &["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"];

/// `_meta` keys of the 2026-07-28 per-request envelope.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// Tool `_meta` key that makes Claude Code load a tool up front instead of deferring it.
pub const META_ALWAYS_LOAD: &str = "anthropic/alwaysLoad";

/// Sets `_meta["anthropic/alwaysLoad"] = true`, keeping any other `_meta` keys.
pub fn mark_always_load(tool: &mut Map<String, Value>) {
    let meta = tool
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    if let Some(m) = meta.as_object_mut() {
        m.insert(META_ALWAYS_LOAD.into(), Value::Bool(true));
    }
}

/// JSON-RPC and MCP error codes.
pub mod code {
    pub const PARSE_ERROR: i64 = -32700;
    pub const INVALID_REQUEST: i64 = -32600;
    pub const METHOD_NOT_FOUND: i64 = -32601;
    pub const INVALID_PARAMS: i64 = -32602;
    pub const INTERNAL_ERROR: i64 = -32603;
    /// 2026-07-28: an HTTP header disagrees with the body.
    pub const HEADER_MISMATCH: i64 = -32020;
    /// 2026-07-28: the request needs a capability the client did not declare.
    pub const MISSING_CAPABILITY: i64 = -32021;
    /// 2026-07-28: unsupported protocol version (`data.supported` lists ours).
    pub const UNSUPPORTED_VERSION: i64 = -32022;
    /// 2025 sessions: the `Mcp-Session-Id` names no session (it ended or expired; HTTP 404).
    pub const SESSION_NOT_FOUND: i64 = -32001;
    /// 2025: `resources/read` of a URI the server does not have (2026-07-28 uses
    /// `INVALID_PARAMS` instead).
    pub const RESOURCE_NOT_FOUND: i64 = -32002;
}

/// Which protocol generation a peer speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// 2026-07-28: stateless, `server/discover`, per-request `_meta` envelope.
    Modern,
    /// 2025-03-26 .. 2025-11-25: `initialize` and `Mcp-Session-Id` sessions.
    Legacy,
}

impl Era {
    pub fn of_version(v: &str) -> Era {
        if v >= MODERN_VERSION {
            Era::Modern
        } else {
            Era::Legacy
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Era::Modern => "2026-07-28 (stateless)",
            Era::Legacy => "2025 (session)",
        }
    }
}

/// A JSON-RPC error before it is wrapped with the request id (`error_response` wraps it).
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The JSON-RPC error response to request `id`.
    pub fn response(self, id: &Value) -> Value {
        error_response(id, self.code, &self.message, self.data)
    }
}

/// Who sent a message to mws, as the transport knows it.
#[derive(Debug, Clone)]
pub struct Caller {
    pub era: Era,
    /// Client name (`_meta` clientInfo, `initialize` clientInfo, else User-Agent).
    pub client: Option<String>,
    /// The proxy session (legacy `Mcp-Session-Id`, one `--stdio` connection); `None` for stateless
    /// clients, whose session is their name plus an idle gap (`server::STATELESS_SESSION_GAP`).
    pub session: Option<String>,
    /// A legacy session client's `sampling`/`elicitation`/`roots` capabilities, set only on a
    /// request whose input requests mws can relay to it (`server/answer/input.rs`); told to the upstream.
    pub input: Option<Arc<Value>>,
    /// The project the session works in (`crate::project`): a `--stdio` child's working
    /// directory, an HTTP session's first root; `None` where unknown.
    pub project: Option<Arc<str>>,
}

/// The length of `v` as JSON text, without building the text.
pub fn json_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len();
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// A JSON-RPC success response.
pub fn response(id: &Value, result: Value) -> Value {
    rpc_message(id, "result", result)
}

/// `{"jsonrpc": "2.0", "id": id, <key>: value}`, with `value` moved in: `json!` would serialize a
/// `Value` argument into a deep copy, which for a tool result or a forwarded request was the
/// largest allocation cost of a proxied call.
fn rpc_message(id: &Value, key: &str, value: Value) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), Value::String("2.0".into()));
    m.insert("id".into(), id.clone());
    m.insert(key.into(), value);
    Value::Object(m)
}

/// A JSON-RPC error response (`id` is `null` when the request's id could not be read).
pub fn error_response(id: &Value, code: i64, message: &str, data: Option<Value>) -> Value {
    let mut err = Map::new();
    err.insert("code".into(), json!(code));
    err.insert("message".into(), json!(message));
    if let Some(d) = data {
        err.insert("data".into(), d);
    }
    rpc_message(id, "error", Value::Object(err))
}

/// A JSON-RPC request.
pub fn request(id: &Value, method: &str, params: Value) -> Value {
    let mut m = Map::with_capacity(4);
    m.insert("jsonrpc".into(), Value::String("2.0".into()));
    m.insert("id".into(), id.clone());
    m.insert("method".into(), Value::String(method.into()));
    m.insert("params".into(), params);
    Value::Object(m)
}

/// A JSON-RPC notification.
pub fn notification(method: &str, params: Option<Value>) -> Value {
    let mut m = Map::with_capacity(3);
    m.insert("jsonrpc".into(), Value::String("2.0".into()));
    m.insert("method".into(), Value::String(method.into()));
    if let Some(p) = params {
        m.insert("params".into(), p);
    }
    Value::Object(m)
}

pub mod caps;
pub mod check;
pub mod deep;
pub mod envelope;
pub mod raw;
pub mod sse;
