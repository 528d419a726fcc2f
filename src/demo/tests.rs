//! Unit tests for the demo upstream's protocol layer: both eras, errors, pagination.

use serde_json::{Value, json};
use time::macros::datetime;

use super::protocol::{Server, TOOLS_PAGE_SIZE, catalog_tools};

fn server() -> Server {
    Server::new(datetime!(2026-12-01 08:00 UTC))
}

fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": {},
           "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"}})
}

fn req(s: &mut Server, id: i64, method: &str, mut params: Value) -> Value {
    let reply =
        s.handle(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params.take()}));
    let reply = reply.expect("a request gets a reply");
    assert_eq!(reply["id"], json!(id));
    reply
}

fn modern(s: &mut Server, id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = meta();
    req(s, id, method, params)
}

fn error_code(reply: &Value) -> i64 {
    reply["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("not an error: {reply}"))
}

/// Follows nextCursor and returns every tool name.
fn all_tool_names(s: &mut Server, modern_era: bool) -> Vec<String> {
    let (mut names, mut cursor, mut pages) = (vec![], Value::Null, 0);
    loop {
        let params = json!({"cursor": cursor});
        let r = if modern_era {
            modern(s, 100 + pages, "tools/list", params)
        } else {
            req(s, 100 + pages, "tools/list", params)
        };
        let result = &r["result"];
        names.extend(
            result["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string()),
        );
        pages += 1;
        match result.get("nextCursor") {
            Some(c) => cursor = c.clone(),
            None => break,
        }
    }
    assert_eq!(
        pages as usize,
        catalog_tools().len().div_ceil(TOOLS_PAGE_SIZE)
    );
    names
}

#[test]
fn discover_first_serves_statelessly() {
    let mut s = server();
    let d = modern(&mut s, 1, "server/discover", json!({}));
    let r = &d["result"];
    assert_eq!(r["supportedVersions"][0], "2026-07-28");
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["cacheScope"], "public");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "mws-demo"
    );
    assert!(r["capabilities"]["tools"].is_object());
    let names = all_tool_names(&mut s, true);
    let want: Vec<String> = catalog_tools()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, want);
    let call = modern(
        &mut s,
        2,
        "tools/call",
        json!({"name": "mail_list_labels", "arguments": {}}),
    );
    assert_eq!(call["result"]["resultType"], "complete");
    assert_eq!(call["result"]["isError"], false);
    // ping and logging/setLevel do not exist in 2026-07-28.
    assert_eq!(error_code(&modern(&mut s, 3, "ping", json!({}))), -32601);
}

#[test]
fn initialize_first_opens_a_legacy_session() {
    let mut s = server();
    let before = req(&mut s, 1, "tools/list", json!({}));
    assert!(
        before["error"]["message"]
            .as_str()
            .unwrap()
            .contains("send \"initialize\" first")
    );
    for (asked, got) in [
        ("2025-03-26", "2025-03-26"),
        ("2025-06-18", "2025-06-18"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("1999-01-01", "2025-11-25"),
    ] {
        let init = req(
            &mut s,
            2,
            "initialize",
            json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], got, "asked {asked}");
    }
    assert_eq!(
        s.handle(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})),
        None
    );
    assert_eq!(req(&mut s, 3, "ping", json!({}))["result"], json!({}));
    assert_eq!(all_tool_names(&mut s, false).len(), 60);
    let list = req(&mut s, 4, "tools/list", json!({}));
    assert!(
        list["result"].get("resultType").is_none(),
        "legacy results carry no 2026 fields"
    );
    // Modern requests are still served statelessly on the same connection.
    assert_eq!(
        modern(&mut s, 5, "tools/list", json!({}))["result"]["resultType"],
        "complete"
    );
}

