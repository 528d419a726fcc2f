//! `mws demo-upstream` driven over stdio as the proxy drives it: discover-first (2026-07-28) and
//! initialize-first (2025) sessions, the full paginated catalog, tools with real effects.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};

/// How long one reply may take before the test fails instead of hanging.
const REPLY_TIMEOUT: Duration = Duration::from_secs(10);

struct Demo {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    next_id: i64,
    modern: bool,
}

impl Demo {
    fn start(modern: bool) -> Demo {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mws"))
            .arg("demo-upstream")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start mws demo-upstream");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Demo {
            child,
            stdin: Some(stdin),
            lines,
            next_id: 0,
            modern,
        }
    }

    fn send(&mut self, msg: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{msg}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request (with the 2026 envelope in a modern session) and returns its result.
    fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.next_id += 1;
        if self.modern {
            params["_meta"] = json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "it", "version": "1"},
            });
        }
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let line = self
            .lines
            .recv_timeout(REPLY_TIMEOUT)
            .expect("a reply in time");
        let reply: Value = serde_json::from_str(&line).expect("the reply is JSON");
        assert_eq!(reply["id"], json!(id), "{line}");
        assert!(reply.get("error").is_none(), "{method} failed: {line}");
        reply["result"].clone()
    }

    fn tool_names(&mut self) -> Vec<String> {
        let (mut names, mut cursor) = (vec![], Value::Null);
        for _ in 0..10 {
            let r = self.request("tools/list", json!({"cursor": cursor}));
            names.extend(
                r["tools"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|t| t["name"].as_str().unwrap().to_string()),
            );
            match r.get("nextCursor") {
                Some(c) => cursor = c.clone(),
                None => return names,
            }
        }
        panic!("tools/list did not end within 10 pages");
    }

    fn call(&mut self, name: &str, args: Value) -> Value {
        let r = self.request("tools/call", json!({"name": name, "arguments": args}));
        assert_eq!(r["isError"], false, "{name}: {r}");
        serde_json::from_str(r["content"][0]["text"].as_str().unwrap()).unwrap()
    }
}

impl Drop for Demo {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn catalog_names() -> Vec<String> {
    let v: Value = serde_json::from_str(include_str!("../../fixtures/catalog.json")).unwrap();
    v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn send_then_list_mail(d: &mut Demo) {
    let sent = d.call(
        "mail_send_message",
        json!({"to": ["alex@example.com"], "subject": "From the test", "body": "hello"}),
    );
    let inbox = d.call("mail_list_messages", json!({"label": "INBOX", "limit": 3}));
    assert_eq!(inbox["messages"][0]["id"], sent["message"]["id"]);
    assert_eq!(inbox["messages"][0]["subject"], "From the test");
}

#[test]
fn discover_first_session() {
    let mut d = Demo::start(true);
    let disc = d.request("server/discover", json!({}));
    assert!(
        disc["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    assert_eq!(disc["resultType"], "complete");
    assert_eq!(d.tool_names(), catalog_names());
    assert_eq!(catalog_names().len(), 60);
    send_then_list_mail(&mut d);
    let ev = d.call(
        "calendar_create_event",
        json!({"title": "Demo", "start": "2030-01-02T10:00:00Z", "end": "2030-01-02T11:00:00Z"}),
    );
    let listed = d.call(
        "calendar_list_events",
        json!({"time_min": "2030-01-01T00:00:00Z"}),
    );
    assert_eq!(listed["events"][0]["id"], ev["created"]["id"]);
    let bad = d.request(
        "tools/call",
        json!({"name": "drive_read_file", "arguments": {"file_id": "nope"}}),
    );
    assert_eq!(bad["isError"], true);
}

#[test]
fn initialize_first_session() {
    let mut d = Demo::start(false);
    let init = d.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "it", "version": "1"}}));
    assert_eq!(init["protocolVersion"], "2025-06-18");
    assert_eq!(init["serverInfo"]["name"], "mws-demo");
    d.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(d.request("ping", json!({})), json!({}));
    assert_eq!(d.tool_names(), catalog_names());
    send_then_list_mail(&mut d);
    let found = d.call(
        "codesearch_find_symbol",
        json!({"symbol": "partial_refund"}),
    );
    assert_eq!(found["definitions"][0]["path"], "src/refund.rs");
}

#[test]
fn end_of_input_ends_the_server() {
    let mut d = Demo::start(true);
    d.request("server/discover", json!({}));
    drop(d.stdin.take());
    for _ in 0..100 {
        if let Some(status) = d.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("demo-upstream did not exit within 5 s of end of input");
}

/// The official Rust SDK's client (rmcp, a dev-dependency) connects to the hand-written demo
/// upstream in each lifecycle mode, pages through the catalog and calls a tool.
async fn rmcp_client_session(mode: rmcp::service::ClientLifecycleMode, era: &str) {
    use rmcp::model::CallToolRequestParams;
    use rmcp::service::ClientServiceExt;
    use rmcp::transport::TokioChildProcess;

    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_mws"));
    cmd.arg("demo-upstream").kill_on_drop(true);
    let transport = TokioChildProcess::new(cmd).expect("spawn mws demo-upstream");
    let client = tokio::time::timeout(REPLY_TIMEOUT, ().serve_with_lifecycle(transport, mode))
        .await
        .expect("connected in time")
        .expect("rmcp client connects");
    let tools = client.list_all_tools().await.expect("tools/list");
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert_eq!(names, catalog_names());
    let args =
        json!({"to": ["alex@example.com"], "subject": format!("via rmcp {era}"), "body": "hi"});
    let sent = client
        .call_tool(
            CallToolRequestParams::new("mail_send_message")
                .with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .expect("tools/call");
    assert_eq!(sent.is_error, Some(false), "{sent:?}");
    let listed = client
        .call_tool(
            CallToolRequestParams::new("mail_search_messages")
                .with_arguments(json!({"query": era}).as_object().unwrap().clone()),
        )
        .await
        .expect("tools/call");
    let text = serde_json::to_string(&listed.content).unwrap();
    assert!(text.contains(&format!("via rmcp {era}")), "{text}");
    client.cancel().await.expect("close the client");
}

#[tokio::test]
async fn rmcp_client_in_every_lifecycle_mode() {
    use rmcp::model::ProtocolVersion;
    use rmcp::service::ClientLifecycleMode;
    rmcp_client_session(ClientLifecycleMode::Initialize, "initialize").await;
    rmcp_client_session(
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
        "discover",
    )
    .await;
    rmcp_client_session(
        ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        },
        "auto",
    )
    .await;
}
