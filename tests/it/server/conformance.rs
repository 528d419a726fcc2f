//! Regressions found by the official conformance suites run through mws (scripts/conformance.sh
//! --through-mws): the modern error codes and HTTP statuses, and client capabilities reaching the
//! upstream. Each case is data: what is sent, and the status and code the client must see.

use serde_json::{Value, json};

use super::http::client;
use super::{Harness, V, modern, tools};

/// POSTs `body` with the given MCP-Protocol-Version header (and Mcp-Method / Mcp-Name from the
/// body); returns (status, body).
async fn post(h: &Harness, body: &Value, header_version: &str) -> (u16, Value) {
    let method = body["method"].as_str().unwrap();
    let mut req = client()
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-protocol-version", header_version)
        .header("mcp-method", method);
    if let Some(n) = body["params"]["name"].as_str() {
        req = req.header("mcp-name", n);
    }
    let resp = req.body(body.to_string()).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn with_version(mut body: Value, version: &str) -> Value {
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(version);
    body
}

fn with_capabilities(mut body: Value, caps: Value) -> Value {
    body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = caps;
    body
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_errors_carry_the_spec_status_and_code() {
    let h = Harness::start(&[]).await;
    let mut catalog = tools();
    catalog.push(json!({"name": "test_needs_sampling", "inputSchema": {"type": "object"}}));
    h.fake.set_tools(catalog);
    let call = |caps: Value| {
        with_capabilities(
            modern(
                4,
                "tools/call",
                json!({"name": "test_needs_sampling", "arguments": {}}),
            ),
            caps,
        )
    };
    // (what, body, MCP-Protocol-Version header, HTTP status, JSON-RPC error code or None)
    let cases: Vec<(&str, Value, &str, u16, Option<i64>)> = vec![
        (
            "header names a version the body does not: mismatch, even for an unknown body version",
            with_version(modern(1, "server/discover", json!({})), "v999.0.0"),
            V,
            400,
            Some(-32020),
        ),
        (
            "header and body agree on an unknown version: unsupported",
            with_version(modern(2, "server/discover", json!({})), "v999.0.0"),
            "v999.0.0",
            400,
            Some(-32022),
        ),
        (
            "initialize with the modern envelope is a removed method",
            modern(3, "initialize", json!({})),
            V,
            404,
            Some(-32601),
        ),
        (
            "the upstream's MissingRequiredClientCapability keeps its 400",
            call(json!({})),
            V,
            400,
            Some(-32021),
        ),
        (
            "capabilities the client declared reach the upstream",
            call(json!({"sampling": {}})),
            V,
            200,
            None,
        ),
    ];
    for (what, body, header, status, code) in cases {
        let (got_status, got) = post(&h, &body, header).await;
        assert_eq!(got_status, status, "{what}: {got}");
        assert_eq!(got["error"]["code"].as_i64(), code, "{what}: {got}");
        assert_eq!(
            got["id"], body["id"],
            "{what}: the error keeps the request id"
        );
    }
    let seen: Vec<_> = h
        .fake
        .seen()
        .into_iter()
        .filter(|s| s.method == "tools/call")
        .map(|s| s.client_capabilities)
        .collect();
    assert_eq!(seen, vec![Some(json!({})), Some(json!({"sampling": {}}))]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_clients_declare_no_capabilities_upstream() {
    let h = Harness::start(&["test_needs_sampling"]).await;
    let mut catalog = tools();
    catalog.push(json!({"name": "test_needs_sampling", "inputSchema": {"type": "object"}}));
    h.fake.set_tools(catalog);
    // A legacy request (no envelope) that names capabilities in its _meta does not pass them on:
    // a legacy client cannot answer an InputRequiredResult.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "test_needs_sampling", "arguments": {},
        "_meta": {"io.modelcontextprotocol/clientCapabilities": {"sampling": {}}}}});
    let resp = client()
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let got: Value = resp.json().await.unwrap();
    assert_eq!(got["error"]["code"], -32021, "{got}");
    let seen = h.fake.seen();
    assert_eq!(seen.last().unwrap().client_capabilities, None);
}
