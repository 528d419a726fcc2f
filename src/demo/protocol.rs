//! The demo upstream's JSON-RPC layer: era detection (an `initialize` opens a legacy session, a
//! request with the 2026-07-28 `_meta` envelope is served statelessly), method dispatch, errors.
//! Pure: lines in, lines out; the tools themselves live in `tools`, the data in `state`.

use serde_json::{Map, Value, json};
use time::OffsetDateTime;

use super::content;
use super::tools::State;
use super::tools::{self, ToolError};
use crate::mcp::{
    LEGACY_VERSIONS, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, META_SERVER_INFO,
    MODERN_VERSION, RpcError, code,
};

/// Tools per `tools/list` page. Raising it means fewer round trips; lowering it exercises the
/// client's pagination harder (60 tools make 3 pages).
pub const TOOLS_PAGE_SIZE: usize = 25;

/// How long a modern client may cache list results, in ms. The demo catalog never changes.
const LIST_TTL_MS: u64 = 60_000;

pub const SERVER_NAME: &str = "mws-demo";

const INSTRUCTIONS: &str = "A demo workspace with mail, calendar, drive, a web browser and code \
    search. All data is fake and lives in memory; it resets when the server restarts.";

/// One connection's state: the data and what the client opened with.
pub struct Server {
    pub state: State,
    tools: Vec<Value>,
    /// Set by `initialize`: the negotiated legacy version.
    legacy_version: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Modern,
    Legacy,
}

impl Server {
    pub fn new(now: OffsetDateTime) -> Server {
        Server {
            state: State::seeded(now),
            tools: catalog_tools(),
            legacy_version: None,
        }
    }

    /// Handles one line of input; returns the reply line, if the message wants one.
    pub fn handle_line(&mut self, line: &str) -> Option<String> {
        let msg: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                return Some(error_line(
                    Value::Null,
                    RpcError::new(code::PARSE_ERROR, format!("parse error: {e}")),
                ));
            }
        };
        let reply = self.handle(msg)?;
        Some(reply.to_string())
    }

    /// Handles one parsed message; `None` for notifications and responses.
    pub fn handle(&mut self, msg: Value) -> Option<Value> {
        let Value::Object(obj) = msg else {
            return Some(error_value(
                Value::Null,
                RpcError::new(
                    code::INVALID_REQUEST,
                    "expected one JSON-RPC message object (batches are not supported)",
                ),
            ));
        };
        let method = obj.get("method").and_then(Value::as_str).map(str::to_owned);
        let id = obj.get("id").cloned();
        let Some(method) = method else {
            // A response to nothing we asked, or garbage with an id.
            return id
                .filter(|_| !obj.contains_key("result") && !obj.contains_key("error"))
                .map(|id| {
                    error_value(
                        id,
                        RpcError::new(code::INVALID_REQUEST, "missing \"method\""),
                    )
                });
        };
        let params = obj.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = id else {
            self.notification(&method);
            return None;
        };
        Some(match self.request(&method, &params) {
            Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
            Err(e) => error_value(id, e),
        })
    }

    fn notification(&mut self, _method: &str) {
        // notifications/initialized, cancelled, roots/list_changed: nothing to do for the demo.
    }

    fn request(&mut self, method: &str, params: &Value) -> Result<Value, RpcError> {
        if !(params.is_null() || params.is_object()) {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "\"params\" must be an object",
            ));
        }
        if method == "initialize" {
            return Ok(self.initialize(params));
        }
        let mode = self.mode(params)?;
        let mut result = match (method, mode) {
            ("server/discover", _) => self.discover(),
            ("ping", Mode::Legacy) => json!({}),
            ("logging/setLevel", Mode::Legacy) => json!({}),
            ("tools/list", _) => self.list_tools(params)?,
            ("tools/call", _) => self.call_tool(params)?,
            ("resources/list", _) => content::list_resources(),
            ("resources/templates/list", _) => content::list_resource_templates(),
            ("resources/read", _) => {
                content::read_resource(&self.state, params, mode == Mode::Modern)?
            }
            ("prompts/list", _) => content::list_prompts(),
            ("prompts/get", _) => content::get_prompt(&self.state, params)?,
            ("completion/complete", _) => content::complete(params)?,
            _ => {
                let mut e = RpcError::new(code::METHOD_NOT_FOUND, "Method not found");
                e.data = Some(Value::String(method.into()));
                return Err(e);
            }
        };
        if mode == Mode::Modern {
            decorate_modern(method, &mut result);
        }
        Ok(result)
    }

    /// Which era this request is in: the envelope wins; otherwise the legacy session, if open.
    fn mode(&self, params: &Value) -> Result<Mode, RpcError> {
        let meta = params.get("_meta");
        let version = meta
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str);
        match version {
            Some(v) if v == MODERN_VERSION => {
                if meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES)).is_none() {
                    return Err(RpcError::new(
                        code::INVALID_PARAMS,
                        format!("missing _meta[\"{META_CLIENT_CAPABILITIES}\"]"),
                    ));
                }
                Ok(Mode::Modern)
            }
            Some(v) if self.legacy_version.is_some() && LEGACY_VERSIONS.contains(&v) => {
                Ok(Mode::Legacy)
            }
            Some(v) => {
                let mut e =
                    RpcError::new(code::UNSUPPORTED_VERSION, "Unsupported protocol version");
                e.data = Some(json!({"supported": supported_versions(), "requested": v}));
                Err(e)
            }
            _ if self.legacy_version.is_some() => Ok(Mode::Legacy),
            _ => Err(RpcError::new(
                code::INVALID_PARAMS,
                format!(
                    "no session: send \"initialize\" first, or put \
                     _meta[\"{META_PROTOCOL_VERSION}\"] = \"{MODERN_VERSION}\" on each request"
                ),
            )),
        }
    }

    fn initialize(&mut self, params: &Value) -> Value {
        let asked = params.get("protocolVersion").and_then(Value::as_str);
        let version = match asked {
            Some(v) if LEGACY_VERSIONS.contains(&v) => v,
            _ => LEGACY_VERSIONS[0],
        };
        self.legacy_version = Some(version.to_string());
        json!({
            "protocolVersion": version,
            "capabilities": capabilities(),
            "serverInfo": server_info(),
            "instructions": INSTRUCTIONS,
        })
    }

    fn discover(&self) -> Value {
        json!({
            "supportedVersions": supported_versions(),
            "capabilities": capabilities(),
            "instructions": INSTRUCTIONS,
        })
    }

    fn list_tools(&self, params: &Value) -> Result<Value, RpcError> {
        let start = match params.get("cursor") {
            None | Some(Value::Null) => 0,
            Some(Value::String(c)) => parse_cursor(c, self.tools.len())?,
            Some(_) => {
                return Err(RpcError::new(
                    code::INVALID_PARAMS,
                    "cursor must be a string",
                ));
            }
        };
        let end = (start + TOOLS_PAGE_SIZE).min(self.tools.len());
        let mut result = Map::new();
        result.insert(
            "tools".into(),
            Value::Array(self.tools[start..end].to_vec()),
        );
        if end < self.tools.len() {
            result.insert("nextCursor".into(), Value::String(format!("page:{end}")));
        }
        Ok(Value::Object(result))
    }

    fn call_tool(&mut self, params: &Value) -> Result<Value, RpcError> {
        let name = params.get("name").and_then(Value::as_str).ok_or_else(|| {
            RpcError::new(code::INVALID_PARAMS, "tools/call needs a string \"name\"")
        })?;
        let tool = self
            .tools
            .iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .ok_or_else(|| RpcError::new(code::INVALID_PARAMS, format!("unknown tool: {name}")))?;
        let empty = Map::new();
        let args = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(Value::Object(m)) => m,
            Some(_) => {
                return Err(RpcError::new(
                    code::INVALID_PARAMS,
                    "\"arguments\" must be an object",
                ));
            }
        };
        tools::check_args(tool, args).map_err(|m| RpcError::new(code::INVALID_PARAMS, m))?;
        Ok(match tools::call(&mut self.state, name, args) {
            Ok(out) => out.into_result(),
            Err(ToolError::Failed(message)) => json!({
                "content": [{"type": "text", "text": message}],
                "isError": true,
            }),
            Err(ToolError::BadParams(message)) => {
                return Err(RpcError::new(code::INVALID_PARAMS, message));
            }
        })
    }
}

