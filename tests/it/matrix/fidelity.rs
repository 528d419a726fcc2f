//! Byte fidelity through the real `mws serve`: a tool with vendor fields at every level, an
//! `execution` member and keys out of alphabetical order reaches the client exactly as the upstream
//! sent it (same keys, same order, same values), with only `anthropic/alwaysLoad` added to its
//! `_meta` — from a modern upstream and from a legacy one answering in chunked SSE, to a client of
//! either era.

use serde_json::{Value, json};

use crate::support::fake_http::{self, Mode, vendor_tool};
use crate::support::serve::{self, post_modern};

/// The tool as the client must see it: the upstream's bytes, `_meta` with alwaysLoad appended.
fn expected(name: &str) -> String {
    let sent = serde_json::to_string(&vendor_tool(name)).unwrap();
    let meta = r#""_meta":{"vendor/tag":"v1"}"#;
    assert!(sent.contains(meta), "{sent}");
    sent.replace(
        meta,
        r#""_meta":{"vendor/tag":"v1","anthropic/alwaysLoad":true}"#,
    )
}

/// The JSON-RPC message in a reply body, plain JSON or the last `data:` line of an SSE stream.
fn message(body: &str) -> Value {
    if let Ok(v) = serde_json::from_str(body) {
        return v;
    }
    let data = body
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .rfind(|d| d.contains("\"id\""))
        .unwrap_or_else(|| panic!("no JSON-RPC reply in {body:?}"));
    serde_json::from_str(data).unwrap()
}

/// `tools/list` the 2025 way: initialize, initialized, then list on the session.
async fn legacy_list(url: &str) -> Value {
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut r = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream");
        if let Some(s) = session {
            r = r
                .header("mcp-session-id", s)
                .header("mcp-protocol-version", "2025-11-25");
        }
        r.body(body.to_string()).send()
    };
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "fidelity-test", "version": "1"}}});
    let r = post(init, None).await.unwrap();
    let session = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let init = message(&r.text().await.unwrap());
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(note, Some(session.clone())).await.unwrap();
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let r = post(list, Some(session)).await.unwrap();
    message(&r.text().await.unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vendor_fields_and_execution_reach_clients_of_both_eras_unchanged() {
    let upstreams = [
        Mode::Modern,
        Mode::Legacy {
            sse: true,
            expired_status: 404,
        },
    ];
    for mode in upstreams {
        let tools = vec![json!({"name": "plain"}), vendor_tool("vend")];
        let fake = fake_http::start(mode, tools, 1).await;
        let served = serve::start(
            &json!({"upstream": {"url": fake.url}, "listing": "working-set"}),
            &["vend"],
        );
        let want = [
            "search_tools",
            "call_tool",
            "call_read_only_tool",
            "run_script",
            "vend",
        ];
        let mut modern = Value::Null;
        for _ in 0..100 {
            modern = post_modern(&served.url, 1, "tools/list", json!({})).await;
            if serve::names(&modern) == want {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        let legacy = legacy_list(&served.url).await;
        for (era, reply) in [("2026-07-28", &modern), ("2025-11-25", &legacy)] {
            assert_eq!(serve::names(reply), want, "{mode:?} → {era}");
            let got = serde_json::to_string(&reply["result"]["tools"][4]).unwrap();
            assert_eq!(got, expected("vend"), "{mode:?} upstream → {era} client");
        }
    }
}
