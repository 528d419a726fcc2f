//! `mws serve --demo` as the README's quick start has a newcomer run it (debug binary here): it
//! serves the built-in demo upstream's pins, a listed tool and an unlisted one really work, and
//! `search_tools` and `mws search` find a tool by what it does.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::clients;
use crate::support::demo_pins;
use crate::support::serve::{self, names, post_modern};

/// How long the demo upstream may take to list its catalog before the test fails.
const SETTLE: Duration = Duration::from_secs(30);

fn text(reply: &Value) -> String {
    assert_ne!(reply["result"]["isError"], true, "{reply}");
    clients::text(&reply["result"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_demo_lists_pins_calls_tools_and_searches() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let mut served = serve::start_in(dir, &json!({}), &["--demo"]);
    let mut want = vec![
        "search_tools".to_string(),
        "call_tool".to_string(),
        "call_read_only_tool".to_string(),
        "run_script".to_string(),
    ];
    want.extend(demo_pins().iter().map(|s| s.to_string()));
    let deadline = Instant::now() + SETTLE;
    loop {
        let got = names(&post_modern(&served.url, 1, "tools/list", json!({})).await);
        if got == want {
            break;
        }
        assert!(Instant::now() < deadline, "demo pins never listed: {got:?}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // A listed tool directly, then an unlisted one directly and through call_tool.
    let create = json!({"name": "calendar_create_event", "arguments": {
        "title": "Design review", "start": "2026-12-01T10:00:00Z", "end": "2026-12-01T11:00:00Z"}});
    let r = post_modern(&served.url, 2, "tools/call", create).await;
    assert!(text(&r).contains("Design review"), "{r}");
    let get = json!({"name": "calendar_search_events", "arguments": {"query": "Design review"}});
    let r = post_modern(&served.url, 3, "tools/call", get.clone()).await;
    assert!(text(&r).contains("Design review"), "{r}");
    let via = json!({"name": "call_tool", "arguments": get});
    let r = post_modern(&served.url, 4, "tools/call", via).await;
    assert!(text(&r).contains("Design review"), "{r}");

    // search_tools finds an unlisted tool by what it does.
    let q = json!({"name": "search_tools", "arguments": {"query": "cancel a meeting"}});
    let r = post_modern(&served.url, 5, "tools/call", q).await;
    assert!(text(&r).contains("calendar_delete_event"), "{r}");

    // `mws search` on the catalog the demo proxy stored, and on the one the README names.
    let readme_catalog = crate::support::root().join("fixtures/catalog.json");
    for catalog in [state.join("catalog.json"), readme_catalog] {
        let out = serve::mws()
            .arg("search")
            .arg("--catalog")
            .arg(&catalog)
            .arg("schedule a meeting")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(stdout.contains("calendar_create_event"), "{stdout}");
    }
    served.stop();
    let rows = served.calls();
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows.iter().all(|r| r.3), "{rows:?}");
}