/// The embedded catalog's tool objects, in file order.
pub fn catalog_tools() -> Vec<Value> {
    let v: Value = serde_json::from_str(super::CATALOG_JSON).expect("embedded catalog is JSON");
    crate::catalog::Catalog::from_value(v)
        .expect("embedded catalog has a tools array")
        .tools()
        .to_vec()
}

fn parse_cursor(c: &str, len: usize) -> Result<usize, RpcError> {
    c.strip_prefix("page:")
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|&n| n < len)
        .ok_or_else(|| RpcError::new(code::INVALID_PARAMS, format!("invalid cursor: {c:?}")))
}

fn supported_versions() -> Vec<&'static str> {
    let mut v = vec![MODERN_VERSION];
    v.extend_from_slice(LEGACY_VERSIONS);
    v
}

fn capabilities() -> Value {
    json!({
        "tools": {"listChanged": false},
        "resources": {},
        "prompts": {"listChanged": false},
        "completions": {},
    })
}

fn server_info() -> Value {
    json!({"name": SERVER_NAME, "version": env!("CARGO_PKG_VERSION")})
}

/// Adds what 2026-07-28 results must carry: `resultType`, serverInfo, and cache hints on lists.
fn decorate_modern(method: &str, result: &mut Value) {
    let Value::Object(m) = result else { return };
    m.insert("resultType".into(), json!("complete"));
    let cacheable = matches!(
        method,
        "server/discover"
            | "tools/list"
            | "prompts/list"
            | "resources/list"
            | "resources/read"
            | "resources/templates/list"
    );
    if cacheable {
        m.insert("ttlMs".into(), json!(LIST_TTL_MS));
        m.insert("cacheScope".into(), json!("public"));
    }
    let meta = m.entry("_meta").or_insert_with(|| json!({}));
    if let Value::Object(meta) = meta {
        meta.insert(META_SERVER_INFO.into(), server_info());
    }
}

fn error_value(id: Value, e: RpcError) -> Value {
    let mut err = json!({"code": e.code, "message": e.message});
    if let Some(data) = e.data {
        err["data"] = data;
    }
    json!({"jsonrpc": "2.0", "id": id, "error": err})
}

fn error_line(id: Value, e: RpcError) -> String {
    error_value(id, e).to_string()
}
