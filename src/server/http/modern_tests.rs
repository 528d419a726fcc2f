//! Tests for modern.rs: envelope and header validation as data.

use super::*;

fn msg(method: &str, version: &str, name: Option<&str>) -> Map<String, Value> {
    let mut params = json!({"_meta": {
        META_PROTOCOL_VERSION: version,
        META_CLIENT_INFO: {"name": "claude-code", "version": "2"},
        META_CLIENT_CAPABILITIES: {}
    }});
    if let Some(n) = name {
        params["name"] = json!(n);
    }
    json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        .as_object()
        .unwrap()
        .clone()
}

fn headers(version: &str, method: &str, name: Option<&str>) -> McpHeaders {
    McpHeaders {
        protocol_version: Some(version.into()),
        method: Some(method.into()),
        name: name.map(Into::into),
    }
}

#[test]
fn decodes_sentinel_and_whitespace() {
    assert_eq!(decode_header("  tools/list ").unwrap(), "tools/list");
    // "héllo" in base64.
    assert_eq!(decode_header("=?base64?aMOpbGxv?=").unwrap(), "héllo");
    assert!(decode_header("=?base64?!!!?=").is_err());
}

type Case = (Map<String, Value>, Option<McpHeaders>, Option<i64>);

#[test]
fn validation_cases() {
    let v = MODERN_VERSION;
    // (message, headers, expected code or None for ok)
    let cases: Vec<Case> = vec![
        (
            msg("tools/list", v, None),
            Some(headers(v, "tools/list", None)),
            None,
        ),
        (msg("tools/list", v, None), None, None),
        (
            msg("tools/call", v, Some("echo")),
            Some(headers(v, "tools/call", Some("echo"))),
            None,
        ),
        (
            msg("tools/call", v, Some("héllo")),
            Some(headers(v, "tools/call", Some("=?base64?aMOpbGxv?="))),
            None,
        ),
        (
            msg("tools/call", v, Some("echo")),
            Some(headers(v, "tools/call", Some("other"))),
            Some(code::HEADER_MISMATCH),
        ),
        (
            msg("tools/call", v, Some("echo")),
            Some(headers(v, "tools/call", None)),
            Some(code::HEADER_MISMATCH),
        ),
        (
            msg("tools/list", v, None),
            Some(headers(v, "tools/call", None)),
            Some(code::HEADER_MISMATCH),
        ),
        (
            msg("tools/list", v, None),
            Some(headers("2025-11-25", "tools/list", None)),
            Some(code::HEADER_MISMATCH),
        ),
        (
            msg("tools/list", "1900-01-01", None),
            Some(headers("1900-01-01", "tools/list", None)),
            Some(code::UNSUPPORTED_VERSION),
        ),
        // Header and body disagree: a mismatch even though the body's version is unknown.
        (
            msg("server/discover", "v999.0.0", None),
            Some(headers(v, "server/discover", None)),
            Some(code::HEADER_MISMATCH),
        ),
    ];
    for (i, (m, h, want)) in cases.iter().enumerate() {
        let got = validate(m, h.as_ref()).err().map(|e| e.code);
        assert_eq!(got, *want, "case {i}");
    }
    let e = validate(&msg("tools/list", "1900-01-01", None), None).unwrap_err();
    assert_eq!(e.data.unwrap()["supported"][0], MODERN_VERSION);
    let mut no_caps = msg("tools/list", v, None);
    no_caps["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove(META_CLIENT_CAPABILITIES);
    assert_eq!(
        validate(&no_caps, None).unwrap_err().code,
        code::INVALID_PARAMS
    );
    let ok = validate(&msg("tools/list", v, None), None).unwrap();
    assert_eq!(ok.client.as_deref(), Some("claude-code"));
}

#[test]
fn classification() {
    assert!(is_modern(&msg("tools/list", MODERN_VERSION, None), None));
    // initialize with the modern envelope is a removed method, served (and refused) statelessly;
    // a plain initialize is legacy whatever header it carries.
    assert!(is_modern(&msg("initialize", MODERN_VERSION, None), None));
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25"}});
    assert!(!is_modern(init.as_object().unwrap(), Some(MODERN_VERSION)));
    let bare = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let bare = bare.as_object().unwrap();
    assert!(!is_modern(bare, None));
    assert!(!is_modern(bare, Some("2025-06-18")));
    assert!(is_modern(bare, Some(MODERN_VERSION)));
}

#[test]
fn param_headers() {
    let tool = json!({"name": "get_weather", "inputSchema": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "days": {"type": "integer", "x-mcp-header": "Days"},
        "q": {"type": "string"}}}});
    let check = |args: Value, headers: &[(&str, &str)]| {
        let h: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let look = move |n: &str| h.iter().find(|(k, _)| k == n).map(|(_, v)| v.clone());
        validate_param_headers(&tool, Some(&args), &look)
            .err()
            .map(|e| e.code)
    };
    assert_eq!(
        check(
            json!({"region": "eu", "days": 3}),
            &[("mcp-param-region", "eu"), ("mcp-param-days", "3")]
        ),
        None
    );
    assert_eq!(check(json!({"q": "x"}), &[]), None);
    assert_eq!(
        check(json!({"region": "eu"}), &[]),
        Some(code::HEADER_MISMATCH)
    );
    assert_eq!(
        check(json!({"region": "eu"}), &[("mcp-param-region", "us")]),
        Some(code::HEADER_MISMATCH)
    );
    assert_eq!(
        check(json!({}), &[("mcp-param-region", "us")]),
        Some(code::HEADER_MISMATCH)
    );
    assert_eq!(
        check(
            json!({"region": "é"}),
            &[("mcp-param-region", "=?base64?w6k=?=")]
        ),
        None
    );
}
