//! The 2026-07-28 per-request `_meta` envelope and the HTTP request-metadata headers
//! (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) with their base64 sentinel, shared by both
//! sides: the upstream adds them, the server reads and checks them. Must not do I/O.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::{META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_PROTOCOL_VERSION};

pub const HEADER_PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
pub const HEADER_METHOD: &str = "Mcp-Method";
pub const HEADER_NAME: &str = "Mcp-Name";
pub const HEADER_SESSION_ID: &str = "Mcp-Session-Id";

/// Prefix of `_meta` keys reserved by the protocol (envelope, serverInfo, subscriptionId, ...).
pub const RESERVED_META_PREFIX: &str = "io.modelcontextprotocol/";

/// The envelope keys a modern request carries.
pub fn envelope(
    version: &str,
    client_info: Value,
    client_capabilities: Value,
) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert(META_PROTOCOL_VERSION.into(), json!(version));
    m.insert(META_CLIENT_INFO.into(), client_info);
    m.insert(META_CLIENT_CAPABILITIES.into(), client_capabilities);
    m
}

/// Sets `params._meta` to `forwarded` (the client's own keys, minus any envelope) plus `envelope`
/// (envelope keys win). `params` that is not an object (absent, `null`) becomes one.
pub fn with_meta(
    params: Value,
    forwarded: Option<&Map<String, Value>>,
    envelope: Map<String, Value>,
) -> Value {
    let mut p = match params {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    let mut meta = match p.remove("_meta") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    if let Some(f) = forwarded {
        for (k, v) in f {
            if !k.starts_with(RESERVED_META_PREFIX) {
                meta.insert(k.clone(), v.clone());
            }
        }
    }
    for (k, v) in envelope {
        meta.insert(k, v);
    }
    if !meta.is_empty() {
        p.insert("_meta".into(), Value::Object(meta));
    }
    Value::Object(p)
}

/// Splits a request `_meta` into the era envelope (reserved keys) and the rest (progress token,
/// call ids, vendor keys), which is what the proxy forwards.
pub fn split_meta(meta: &Map<String, Value>) -> (Map<String, Value>, Map<String, Value>) {
    let mut reserved = Map::new();
    let mut rest = Map::new();
    for (k, v) in meta {
        if k.starts_with(RESERVED_META_PREFIX) {
            reserved.insert(k.clone(), v.clone());
        } else {
            rest.insert(k.clone(), v.clone());
        }
    }
    (reserved, rest)
}

/// The `Mcp-Name` value a request needs: `params.name` for `tools/call` and `prompts/get`,
/// `params.uri` for `resources/read`; `None` for other methods.
pub fn mcp_name<'a>(method: &str, params: &'a Value) -> Option<&'a str> {
    let key = match method {
        "tools/call" | "prompts/get" => "name",
        "resources/read" => "uri",
        _ => return None,
    };
    params.get(key).and_then(Value::as_str)
}

/// Prefix of the headers that mirror annotated tool arguments (SEP-2243).
pub const HEADER_PARAM_PREFIX: &str = "Mcp-Param-";

/// The `Mcp-Param-*` headers a modern `tools/call` must carry: one per `inputSchema` property
/// (reached through `properties` alone) annotated `"x-mcp-header": "Name"` whose argument is a
/// string, number or boolean. Values are encoded with the base64 sentinel when needed.
pub fn param_headers(input_schema: &Value, arguments: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    collect_params(input_schema.get("properties"), Some(arguments), &mut out);
    out
}

fn collect_params(props: Option<&Value>, args: Option<&Value>, out: &mut Vec<(String, String)>) {
    let Some(Value::Object(props)) = props else {
        return;
    };
    for (name, schema) in props {
        let arg = args.and_then(|a| a.get(name));
        if let (Some(Value::String(header)), Some(v)) = (schema.get("x-mcp-header"), arg) {
            let text = match v {
                Value::String(s) => Some(s.clone()),
                Value::Bool(_) | Value::Number(_) => Some(v.to_string()),
                _ => None,
            };
            if let Some(t) = text.filter(|_| !header.is_empty()) {
                out.push((
                    format!("{HEADER_PARAM_PREFIX}{header}"),
                    encode_header_value(&t).into_owned(),
                ));
            }
        }
        collect_params(schema.get("properties"), arg, out);
    }
}

