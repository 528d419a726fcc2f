//! The product's loop through the real binaries: a tool called through `mws serve` from two
//! sessions is promoted by `mws promote` (run beside it, as a user or a timer would), and the
//! running proxy lists it at the next `tools/list`, without a restart.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::rmcp_upstream;
use crate::support::serve::{self, names, post_modern, post_modern_as};

/// How long the rows and the new working set may take to show up before the test fails.
const SETTLE: Duration = Duration::from_secs(15);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn promote_shows_up_in_the_next_tools_list_without_restart() {
    let up = rmcp_upstream::start(false).await;
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    serve::write_working_set(&state.join("state.db"), &["echo"]);
    // Live updates: the same (stateless) client sees the promotion in its next tools/list.
    let config = json!({"upstream": {"url": up.url}, "stateDir": state, "transcripts": [],
                        "listingUpdates": "live"});
    let config_path = dir.path().join("config.json");
    let mut served = serve::start_in(dir, &config, &[]);
    let before = ["search_tools", "call_tool", "run_script", "echo"];
    let deadline = Instant::now() + SETTLE;
    while names(&post_modern(&served.url, 1, "tools/list", json!({})).await) != before {
        assert!(Instant::now() < deadline, "catalog never arrived");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // `add` is unlisted; two clients (two sessions) call it directly.
    for client in ["first-client", "second-client"] {
        let params = json!({"name": "add", "arguments": {"a": 1, "b": 2}});
        let r = post_modern_as(client, &served.url, 2, "tools/call", params).await;
        assert_eq!(r["result"]["content"][0]["text"], "3", "{r}");
    }
    let deadline = Instant::now() + SETTLE;
    while served
        .calls()
        .iter()
        .filter(|c| c.0 == "add" && c.3)
        .count()
        < 2
    {
        assert!(
            Instant::now() < deadline,
            "calls never reached the database"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let out = serve::mws()
        .args([
            "--config",
            config_path.to_str().unwrap(),
            "promote",
            "--no-ingest",
        ])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("add"),
        "promote did not mention add: {stdout}"
    );

    // `echo`, listed but never called, is dropped by the same run (promote.keepDays).
    let after = ["search_tools", "call_tool", "run_script", "add"];
    let deadline = Instant::now() + SETTLE;
    loop {
        let got = names(&post_modern(&served.url, 3, "tools/list", json!({})).await);
        if got == after {
            break;
        }
        assert!(Instant::now() < deadline, "promotion not listed: {got:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    served.stop();
}
