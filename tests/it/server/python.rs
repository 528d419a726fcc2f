//! The official Python SDK client (PyPI `mcp`, pinned in tests/peers/requirements.txt) against the
//! proxy in its three connect modes: auto, legacy and 2026-07-28.

use serde_json::Value;

use super::Harness;

fn python() -> std::path::PathBuf {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(".venv/bin/python");
    assert!(
        p.exists(),
        "{} is missing: run scripts/setup-peers.sh first",
        p.display()
    );
    p
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_client_in_every_mode() {
    let h = Harness::start(&["mail_list_labels"]).await;
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mcp_client.py");
    for (mode, want_version) in [
        ("auto", "2026-07-28"),
        ("legacy", "2025-11-25"),
        ("2026-07-28", "2026-07-28"),
    ] {
        let out = tokio::process::Command::new(python())
            .arg(&script)
            .args([
                &h.url,
                mode,
                "mail_list_labels",
                "calendar_create_event",
                "schedule a meeting",
            ])
            .kill_on_drop(true)
            .output();
        let out = tokio::time::timeout(std::time::Duration::from_secs(60), out)
            .await
            .expect("python client timed out")
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "mode {mode}: {stderr}");
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(r["protocol_version"], want_version, "mode {mode}");
        assert_eq!(
            r["tools"],
            serde_json::json!(["search_tools", "call_tool", "mail_list_labels"]),
            "mode {mode}"
        );
        assert!(
            r["always_load"]
                .as_array()
                .unwrap()
                .iter()
                .all(|b| b == true),
            "mode {mode}: {r}"
        );
        assert_eq!(r["annotations"]["search_tools"]["readOnlyHint"], true);
        for k in ["direct_listed", "direct_unlisted", "via_call_tool"] {
            assert_eq!(r[k]["isError"], false, "mode {mode} {k}: {r}");
        }
        assert!(
            r["direct_unlisted"]["text"]
                .as_str()
                .unwrap()
                .starts_with("calendar_create_event ran")
        );
        assert!(
            r["via_call_tool"]["text"]
                .as_str()
                .unwrap()
                .contains("{\"n\":3}")
        );
    }
    h.flush();
    let rows = h.query("SELECT via, COUNT(*) FROM calls GROUP BY via ORDER BY via");
    assert_eq!(
        rows,
        [
            vec![serde_json::json!("call_tool"), serde_json::json!(3)],
            vec![serde_json::json!("direct"), serde_json::json!(6)]
        ]
    );
}