/// Encodes a header value: plain visible ASCII without edge spaces is sent as is; anything else
/// (and any literal that looks like the sentinel) as `=?base64?<b64(utf8)>?=`.
pub fn encode_header_value(v: &str) -> std::borrow::Cow<'_, str> {
    let plain = v.bytes().all(|b| (0x20..0x7f).contains(&b))
        && !v.starts_with(' ')
        && !v.ends_with(' ')
        && !looks_encoded(v);
    if plain {
        v.into()
    } else {
        format!("=?base64?{}?=", STANDARD.encode(v.as_bytes())).into()
    }
}

/// Decodes a header value (surrounding whitespace ignored); `None` for a malformed sentinel.
pub fn decode_header_value(v: &str) -> Option<String> {
    let v = v.trim_matches([' ', '\t']);
    if !looks_encoded(v) {
        return Some(v.to_string());
    }
    let inner = &v["=?base64?".len()..v.len() - "?=".len()];
    let bytes = STANDARD.decode(inner).ok()?;
    String::from_utf8(bytes).ok()
}

fn looks_encoded(v: &str) -> bool {
    v.len() >= "=?base64??=".len() && v.starts_with("=?base64?") && v.ends_with("?=")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_round_trip() {
        let cases = [
            ("get_weather", "get_weather"),
            ("héllo", "=?base64?aMOpbGxv?="),
            (" padded", "=?base64?IHBhZGRlZA==?="),
            ("=?base64?abc?=", "=?base64?PT9iYXNlNjQ/YWJjPz0=?="),
        ];
        for (raw, wire) in cases {
            assert_eq!(encode_header_value(raw), wire, "{raw:?}");
            assert_eq!(decode_header_value(wire).as_deref(), Some(raw), "{wire:?}");
        }
        assert_eq!(decode_header_value("  x ").as_deref(), Some("x"));
        assert_eq!(decode_header_value("=?base64?!!?="), None);
    }

    #[test]
    fn meta_merge_keeps_client_keys_and_sets_envelope() {
        let forwarded: Map<String, Value> = serde_json::from_value(json!({
            "progressToken": 5, "claudecode/toolUseId": "t1",
            "io.modelcontextprotocol/protocolVersion": "2025-11-25"
        }))
        .unwrap();
        let env = envelope("2026-07-28", json!({"name": "mws"}), json!({}));
        let p = with_meta(
            json!({"name": "echo", "arguments": {}}),
            Some(&forwarded),
            env,
        );
        assert_eq!(
            p,
            json!({"name": "echo", "arguments": {}, "_meta": {
                "progressToken": 5, "claudecode/toolUseId": "t1",
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "mws"},
                "io.modelcontextprotocol/clientCapabilities": {}
            }})
        );
        assert_eq!(with_meta(Value::Null, None, Map::new()), json!({}));
        let (reserved, rest) = split_meta(&forwarded);
        assert_eq!(reserved.len(), 1);
        assert_eq!(rest.len(), 2);
    }

    #[test]
    fn param_headers_follow_annotations() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "free": {"type": "string"},
            "nested": {"type": "object", "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}}},
            "list": {"type": "array", "x-mcp-header": "List"}
        }});
        let args = json!({"region": "eu wést", "n": 3, "free": "x", "nested": {"tenant": "t1"}, "list": [1]});
        let got = param_headers(&schema, &args);
        assert_eq!(
            got,
            vec![
                (
                    "Mcp-Param-Region".to_string(),
                    "=?base64?ZXUgd8Opc3Q=?=".to_string()
                ),
                ("Mcp-Param-N".to_string(), "3".to_string()),
                ("Mcp-Param-Tenant".to_string(), "t1".to_string()),
            ]
        );
        assert!(param_headers(&schema, &json!({})).is_empty());
    }

    #[test]
    fn method_names() {
        assert_eq!(mcp_name("tools/call", &json!({"name": "a"})), Some("a"));
        assert_eq!(
            mcp_name("resources/read", &json!({"uri": "file:///x"})),
            Some("file:///x")
        );
        assert_eq!(mcp_name("tools/list", &json!({})), None);
    }
}
