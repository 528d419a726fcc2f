//! A stdio upstream's tool result passes `mws serve --stdio` as the bytes it came in (`mcp::raw`),
//! through one server and through several (`servers`), to a client of either era: the upstream
//! (`support/named_stdio.py`, Python's `json.dumps`) writes `", "` and `": "` between members,
//! and a result read into a tree would be written back compact. A call through `call_tool` takes
//! the tree path, so the same result comes back compact, with the same meaning. A client id too
//! big for a JSON number comes back as its digits around the kept bytes.

use serde_json::{Value, json};

use super::modern;
use crate::support::serve::StdioServed;

/// What Python writes for the fixture's answer to `tool`.
fn as_sent(tool: &str) -> String {
    format!(r#"[{{"type": "text", "text": "ran {tool}"}}]"#)
}

async fn reply(mws: &mut StdioServed, id: i64) -> (String, Value) {
    let line = mws.reply_line(id).await;
    let msg = serde_json::from_str(&line).unwrap();
    (line, msg)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_upstreams_result_passes_as_sent_in_either_era() {
    let fixture = crate::support::root().join("tests/it/support/named_stdio.py");
    for fleet in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let tools = dir.path().join("tools.json");
        let tool = json!({"name": "list_repos", "description": "Lists repositories.",
            "inputSchema": {"type": "object"}});
        std::fs::write(&tools, json!([tool]).to_string()).unwrap();
        let server = json!({"command": "python3",
            "args": [&fixture, &tools, dir.path().join("ran.log")]});
        let (config, name) = match fleet {
            false => (json!({"upstream": server}), "list_repos"),
            true => (json!({"servers": {"gh": server}}), "gh__list_repos"),
        };
        let mut config = config;
        config["timeouts"] = json!({"listMs": 20000, "callMs": 20000});
        config["transcripts"] = json!([]);
        let mut mws = StdioServed::start(dir.path(), &config);
        mws.initialize("passthrough-test").await;
        let call = json!({"name": name, "arguments": {}});
        mws.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}))
            .await;
        let (line, legacy) = reply(&mut mws, 1).await;
        assert!(
            line.contains(&as_sent("list_repos")),
            "fleet {fleet}: {line}"
        );
        assert_eq!(legacy["jsonrpc"], "2.0");
        assert_eq!(legacy["result"]["content"][0]["text"], "ran list_repos");
        assert!(legacy["result"].get("resultType").is_none(), "{line}");
        // A 2026 request: the same bytes, and the top level bridged for its era.
        mws.send(&modern(2, "tools/call", call.clone())).await;
        let (line, modern) = reply(&mut mws, 2).await;
        assert!(
            line.contains(&as_sent("list_repos")),
            "fleet {fleet}: {line}"
        );
        assert_eq!(modern["result"]["resultType"], "complete", "{line}");
        assert_eq!(modern["result"]["content"], legacy["result"]["content"]);
        // Through `call_tool`: the tree path, the same result written compact.
        let via = json!({"name": "call_tool", "arguments": call});
        mws.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": via}))
            .await;
        let (line, tree) = reply(&mut mws, 3).await;
        assert!(!line.contains(&as_sent("list_repos")), "{line}");
        assert_eq!(tree["result"], legacy["result"], "{line}");
        // An id too big for a JSON number comes back as its digits around the kept bytes.
        let big = "123456789012345678901234567890";
        let params = json!({"name": name, "arguments": {}});
        mws.send_text(&format!(
            r#"{{"jsonrpc":"2.0","id":{big},"method":"tools/call","params":{params}}}"#
        ))
        .await;
        let line = loop {
            let line = mws.next_line().await;
            if line.contains(big) {
                break line;
            }
        };
        assert!(line.contains(&format!(r#""id":{big},"#)), "{line}");
        assert!(line.contains(&as_sent("list_repos")), "{line}");
        mws.close().await;
    }
}
