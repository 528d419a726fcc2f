//! Raw-socket HTTP for what client libraries hide: a 413 sent before the body is read, and
//! long-lived SSE streams (`subscriptions/listen`) read event by event.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Harness, V, modern, set_working_set};

/// POSTs over a raw socket and returns the reply text. The server answers 413 from the
/// Content-Length alone and may close before the body is sent, which HTTP client libraries report
/// as a broken pipe instead of the response; a raw socket reads the response regardless.
pub async fn raw_post(url: &str, body: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url.trim_start_matches("http://").trim_end_matches("/mcp");
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).await.unwrap();
    let _ = s.write_all(body.as_bytes()).await;
    let mut out = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    String::from_utf8_lossy(&out).into_owned()
}

/// Reads the next `n` SSE `data:` messages from a raw socket (bounded wait); `buf` keeps what was
/// read past them.
async fn sse_messages(sock: &mut tokio::net::TcpStream, buf: &mut String, n: usize) -> Vec<Value> {
    use tokio::io::AsyncReadExt;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut msgs = Vec::new();
        let mut consumed = 0;
        while let Some(end) = buf[consumed..].find("\n\n") {
            let event = &buf[consumed..consumed + end];
            if let Some(d) = event.lines().find_map(|l| l.strip_prefix("data: ")) {
                msgs.push(serde_json::from_str::<Value>(d).unwrap());
            }
            consumed += end + 2;
            if msgs.len() == n {
                buf.drain(..consumed);
                return msgs;
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let mut chunk = [0u8; 4096];
        let got = tokio::time::timeout(left, sock.read(&mut chunk)).await;
        let got = got.expect("no SSE message in time").unwrap();
        assert!(got > 0, "stream ended");
        buf.push_str(&String::from_utf8_lossy(&chunk[..got]));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listen_stream_acknowledges_and_announces_promotions() {
    use tokio::io::AsyncWriteExt;
    let h = Harness::start(&["mail_list_labels"]).await;
    let listen = modern(
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true, "promptsListChanged": true}}),
    )
    .to_string();
    let addr = h
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let mut sock = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\n\
         MCP-Protocol-Version: {V}\r\nMcp-Method: subscriptions/listen\r\n\
         Content-Length: {}\r\n\r\n{listen}",
        listen.len()
    );
    sock.write_all(head.as_bytes()).await.unwrap();
    let mut buf = String::new();
    let ack = &sse_messages(&mut sock, &mut buf, 1).await[0];
    assert!(buf.is_empty() || !buf.contains("list_changed"));
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true})
    );
    assert_eq!(
        ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
    set_working_set(&h.db, &["calendar_list_events"]);
    let msgs = sse_messages(&mut sock, &mut buf, 1).await;
    assert_eq!(msgs[0]["method"], "notifications/tools/list_changed");
    assert_eq!(
        msgs[0]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        7
    );
}

/// `promote.schedule` in `mws serve`: with "every 2s" (the test-sized form of the same schedule),
/// the proxy ingests and promotes by itself, and a client listening for changes gets
/// `tools/list_changed` without anyone running `mws promote`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduled_promote_runs_by_itself_and_announces_it() {
    use std::os::unix::fs::PermissionsExt;
    use tokio::io::AsyncWriteExt;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let db = state.join("state.db");
    {
        let store = mws::store::Store::open(&db).unwrap();
        let call = mws::call::Call {
            ts: mws::clock::fmt(mws::clock::now() - time::Duration::hours(1)),
            session_id: "s1".into(),
            tool: "mail_list_labels".into(),
            via: "call_tool".into(),
            status: Some(mws::call::Status::Ok),
            source_key: "proxy:1".into(),
            ..mws::call::Call::default()
        };
        mws::store::log::insert_call(store.conn(), &call).unwrap();
    }
    let config = json!({
        "promote": {"schedule": "every 2s", "minSessions": 1, "minCalls": 1},
        "transcripts": []
    });
    let mut served = super::serve_cmd::spawn_serve(dir.path(), &config.to_string(), &["--demo"]);
    let addr = served
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let listen = modern(
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    )
    .to_string();
    let mut sock = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: text/event-stream\r\n\
         MCP-Protocol-Version: {V}\r\nMcp-Method: subscriptions/listen\r\n\
         Content-Length: {}\r\n\r\n{listen}",
        listen.len()
    );
    sock.write_all(head.as_bytes()).await.unwrap();
    let mut buf = String::new();
    let ack = &sse_messages(&mut sock, &mut buf, 1).await[0];
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    // The catalog arriving from the demo upstream may announce a change first; the promotion's
    // announcement is the one after which the working set holds the called tool.
    let store = mws::store::Store::open(&db).unwrap();
    let mut promoted = false;
    for _ in 0..5 {
        let msgs = sse_messages(&mut sock, &mut buf, 1).await;
        assert_eq!(msgs[0]["method"], "notifications/tools/list_changed");
        let listed: Vec<String> = store
            .working_set()
            .unwrap()
            .into_iter()
            .map(|l| l.tool)
            .collect();
        if listed.iter().any(|t| t == "mail_list_labels") {
            promoted = true;
            break;
        }
    }
    assert!(promoted, "no announced promotion of mail_list_labels");
    let runs: i64 = store
        .conn()
        .query_row("SELECT COUNT(*) FROM promotion_runs", [], |r| r.get(0))
        .unwrap();
    assert!(runs >= 1);
    super::serve_cmd::stop(&mut served);
}