#[test]
fn protocol_errors() {
    let mut s = server();
    let cases: &[(Value, i64, &str)] = &[
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2031-01-01", "io.modelcontextprotocol/clientCapabilities": {}}}}),
            -32022,
            "Unsupported protocol version",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}}),
            -32602,
            "clientCapabilities",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"cursor": "page:999", "_meta": meta()}}),
            -32602,
            "invalid cursor",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "nope", "_meta": meta()}}),
            -32602,
            "unknown tool: nope",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mail_get_message", "arguments": {}, "_meta": meta()}}),
            -32602,
            "missing required argument \"message_id\"",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "mail_get_message", "arguments": [1], "_meta": meta()}}),
            -32602,
            "must be an object",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "nope/nope", "params": {"_meta": meta()}}),
            -32601,
            "Method not found",
        ),
        (
            json!({"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "demo://nope", "_meta": meta()}}),
            -32602,
            "Resource not found",
        ),
        (
            json!([{"jsonrpc": "2.0", "id": 1, "method": "ping"}]),
            -32600,
            "batches are not supported",
        ),
    ];
    for (msg, code, text) in cases {
        let r = s.handle(msg.clone()).unwrap();
        assert_eq!(error_code(&r), *code, "{msg}: {r}");
        assert!(
            r["error"]["message"].as_str().unwrap().contains(text),
            "{msg}: {r}"
        );
    }
    let bad = s.handle_line("{not json").unwrap();
    assert!(
        bad.contains("-32700") && bad.contains("\"id\":null"),
        "{bad}"
    );
    let unsupported = s.handle(cases[0].0.clone()).unwrap();
    assert_eq!(unsupported["error"]["data"]["requested"], "2031-01-01");
}

#[test]
fn a_failing_tool_is_an_error_result_not_a_protocol_error() {
    let mut s = server();
    let r = modern(
        &mut s,
        1,
        "tools/call",
        json!({"name": "mail_get_message", "arguments": {"message_id": "msg_nope"}}),
    );
    assert_eq!(r["result"]["isError"], true);
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("no message with id")
    );
}

#[test]
fn resources_and_prompts_see_the_live_state() {
    let mut s = server();
    modern(
        &mut s,
        1,
        "tools/call",
        json!({"name": "mail_send_message", "arguments": {"to": ["alex@example.com"], "subject": "Fresh", "body": "x"}}),
    );
    let inbox = modern(
        &mut s,
        2,
        "resources/read",
        json!({"uri": "demo://mail/inbox"}),
    );
    assert!(
        inbox["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("Fresh")
    );
    assert_eq!(inbox["result"]["ttlMs"], 60000);
    let file = modern(
        &mut s,
        3,
        "resources/read",
        json!({"uri": "demo://drive/file/doc_notes"}),
    );
    assert!(
        file["result"]["contents"][0]["text"]
            .as_str()
            .unwrap()
            .contains("freeze the API")
    );
    assert_eq!(
        modern(&mut s, 4, "resources/list", json!({}))["result"]["resources"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(
        modern(&mut s, 5, "resources/templates/list", json!({}))["result"]["resourceTemplates"][0]
            ["name"],
        "drive-file"
    );
    let prompt = modern(
        &mut s,
        6,
        "prompts/get",
        json!({"name": "schedule_meeting", "arguments": {"person": "sam@example.com"}}),
    );
    assert!(
        prompt["result"]["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("sam@example.com")
    );
    assert_eq!(
        error_code(&modern(
            &mut s,
            7,
            "prompts/get",
            json!({"name": "schedule_meeting"})
        )),
        -32602
    );
    assert_eq!(
        modern(&mut s, 8, "prompts/list", json!({}))["result"]["prompts"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let done = modern(
        &mut s,
        9,
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": "schedule_meeting"}, "argument": {"name": "person", "value": "s"}}),
    );
    assert_eq!(
        done["result"]["completion"]["values"],
        json!(["sam@example.com"])
    );
    // Legacy sessions get the 2025 not-found code.
    req(
        &mut s,
        10,
        "initialize",
        json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(
        error_code(&req(
            &mut s,
            11,
            "resources/read",
            json!({"uri": "demo://nope"})
        )),
        -32002
    );
}

#[test]
fn the_proxy_runs_this_executable_as_the_demo_upstream() {
    let crate::config::Upstream::Stdio(s) = super::demo_upstream_config() else {
        panic!("the demo upstream is a stdio child");
    };
    assert_eq!(
        s.command,
        std::env::current_exe().unwrap().display().to_string()
    );
    assert_eq!(s.args, ["demo-upstream"]);
    assert!(s.env.is_empty() && s.cwd.is_none());
}

#[test]
fn demo_pins_are_catalog_tools() {
    let names: Vec<String> = catalog_tools()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    for pin in super::DEMO_PINS {
        assert!(
            names.iter().any(|n| n == pin),
            "{pin} is not in the catalog"
        );
    }
}
