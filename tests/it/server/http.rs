//! `/mcp` over real HTTP on loopback: bad input, both eras, listing, call_tool, logging, promote.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Harness, V, modern, set_working_set};

pub fn client() -> reqwest::Client {
    reqwest::Client::new()
}

/// POSTs a modern request with matching headers; returns (status, body).
pub(super) async fn post_modern(h: &Harness, body: &Value) -> (u16, Value) {
    let method = body["method"].as_str().unwrap();
    let mut req = client()
        .post(&h.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", V)
        .header("mcp-method", method);
    if let Some(n) = body["params"]["name"].as_str() {
        req = req.header("mcp-name", n);
    }
    let resp = req.body(body.to_string()).send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

async fn tools_list_names(h: &Harness) -> Vec<String> {
    let (status, body) = post_modern(h, &modern(99, "tools/list", json!({}))).await;
    assert_eq!(status, 200, "{body}");
    body["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

async fn still_serving(h: &Harness) {
    assert_eq!(tools_list_names(h).await[0], "search_tools");
}

pub fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_clear_errors_and_the_server_keeps_serving() {
    let h = Harness::start(&["mail_send_message"]).await;
    let good = modern(1, "tools/list", json!({})).to_string();
    let post_as = |method: &'static str| {
        client()
            .post(&h.url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", V)
            .header("mcp-method", method)
    };
    let post = || post_as("tools/list");

    let r = post()
        .header("host", "evil.example.com")
        .body(good.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert!(
        r.text()
            .await
            .unwrap()
            .contains("Host 'evil.example.com' is not loopback")
    );
    still_serving(&h).await;

    let r = post()
        .header("origin", "http://evil.example.com")
        .body(good.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 403);
    assert!(r.text().await.unwrap().contains("Origin"));
    still_serving(&h).await;

    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{{\"x\":\"{}\"}}}}",
        "a".repeat(10 * 1024 * 1024)
    );
    let reply = super::streams::raw_post(&h.url, &big).await;
    assert!(reply.starts_with("HTTP/1.1 413"), "{reply}");
    assert!(reply.contains("too large"), "{reply}");
    still_serving(&h).await;

    let r = post().body("this is not json").send().await.unwrap();
    assert_eq!(r.status(), 400);
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["error"]["code"], -32700, "{b}");
    assert!(b["id"].is_null());
    still_serving(&h).await;

    // Header says tools/call, body says tools/list.
    let r = post_as("tools/call").body(good.clone());
    let r = r.send().await.unwrap();
    assert_eq!(r.status(), 400);
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["error"]["code"], -32020, "{b}");
    still_serving(&h).await;

    let mut old = modern(2, "tools/list", json!({}));
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("1900-01-01");
    let r = client()
        .post(&h.url)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "1900-01-01")
        .header("mcp-method", "tools/list")
        .body(old.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    let b: Value = r.json().await.unwrap();
    assert_eq!(b["error"]["code"], -32022, "{b}");
    assert_eq!(b["error"]["data"]["requested"], "1900-01-01");
    assert!(
        b["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!(V))
    );
    still_serving(&h).await;

    let batch = format!("[{good},{good}]");
    let r = post().body(batch).send().await.unwrap();
    assert_eq!(r.status(), 400);
    let b: Value = r.json().await.unwrap();
    assert!(
        b["error"]["message"].as_str().unwrap().contains("batch"),
        "{b}"
    );
    still_serving(&h).await;

    // Missing envelope capabilities: -32602 with 400; unknown method: 404 with -32601.
    let mut bad = modern(3, "tools/list", json!({}));
    bad["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    let (status, b) = post_modern(&h, &bad).await;
    assert_eq!((status, b["error"]["code"].clone()), (400, json!(-32602)));
    let (status, b) = post_modern(&h, &modern(4, "nope/never", json!({}))).await;
    assert_eq!(
        (status, b["error"]["code"].clone()),
        (404, json!(-32601)),
        "{b}"
    );
    let (status, b) = post_modern(&h, &modern(5, "ping", json!({}))).await;
    assert_eq!(
        (status, b["error"]["code"].clone()),
        (404, json!(-32601)),
        "{b}"
    );
    still_serving(&h).await;

    // A wrong path is a plain 404.
    let r = client()
        .get(h.url.replace("/mcp", "/other"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn modern_discover_list_and_call() {
    let h = Harness::start(&["mail_send_message", "gone_tool", "calendar_list_events"]).await;
    let (status, d) = post_modern(&h, &modern(1, "server/discover", json!({}))).await;
    assert_eq!(status, 200);
    let r = &d["result"];
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["cacheScope"], "private");
    assert!(r["ttlMs"].is_u64());
    assert!(
        r["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!(V))
    );
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mcp-working-set"
    );
    let ins = r["instructions"].as_str().unwrap();
    assert!(ins.contains("has 6 tools; 2 of them are listed"), "{ins}");
    assert!(ins.contains("mail (2 tools: mailbox and filters)"), "{ins}");

    let (_, l) = post_modern(&h, &modern(2, "tools/list", json!({}))).await;
    let tools = l["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "search_tools",
            "call_tool",
            "call_read_only_tool",
            "run_script",
            "mail_send_message",
            "calendar_list_events"
        ]
    );
    assert!(
        tools
            .iter()
            .all(|t| t["_meta"]["anthropic/alwaysLoad"] == true)
    );
    let send = &tools[4];
    assert_eq!(send["x-vendor"], json!({"tier": "gold"}));
    assert_eq!(send["execution"], json!({"taskSupport": "forbidden"}));
    assert_eq!(send["annotations"], json!({"destructiveHint": true}));
    assert_eq!(
        send["inputSchema"],
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
               "properties": {"to": {"type": "string"}, "cc": {"type": "string"}}, "required": ["to"]})
    );
    assert_eq!(l["result"]["resultType"], "complete");

    // Direct calls: listed and unlisted; the client is named upstream, its call id kept.
    let call = modern(
        3,
        "tools/call",
        json!({"name": "mail_send_message", "arguments": {"to": "a"},
        "_meta": {"claudecode/toolUseId": "toolu_01"}}),
    );
    let (status, c) = post_modern(&h, &call).await;
    assert_eq!(status, 200, "{c}");
    assert!(
        text(&c["result"]).starts_with("mail_send_message ran"),
        "{c}"
    );
    assert_eq!(c["result"]["resultType"], "complete");
    let (_, c) = post_modern(
        &h,
        &modern(4, "tools/call", json!({"name": "get-sum", "arguments": {}})),
    )
    .await;
    assert!(text(&c["result"]).starts_with("get-sum ran"), "{c}");
    let seen = h.fake.seen();
    assert_eq!(seen[0].client.as_deref(), Some("test-client"));
    let meta = seen[0].meta.as_ref().unwrap();
    assert_eq!(meta["claudecode/toolUseId"], "toolu_01");
    assert!(!meta.contains_key("io.modelcontextprotocol/protocolVersion"));
    assert!(seen[0].params.get("_meta").is_none());

    // Other methods are forwarded; a notification gets 202.
    let (status, res) = post_modern(&h, &modern(5, "resources/list", json!({}))).await;
    assert_eq!(status, 200);
    assert_eq!(res["result"]["resources"][0]["uri"], "mem://a");
    assert_eq!(res["result"]["ttlMs"], 0);
    let r = client()
        .post(&h.url)
        .header("content-type", "application/json")
        .header("mcp-protocol-version", V)
        .header("mcp-method", "notifications/cancelled")
        .body(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}).to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 202);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_tool_runs_exact_names_only_and_everything_is_logged() {
    let h = Harness::start(&[]).await;
    let ct = |id: i64, args: Value| {
        modern(
            id,
            "tools/call",
            json!({"name": "call_tool", "arguments": args}),
        )
    };
    let cases = [
        (
            json!({"name": "mail_send_message", "arguments": {"to": "x"}}),
            "mail_send_message ran",
        ),
        (
            json!({"name": "mcp__toolbox__mail_list_labels", "arguments": "{\"a\": 1}"}),
            "mail_list_labels ran with {\"a\":1}",
        ),
        (
            json!({"name": "calendar_create_event"}),
            "calendar_create_event ran with {}",
        ),
        (json!({"name": "get-sum", "arguments": {}}), "get-sum ran"),
        // A near name runs nothing: a missing backend prefix, `_` for `-`, another case.
        (
            json!({"name": "create_event"}),
            "unknown tool 'create_event'. Did you mean: calendar_create_event",
        ),
        (
            json!({"name": "get_sum"}),
            "unknown tool 'get_sum'. Did you mean: get-sum",
        ),
        (
            json!({"name": "Mail_Send_Message"}),
            "unknown tool 'Mail_Send_Message'. Did you mean: mail_send_message",
        ),
    ];
    for (i, (args, want)) in cases.iter().enumerate() {
        let (status, r) = post_modern(&h, &ct(i as i64, args.clone())).await;
        assert_eq!(status, 200);
        assert!(text(&r["result"]).starts_with(want), "{args} -> {r}");
    }
    let (_, r) = post_modern(
        &h,
        &ct(10, json!({"name": "mail_send_mesage", "arguments": {}})),
    )
    .await;
    assert_eq!(r["result"]["isError"], true);
    let m = text(&r["result"]);
    assert!(m.contains("Did you mean: mail_send_message"), "{m}");
    assert!(m.contains("search_tools"), "{m}");
    let (_, r) = post_modern(&h, &ct(11, json!({"name": "echo", "arguments": "{nope"}))).await;
    assert!(text(&r["result"]).contains("not valid JSON"), "{r}");
    // An isError result counts as a failure.
    let (_, r) = post_modern(&h, &ct(12, json!({"name": "drive_fail_upload"}))).await;
    assert_eq!(r["result"]["isError"], true);

    let query = "schedule a meeting with zyxwvut";
    let s = modern(
        13,
        "tools/call",
        json!({"name": "search_tools", "arguments": {"query": query}}),
    );
    let (_, r) = post_modern(&h, &s).await;
    let reply: Value = serde_json::from_str(text(&r["result"])).unwrap();
    assert!(reply["mode"].is_string(), "{reply}");

    h.flush();
    let rows = h.query("SELECT tool, via, ok, error_kind, client FROM calls ORDER BY id");
    let want = [
        ("mail_send_message", 1),
        ("mail_list_labels", 1),
        ("calendar_create_event", 1),
        ("get-sum", 1),
        ("drive_fail_upload", 0),
    ];
    assert_eq!(rows.len(), want.len(), "{rows:?}");
    for (row, (tool, ok)) in rows.iter().zip(want) {
        assert_eq!(row[0], tool);
        assert_eq!(row[1], "call_tool");
        assert_eq!(row[2], ok);
        assert_eq!(row[4], "test-client");
    }
    let s = h.query("SELECT mode, result_count, reply_bytes, client, session_id FROM searches");
    assert_eq!(s.len(), 1);
    assert_eq!(s[0][2], json!(text(&r["result"]).len()));
    // Stateless calls share one session (client name + idle gap); never the query text on disk.
    let sessions = h.query("SELECT DISTINCT session_id FROM calls");
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0][0], s[0][4]);
    for f in ["state.db", "state.db-wal"] {
        let bytes = std::fs::read(h.db.with_file_name(f)).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("zyxwvut"),
            "query text stored in {f}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promote_shows_up_without_restart_and_upstream_down_says_so() {
    // Live updates: this session sees the promotion (by default only new sessions do).
    let h = Harness::start_live(&["mail_list_labels"]).await;
    assert_eq!(
        tools_list_names(&h).await,
        [
            "search_tools",
            "call_tool",
            "call_read_only_tool",
            "run_script",
            "mail_list_labels"
        ]
    );
    set_working_set(&h.db, &["calendar_list_events", "mail_list_labels"]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let names = tools_list_names(&h).await;
        if names
            == [
                "search_tools",
                "call_tool",
                "call_read_only_tool",
                "run_script",
                "calendar_list_events",
                "mail_list_labels",
            ]
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "working set change not seen: {names:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    h.fake.set_up(false);
    assert_eq!(
        tools_list_names(&h).await,
        ["search_tools", "call_tool", "run_script"]
    );
    let (_, d) = post_modern(&h, &modern(1, "server/discover", json!({}))).await;
    assert!(
        d["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("down"),
        "{d}"
    );
    let (status, c) = post_modern(
        &h,
        &modern(
            2,
            "tools/call",
            json!({"name": "mail_list_labels", "arguments": {}}),
        ),
    )
    .await;
    assert_eq!(status, 200);
    // An outage is a tool result the model reads, not a JSON-RPC error.
    assert!(c.get("error").is_none(), "{c}");
    assert_eq!(c["result"]["isError"], true, "{c}");
    let text = c["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with(
            "mws could not complete the call to 'mail_list_labels': upstream unavailable"
        ),
        "{c}"
    );
}
