//! Names and ids a client makes up, as they reach `state.db` through the real proxy: a 100 KB
//! unknown tool name full of newlines, NUL and a right-to-left override, a 100 KB client name, a
//! 50 KB client call id. They are stored cut to their caps and with those characters replaced.

use serde_json::json;

use super::live_db::serve_demo;
use crate::support::wire::LegacyClient;

/// Before the fix every one of them was stored verbatim (`length(tool)` was 100,001).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_and_control_laden_names_are_stored_capped_and_printable() {
    let mut served = serve_demo().await;
    let tool = format!("evil\n\u{202E}\0{}", "t".repeat(100_000));
    let client = format!("cli\u{1b}[2J{}", "c".repeat(100_000));
    let call_id = "i".repeat(50_000);
    // The legacy era: a tool name with a newline or NUL cannot travel in the 2026 era's
    // `Mcp-Name` header, but the legacy body carries anything.
    let legacy = LegacyClient::open(&served.url, &client, json!({})).await;
    let reply = legacy
        .rpc(
            "tools/call",
            json!({"name": tool, "arguments": {}, "_meta": {"callId": call_id}}),
        )
        .await;
    assert!(
        reply.get("result").is_some() || reply.get("error").is_some(),
        "{reply}"
    );
    served.stop();

    let store = mws::store::Store::open(&served.db()).unwrap();
    let (tool, client, call_id, session): (String, String, String, String) = store
        .conn()
        .query_row(
            "SELECT tool, client, client_call_id, session_id FROM calls",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    use mws::store::clean::{MAX_CALL_ID, MAX_CLIENT_NAME, MAX_TOOL_NAME};
    let head = |s: &str| s.chars().take(40).collect::<String>();
    assert_eq!(tool.len(), MAX_TOOL_NAME, "{:?}", head(&tool));
    assert!(
        tool.starts_with("evil\u{FFFD}\u{FFFD}\u{FFFD}ttt") && tool.ends_with("t…"),
        "{:?}",
        head(&tool)
    );
    assert_eq!(client.len(), MAX_CLIENT_NAME, "{:?}", head(&client));
    assert!(
        client.starts_with("cli\u{FFFD}[2Jccc"),
        "{:?}",
        head(&client)
    );
    assert_eq!(call_id.len(), MAX_CALL_ID, "{:?}", head(&call_id));
    let (s_id, s_client): (String, String) = store
        .conn()
        .query_row(
            "SELECT id, client FROM sessions WHERE id = ?1",
            [&session],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((s_id, s_client), (session, client));
}
