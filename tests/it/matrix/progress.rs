//! Progress through the proxy: a `tools/call` with a `progressToken`, from a client that accepts
//! SSE, gets the upstream's `notifications/progress` for that call (with its own token) before the
//! result — and only its own, even when another client calls at the same time with the same token.

use serde_json::{Value, json};

use crate::support::rmcp_upstream;
use crate::support::serve::{self, names, post_modern};
use crate::support::wire::{self, sse_messages as events};

async fn call_with_progress(url: &str, client: &str, token: &str) -> Vec<Value> {
    let body = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {
        "name": "progress", "arguments": {},
        "_meta": {"progressToken": token,
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let (ct, text) = wire::post_modern_body(url, &body).await;
    assert_eq!(ct, "text/event-stream");
    events(&text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_the_client_that_asked_for_it() {
    let up = rmcp_upstream::start(false).await;
    let served = serve::start(&json!({"upstream": {"url": up.url}}), &[]);
    // The fixture's catalog is in once search_tools counts its 28 tools.
    let mut listed = Value::Null;
    for _ in 0..100 {
        listed = post_modern(&served.url, 1, "tools/list", json!({})).await;
        let d = listed["result"]["tools"][0]["description"]
            .as_str()
            .unwrap();
        if names(&listed).len() == 2 && d.contains("28 upstream tools") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let d = listed["result"]["tools"][0]["description"]
        .as_str()
        .unwrap();
    assert!(
        d.contains("28 upstream tools"),
        "catalog never arrived: {listed}"
    );
    let (a, b) = tokio::join!(
        call_with_progress(&served.url, "client-a", "same"),
        call_with_progress(&served.url, "client-b", "same")
    );
    for evs in [a, b] {
        let progress: Vec<_> = evs
            .iter()
            .filter(|e| e["method"] == "notifications/progress")
            .map(|e| {
                (
                    e["params"]["progressToken"].clone(),
                    e["params"]["progress"].clone(),
                )
            })
            .collect();
        assert_eq!(
            progress,
            [(json!("same"), json!(1.0)), (json!("same"), json!(2.0))],
            "{evs:?}"
        );
        let last = evs.last().unwrap();
        assert_eq!(last["id"], 9);
        assert_eq!(last["result"]["content"][0]["text"], "done", "{last}");
    }
}

/// `mws serve --stdio`: the one client's progress notifications come before its result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_reaches_a_stdio_client() {
    let up = rmcp_upstream::start(false).await;
    let dir = tempfile::tempdir().unwrap();
    let mut mws = serve::StdioServed::start(dir.path(), &json!({"upstream": {"url": up.url}}));
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {
        "name": "progress", "arguments": {},
        "_meta": {"progressToken": 77,
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "stdio-client", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    mws.send(&call).await;
    let mut progress = Vec::new();
    let r = loop {
        let v = mws.next().await;
        if v["method"] == "notifications/progress" {
            progress.push(v["params"]["progressToken"].clone());
        } else if v["id"] == 5 {
            break v;
        }
    };
    assert_eq!(r["result"]["content"][0]["text"], "done", "{r}");
    assert_eq!(progress, [json!(77), json!(77)]);
    mws.close().await;
}
