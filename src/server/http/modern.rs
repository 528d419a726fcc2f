//! The 2026-07-28 (stateless) side of the downstream: which messages are modern, and validation of
//! the per-request `_meta` envelope and the `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name`
//! headers (base64 sentinel decoded) with the modern error codes. Pure: transports pass headers in.

use base64::Engine;
use serde_json::{Map, Value, json};

use crate::mcp::{
    META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION, MODERN_VERSION, RpcError,
    SUPPORTED_VERSIONS, code,
};

/// The modern revisions we serve.
pub const MODERN_VERSIONS: &[&str] = &[MODERN_VERSION];

/// The MCP headers of an HTTP request, raw (not yet decoded).
#[derive(Debug, Clone, Default)]
pub struct McpHeaders {
    pub protocol_version: Option<String>,
    pub method: Option<String>,
    pub name: Option<String>,
}

/// A validated modern request.
#[derive(Debug, Clone, PartialEq)]
pub struct Envelope {
    pub version: String,
    /// `clientInfo.name` from the envelope.
    pub client: Option<String>,
}

/// Decodes a header value: surrounding whitespace dropped, `=?base64?...?=` decoded as UTF-8.
pub fn decode_header(raw: &str) -> Result<String, String> {
    let v = raw.trim_matches([' ', '\t']);
    match v
        .strip_prefix("=?base64?")
        .and_then(|r| r.strip_suffix("?="))
    {
        Some(b64) => base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("bad base64 header value: {e}"))
            .and_then(|b| {
                String::from_utf8(b).map_err(|e| format!("header value is not UTF-8: {e}"))
            }),
        None => Ok(v.to_string()),
    }
}

fn meta(msg: &Map<String, Value>) -> Option<&Map<String, Value>> {
    msg.get("params")?.get("_meta")?.as_object()
}

/// True when a message is served statelessly: it carries the modern envelope, or (HTTP) its
/// `MCP-Protocol-Version` header names a modern revision. `initialize` is legacy unless it carries
/// the modern envelope (then it is a removed method: 404 with -32601).
pub fn is_modern(msg: &Map<String, Value>, header_version: Option<&str>) -> bool {
    if meta(msg).is_some_and(|m| m.contains_key(META_PROTOCOL_VERSION)) {
        return true;
    }
    if msg.get("method").and_then(Value::as_str) == Some("initialize") {
        return false;
    }
    header_version
        .and_then(|h| decode_header(h).ok())
        .is_some_and(|v| v.as_str() >= MODERN_VERSION)
}

fn mismatch(message: String) -> RpcError {
    RpcError::new(code::HEADER_MISMATCH, format!("Header mismatch: {message}"))
}

/// Validates a modern request. `headers` is `None` on stdio (no headers to check).
pub fn validate(
    msg: &Map<String, Value>,
    headers: Option<&McpHeaders>,
) -> Result<Envelope, RpcError> {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let m = meta(msg);
    let version = envelope_version(m)?;
    // A header that disagrees with the body is a mismatch even when the body's version is one we
    // do not serve (the header is what intermediaries route on).
    if let Some(h) = headers
        && h.protocol_version.is_some()
    {
        check(
            &h.protocol_version,
            version,
            "MCP-Protocol-Version",
            "protocol version",
        )?;
    }
    if !MODERN_VERSIONS.contains(&version) {
        return Err(RpcError {
            code: code::UNSUPPORTED_VERSION,
            message: "Unsupported protocol version".into(),
            data: Some(json!({"supported": SUPPORTED_VERSIONS, "requested": version})),
        });
    }
    if !m.is_some_and(|m| {
        m.get(META_CLIENT_CAPABILITIES)
            .is_some_and(Value::is_object)
    }) {
        return Err(RpcError::new(
            code::INVALID_PARAMS,
            format!("invalid params: missing params._meta[\"{META_CLIENT_CAPABILITIES}\"]"),
        ));
    }
    if let Some(h) = headers {
        check_headers(h, msg, method, version)?;
    }
    let client = m
        .and_then(|m| m.get(META_CLIENT_INFO))
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str)
        .map(String::from);
    Ok(Envelope {
        version: version.to_string(),
        client,
    })
}

