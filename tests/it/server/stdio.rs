//! `--stdio` in memory: the same handler over a duplex pipe, both eras, bad lines answered.

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use super::{Harness, modern};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_serves_both_eras_and_survives_garbage() {
    let h = Harness::start(&["mail_list_labels"]).await;
    let (client, server) = tokio::io::duplex(1 << 16);
    let (sr, sw) = tokio::io::split(server);
    let task = tokio::spawn(mws::server::stdio::serve(h.proxy.clone(), sr, sw));
    let (cr, mut cw) = tokio::io::split(client);
    let mut lines = BufReader::new(cr).lines();
    let mut ask = async |line: String| -> Value {
        cw.write_all(format!("{line}\n").as_bytes()).await.unwrap();
        let l = lines.next_line().await.unwrap().unwrap();
        serde_json::from_str(&l).unwrap()
    };
    let r = ask("not json".into()).await;
    assert_eq!(r["error"]["code"], -32700);
    let r = ask("[1,2]".into()).await;
    assert_eq!(r["error"]["code"], -32600);
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "claude-code"}}});
    let r = ask(init.to_string()).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-11-25");
    let r = ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).to_string()).await;
    assert_eq!(r["result"]["tools"][4]["name"], "mail_list_labels");
    let r = ask(modern(3, "tools/list", json!({})).to_string()).await;
    assert_eq!(r["result"]["resultType"], "complete");
    let call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "call_tool", "arguments": {"name": "mail_send_message", "arguments": {"to": "ana"}}}});
    let r = ask(call.to_string()).await;
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("mail_send_message ran"),
        "{r}"
    );
    // EOF on the server's stdin: it finishes and returns.
    cw.shutdown().await.unwrap();
    task.await.unwrap().unwrap();
    h.flush();
    let rows = h.query("SELECT client, via, session_id LIKE 'stdio:%' FROM calls");
    assert_eq!(
        rows,
        [vec![json!("claude-code"), json!("call_tool"), json!(1)]]
    );
}
