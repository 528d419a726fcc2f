//! One rule for what is listed: the tools `mws serve` lists are the ones `mws report` counts as
//! listed, `mws search` marks `listed` and `mws doctor` counts, all from the `working_set` table
//! (no `working-set.json` here) plus config pins. And the message a user reads when a command has
//! no catalog at all.

use std::path::Path;
use std::process::Output;

use serde_json::{Value, json};

use super::support::serve::{self, mws};

fn fixture_catalog() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalog.json")
}

/// An upstream that refuses at once (the discard port on loopback): every command falls back to
/// `catalog.json`, as the proxy does.
fn config(state: &Path) -> Value {
    json!({
        "upstream": {"url": "http://127.0.0.1:9/mcp"},
        "stateDir": state,
        "timeouts": {"listMs": 1000},
        "pins": ["drive_list_files", "drive_share_file"]
    })
}

fn run(config: &Path, args: &[&str]) -> Output {
    mws()
        .arg("--config")
        .arg(config)
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_report_search_and_doctor_list_the_same_tools() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::copy(fixture_catalog(), state.join("catalog.json")).unwrap();
    serve::write_working_set(
        &state.join("state.db"),
        &["drive_share_file", "gone_tool", "mail_send_message"],
    );
    let cfg = config(&state);
    let cfg_path = dir.path().join("config.json");
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();

    let mut served = serve::start_in(dir, &cfg, &[]);
    let reply = serve::post_modern(&served.url, 1, "tools/list", json!({})).await;
    served.stop();
    let listed: Vec<String> = serve::names(&reply)
        .into_iter()
        .filter(|n| !mws::catalog::exposed::is_meta(n))
        .collect();
    // Working-set order, the tool the upstream lacks left out, then the pin not yet listed.
    assert_eq!(
        listed,
        ["drive_share_file", "mail_send_message", "drive_list_files"]
    );

    let out = run(&cfg_path, &["report", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let reported: Vec<&str> = v["listed"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["inCatalog"] == true)
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(reported, listed);

    let out = run(
        &cfg_path,
        &[
            "search",
            "--json",
            "--limit",
            "20",
            "share list send files mail",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let results = v["results"].as_array().unwrap();
    let marked: Vec<&str> = results
        .iter()
        .filter(|r| r["listed"] == true)
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert!(!marked.is_empty(), "{v}");
    for r in results {
        let name = r["name"].as_str().unwrap();
        assert_eq!(
            r["listed"] == true,
            listed.iter().any(|l| l == name),
            "{name} in {v}"
        );
    }

    let out = run(&cfg_path, &["doctor"]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("clients see search_tools, call_tool and 3 listed tool(s)"),
        "{stdout}"
    );
}

#[test]
fn no_catalog_is_said_by_search_and_promote() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let cfg_path = dir.path().join("config.json");
    std::fs::write(&cfg_path, config(&state).to_string()).unwrap();
    let catalog = state.join("catalog.json");

    let out = run(&cfg_path, &["search", "drive"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    let want = "mws: no catalog: the upstream listed no tools (upstream unavailable: \
                http://127.0.0.1:9/mcp: ";
    assert!(err.contains(want), "{err}");
    assert!(
        err.contains(&format!(
            "and there is no stored catalog at {} (it is written once the upstream has listed its \
             tools); pass --catalog FILE, or see `mws doctor`",
            catalog.display()
        )),
        "{err}"
    );

    let out = run(&cfg_path, &["promote", "--dry-run"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(
        err.contains("mws promote: warning: no catalog: the upstream")
            && err.contains("the reality check is skipped (no tool is dropped)"),
        "{err}"
    );
}