/// The protocol version the envelope names (`params._meta`), or why it names none.
fn envelope_version(m: Option<&Map<String, Value>>) -> Result<&str, RpcError> {
    match m.and_then(|m| m.get(META_PROTOCOL_VERSION)) {
        Some(Value::String(v)) => Ok(v.as_str()),
        Some(other) => Err(RpcError::new(
            code::INVALID_PARAMS,
            format!(
                "invalid params: params._meta[\"{META_PROTOCOL_VERSION}\"] must be a string, \
                 not {}",
                crate::mcp::check::kind(other)
            ),
        )),
        None => Err(RpcError::new(
            code::INVALID_PARAMS,
            format!("invalid params: missing params._meta[\"{META_PROTOCOL_VERSION}\"]"),
        )),
    }
}

/// The HTTP headers against the body: `MCP-Protocol-Version` present, `Mcp-Method` and, for the
/// methods that name something, `Mcp-Name` agreeing with it.
fn check_headers(
    h: &McpHeaders,
    msg: &Map<String, Value>,
    method: &str,
    version: &str,
) -> Result<(), RpcError> {
    if h.protocol_version.is_none() {
        // A present one was checked above; this names the missing header.
        check(&None, version, "MCP-Protocol-Version", "protocol version")?;
    }
    check(&h.method, method, "Mcp-Method", "method")?;
    let named = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(field) = named {
        let body = msg
            .get("params")
            .and_then(|p| p.get(field))
            .and_then(Value::as_str)
            .unwrap_or("");
        check(&h.name, body, "Mcp-Name", field)?;
    }
    Ok(())
}

fn check(header: &Option<String>, body: &str, name: &str, what: &str) -> Result<(), RpcError> {
    let Some(raw) = header else {
        return Err(mismatch(format!(
            "missing {name} header (body {what} '{body}')"
        )));
    };
    let value = decode_header(raw).map_err(|e| mismatch(format!("{name}: {e}")))?;
    if value != body {
        return Err(mismatch(format!(
            "{name} header value '{value}' does not match body value '{body}'"
        )));
    }
    Ok(())
}

#[cfg(test)]
#[path = "modern_tests.rs"]
mod tests;

/// `Mcp-Param-{Name}` checks for a `tools/call` (SEP-2243): each `inputSchema` property annotated
/// `"x-mcp-header": "Name"` whose argument is present and not null must come with a matching
/// header (strings as is, other values as JSON text), and a header without its argument is a
/// mismatch too. `header` looks a header up by its lowercase name.
pub fn validate_param_headers(
    tool: &Value,
    arguments: Option<&Value>,
    header: &dyn Fn(&str) -> Option<String>,
) -> Result<(), RpcError> {
    let Some(props) = tool
        .pointer("/inputSchema/properties")
        .and_then(Value::as_object)
    else {
        return Ok(());
    };
    for (key, prop) in props {
        let Some(name) = prop.get("x-mcp-header").and_then(Value::as_str) else {
            continue;
        };
        let hname = format!("mcp-param-{}", name.to_ascii_lowercase());
        let arg = arguments.and_then(|a| a.get(key)).filter(|v| !v.is_null());
        let want = arg.map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
        let got = match header(&hname) {
            Some(raw) => {
                Some(decode_header(&raw).map_err(|e| mismatch(format!("Mcp-Param-{name}: {e}")))?)
            }
            None => None,
        };
        if got != want {
            return Err(mismatch(format!(
                "Mcp-Param-{name} header {} does not match argument '{key}' {}",
                got.map_or("is missing".into(), |g| format!("'{g}'")),
                want.map_or("(absent)".into(), |w| format!("'{w}'")),
            )));
        }
    }
    Ok(())
}
