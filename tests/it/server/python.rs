//! The official Python SDK client (PyPI `mcp`, pinned in tests/peers/requirements.txt) against the
//! proxy in its three connect modes (auto, legacy, 2026-07-28): in front of the fake upstream, and
//! as `mws serve` in front of the real `@modelcontextprotocol/server-everything` over stdio.

use std::time::Duration;

use serde_json::{Value, json};

use super::Harness;

use crate::support::peer;

/// One client run: list, direct calls to a listed and an unlisted tool, call_tool, search.
pub async fn run_client(url: &str, mode: &str, calls: [(&str, Value); 2], query: &str) -> Value {
    let [(listed, la), (unlisted, ua)] = calls;
    let out = tokio::process::Command::new(peer(".venv/bin/python"))
        .arg(peer("tests/peers/mcp_client.py"))
        .args([
            url,
            mode,
            listed,
            &la.to_string(),
            unlisted,
            &ua.to_string(),
            query,
        ])
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(60), out)
        .await
        .expect("python client timed out")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mode {mode}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

const MODES: [(&str, &str); 3] = [
    ("auto", "2026-07-28"),
    ("legacy", "2025-11-25"),
    ("2026-07-28", "2026-07-28"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_client_in_every_mode() {
    let h = Harness::start(&["mail_list_labels"]).await;
    for (mode, want_version) in MODES {
        let calls = [
            ("mail_list_labels", json!({"n": 1})),
            ("calendar_create_event", json!({"n": 3})),
        ];
        let r = run_client(&h.url, mode, calls, "schedule a meeting").await;
        assert_eq!(r["protocol_version"], want_version, "mode {mode}");
        let want = json!([
            "search_tools",
            "call_tool",
            "call_read_only_tool",
            "run_script",
            "mail_list_labels"
        ]);
        assert_eq!(r["tools"], want, "mode {mode}");
        let all_loaded = r["always_load"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b == true);
        assert!(all_loaded, "mode {mode}: {r}");
        assert_eq!(r["annotations"]["search_tools"]["readOnlyHint"], true);
        for k in ["direct_listed", "direct_unlisted", "via_call_tool"] {
            assert_eq!(r[k]["isError"], false, "mode {mode} {k}: {r}");
        }
        let text = |k: &str| r[k]["text"].as_str().unwrap().to_string();
        assert!(text("direct_unlisted").starts_with("calendar_create_event ran"));
        assert!(text("via_call_tool").contains("{\"n\":3}"));
    }
    h.flush();
    let rows = h.query("SELECT via, COUNT(*) FROM calls GROUP BY via ORDER BY via");
    assert_eq!(
        rows,
        [
            vec![json!("call_tool"), json!(3)],
            vec![json!("direct"), json!(6)]
        ]
    );
}

/// `mws serve` in front of the real server-everything (stdio, legacy only), every client mode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_through_mws_serve_to_server_everything() {
    let everything =
        peer("tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "upstream": {"command": "node", "args": [everything, "stdio"]},
        "pins": ["echo"],
        "transcripts": []
    });
    let mut served = super::serve_cmd::spawn_serve(dir.path(), &config.to_string(), &[]);
    for (mode, want_version) in MODES {
        let calls = [
            ("echo", json!({"message": "hi"})),
            ("get-sum", json!({"a": 2, "b": 3})),
        ];
        let r = run_client(&served.url, mode, calls, "add two numbers").await;
        assert_eq!(r["protocol_version"], want_version, "mode {mode}");
        assert_eq!(
            r["tools"],
            json!([
                "search_tools",
                "call_tool",
                "call_read_only_tool",
                "run_script",
                "echo"
            ]),
            "mode {mode}"
        );
        assert!(
            r["always_load"]
                .as_array()
                .unwrap()
                .iter()
                .all(|b| b == true)
        );
        for k in ["direct_listed", "direct_unlisted", "via_call_tool"] {
            assert_eq!(r[k]["isError"], false, "mode {mode} {k}: {r}");
        }
        assert!(
            r["direct_listed"]["text"].as_str().unwrap().contains("hi"),
            "{r}"
        );
        assert!(
            r["direct_unlisted"]["text"].as_str().unwrap().contains('5'),
            "{r}"
        );
        assert!(
            r["via_call_tool"]["text"].as_str().unwrap().contains('5'),
            "{r}"
        );
        assert!(
            r["search"]["text"].as_str().unwrap().contains("get-sum"),
            "{r}"
        );
    }
    super::serve_cmd::stop(&mut served);
    let store = mws::store::Store::open(&dir.path().join("state/state.db")).unwrap();
    let mut stmt = store
        .conn()
        .prepare(
            "SELECT tool, via, COUNT(*), SUM(ok) FROM calls GROUP BY tool, via ORDER BY tool, via",
        )
        .unwrap();
    let rows: Vec<(String, String, i64, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want = [
        ("echo", "direct", 3, 3),
        ("get-sum", "call_tool", 3, 3),
        ("get-sum", "direct", 3, 3),
    ];
    let want: Vec<(String, String, i64, i64)> = want
        .iter()
        .map(|(t, v, n, k)| (t.to_string(), v.to_string(), *n, *k))
        .collect();
    assert_eq!(rows, want);
}

/// `listing: "auto"` as the Python SDK client sees it: in front of mcp-server-time (two tools,
/// about 540 tokens, under `listAllBelowTokens`) every tool and no meta-tools; in front of the
/// demo (60 tools) the meta-tools and the working set. `call_tool` still works either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_sees_auto_listing_by_catalog_size() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "upstream": {"command": crate::support::mcp_server_time(), "args": ["--local-timezone", "UTC"]},
        "listing": "auto",
        "listAllBelowTokens": 1000,
        "transcripts": []
    });
    let mut served = super::serve_cmd::spawn_serve(dir.path(), &config.to_string(), &[]);
    let convert =
        json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"});
    let calls = [
        ("get_current_time", json!({"timezone": "UTC"})),
        ("convert_time", convert),
    ];
    let r = run_client(&served.url, "auto", calls, "convert a time").await;
    assert_eq!(
        r["tools"],
        json!(["get_current_time", "convert_time", "run_script"]),
        "{r}"
    );
    for k in ["direct_listed", "direct_unlisted", "via_call_tool"] {
        assert_eq!(r[k]["isError"], false, "{k}: {r}");
    }
    super::serve_cmd::stop(&mut served);

    let dir = tempfile::tempdir().unwrap();
    let config = json!({"listing": "auto", "listAllBelowTokens": 1000, "transcripts": []});
    let mut served = super::serve_cmd::spawn_serve(dir.path(), &config.to_string(), &["--demo"]);
    let calls = [
        ("mail_list_labels", json!({})),
        ("mail_list_labels", json!({})),
    ];
    let r = run_client(&served.url, "auto", calls, "send an email").await;
    let tools = r["tools"].as_array().unwrap();
    assert_eq!(
        tools[..2],
        [json!("search_tools"), json!("call_tool")],
        "{r}"
    );
    assert!(tools.len() < 10, "the working set, not the 60 tools: {r}");
    assert!(
        r["search"]["text"]
            .as_str()
            .unwrap()
            .contains("mail_send_message"),
        "{r}"
    );
    super::serve_cmd::stop(&mut served);
}

