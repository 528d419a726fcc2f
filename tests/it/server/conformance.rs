//! Regressions found by the official conformance suites run through mws (scripts/conformance.sh
//! --through-mws): the modern error codes and HTTP statuses, and client capabilities reaching the
//! upstream. Each case is data: what is sent, and the status and code the client must see.

use serde_json::{Value, json};

use super::http::client;
use super::{Harness, V, modern, tools};
use crate::support::wire::sse_messages;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upstream_progress_reaches_the_caller_that_asked() {
    let h = Harness::start(&[]).await;
    let mut catalog = tools();
    catalog.push(json!({"name": "report_progress", "inputSchema": {"type": "object"}}));
    h.fake.set_tools(catalog);
    let call = |id: i64, token: Value| {
        modern(
            id,
            "tools/call",
            json!({"name": "report_progress", "arguments": {}, "_meta": {"progressToken": token}}),
        )
    };
    let send = |body: Value, accept: &'static str| {
        let url = h.url.clone();
        async move {
            let resp = client()
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", accept)
                .header("mcp-protocol-version", V)
                .header("mcp-method", "tools/call")
                .header("mcp-name", "report_progress")
                .body(body.to_string())
                .send()
                .await
                .unwrap();
            let ctype = resp.headers()["content-type"].to_str().unwrap().to_string();
            (ctype, resp.text().await.unwrap())
        }
    };
    // Two callers with the same token at once: each sees its own two steps, its token, its answer.
    let both = "application/json, text/event-stream";
    let (a, b) = tokio::join!(send(call(1, json!(7)), both), send(call(2, json!(7)), both));
    for (id, (ctype, text)) in [(1, a), (2, b)] {
        assert!(ctype.starts_with("text/event-stream"), "{ctype}");
        let msgs = sse_messages(&text);
        assert_eq!(msgs.len(), 3, "{text}");
        for (step, m) in msgs[..2].iter().enumerate() {
            assert_eq!(m["method"], "notifications/progress");
            assert_eq!(
                m["params"]["progressToken"], 7,
                "the client's own token comes back"
            );
            assert_eq!(m["params"]["progress"], step as i64 + 1);
        }
        assert_eq!(msgs[2]["id"], id);
        assert!(msgs[2]["result"]["content"].is_array(), "{}", msgs[2]);
    }
    // The upstream saw a token of mws's own, a different one per request.
    let tokens: Vec<Value> = h
        .fake
        .seen()
        .iter()
        .filter_map(|s| s.meta.as_ref()?.get("progressToken").cloned())
        .collect();
    assert_eq!(tokens.len(), 2);
    assert_ne!(tokens[0], tokens[1]);
    assert!(tokens.iter().all(|t| t != &json!(7)));
    // A client that takes JSON only gets the plain answer.
    let (ctype, text) = send(call(3, json!("t")), "application/json").await;
    assert!(ctype.starts_with("application/json"), "{ctype}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["id"], 3);
}
