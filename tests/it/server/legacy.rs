//! The 2025 revisions over HTTP: initialize mints a session, notifications get 202, SSE replies
//! per Accept, GET stream or 405, DELETE ends the session and later use gets 404; calls are logged
//! under the session with the client name from initialize.

use serde_json::{Value, json};

use super::Harness;
use super::http::{client, text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn legacy_session_lifecycle() {
    let h = Harness::start(&["mail_list_labels"]).await;
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "codex-mcp-client", "version": "0.169.0"}}});
    let r = client()
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(init.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let sid = r.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["result"]["protocolVersion"], "2025-06-18");
    assert!(b["result"].get("resultType").is_none());
    assert!(
        b["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("search_tools")
    );

    let legacy = |body: Value, accept: &'static str| {
        client()
            .post(&h.url)
            .header("content-type", "application/json")
            .header("accept", accept)
            .header("mcp-session-id", sid.clone())
            .header("mcp-protocol-version", "2025-06-18")
            .body(body.to_string())
    };
    let r = legacy(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        "application/json",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 202);
    // SSE reply when the client accepts only SSE.
    let r = legacy(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        "text/event-stream",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let body = r.text().await.unwrap();
    let data = body.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
    let list: Value = serde_json::from_str(data).unwrap();
    assert_eq!(list["result"]["tools"][4]["name"], "mail_list_labels");
    assert!(list["result"].get("ttlMs").is_none());
    // A call under the session is logged with the session and the client from initialize.
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "mail_list_labels", "arguments": {}, "_meta": {"callId": "call_abc"}}});
    let r: Value = legacy(call, "application/json")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert!(
        text(&r["result"]).starts_with("mail_list_labels ran"),
        "{r}"
    );
    let r = legacy(
        json!({"jsonrpc": "2.0", "id": 4, "method": "ping"}),
        "application/json",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.json::<Value>().await.unwrap()["result"], json!({}));

    // GET: 405 without a session, a stream with one.
    let r = client().get(&h.url).send().await.unwrap();
    assert_eq!(r.status(), 405);
    let r = client()
        .get(&h.url)
        .header("mcp-session-id", sid.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    drop(r);

    let r = client()
        .delete(&h.url)
        .header("mcp-session-id", sid.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    let r = legacy(
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}),
        "application/json",
    )
    .send()
    .await
    .unwrap();
    assert_eq!(r.status(), 404);
    let r = client()
        .delete(&h.url)
        .header("mcp-session-id", sid.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);

    h.flush();
    let rows = h.query("SELECT session_id, client, via, ok, client_call_id FROM calls");
    assert_eq!(
        rows,
        [vec![
            json!(sid),
            json!("codex-mcp-client"),
            json!("direct"),
            json!(1),
            json!("call_abc")
        ]]
    );
}