/// Code mode through `mws serve` in front of two servers (server-everything and
/// mcp-server-time): the Python SDK client runs one script that calls tools of both in a loop,
/// filters their results and returns a summary; a tool the policy denies is refused inside it;
/// every call is a `calls` row with via 'script' and the run a `script_runs` row.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_runs_a_script_over_two_servers_through_mws_serve() {
    let everything =
        peer("tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "servers": {
            "everything": {"command": "node", "args": [everything, "stdio"]},
            "time": {"command": crate::support::mcp_server_time(), "args": ["--local-timezone", "UTC"]},
        },
        "listing": "working-set",
        "policy": {"deny": ["time__convert_time"]},
        "codeMode": {"enabled": true},
        "transcripts": []
    });
    let mut served = super::serve_cmd::spawn_serve(dir.path(), &config.to_string(), &[]);
    let code = r#"
        const zones = ["UTC", "Asia/Tokyo", "Europe/Paris", "Not/AZone"];
        const known = [];
        for (const tz of zones) {
          let now;
          try {
            now = await tools.time__get_current_time({timezone: tz});
          } catch (e) {
            continue;
          }
          const t = typeof now === "string" ? JSON.parse(now) : now;
          const echoed = await tools.everything__echo({message: t.timezone});
          if (JSON.stringify(echoed).includes(tz)) known.push(tz);
        }
        const sum = await tools["everything__get-sum"]({a: known.length, b: 100});
        let refused = "";
        try {
          await tools.time__convert_time({source_timezone: "UTC", time: "12:00", target_timezone: "Asia/Tokyo"});
        } catch (e) {
          refused = e.message;
        }
        return {known, sum: JSON.stringify(sum).includes("103"), refused};
    "#;
    let out = tokio::process::Command::new(peer(".venv/bin/python"))
        .arg(peer("tests/peers/script_client.py"))
        .args([&served.url, code])
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(90), out)
        .await
        .expect("python client timed out")
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        r["tools"]
            .as_array()
            .unwrap()
            .contains(&json!("run_script")),
        "{r}"
    );
    assert_eq!(r["isError"], false, "{r}");
    let summary: Value = serde_json::from_str(r["text"].as_str().unwrap()).unwrap();
    assert_eq!(
        summary["known"],
        json!(["UTC", "Asia/Tokyo", "Europe/Paris"])
    );
    assert_eq!(summary["sum"], true, "{summary}");
    let refused = summary["refused"].as_str().unwrap();
    assert!(
        refused.starts_with("time__convert_time may not be called: the policy in mws's config"),
        "{refused}"
    );
    super::serve_cmd::stop(&mut served);
    let store = mws::store::Store::open(&dir.path().join("state/state.db")).unwrap();
    let mut stmt = store
        .conn()
        .prepare(
            "SELECT tool, via, COUNT(*), SUM(ok), MAX(error_kind) FROM calls GROUP BY tool, via \
             ORDER BY tool",
        )
        .unwrap();
    let rows: Vec<Value> = stmt
        .query_map([], |r| {
            Ok(json!([
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, Option<String>>(4)?
            ]))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        rows,
        [
            json!(["everything__echo", "script", 3, 3, null]),
            json!(["everything__get-sum", "script", 1, 1, null]),
            json!(["time__convert_time", "script", 1, 0, "denied_by_policy"]),
            json!(["time__get_current_time", "script", 4, 3, "error"]),
        ]
    );
    let runs: (String, i64) = store
        .conn()
        .query_row("SELECT outcome, calls FROM script_runs", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!(runs, ("ok".to_string(), 9));
}
