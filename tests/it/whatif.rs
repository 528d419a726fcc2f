//! `mws what-if` as a user runs it: a state dir with recorded calls and `catalog.json`, an
//! upstream that is not there; the table, `--json`, `--svg`, and each bad input's message.

use mws::call::{Call, Status};
use mws::store::Store;
use serde_json::Value;

use crate::support::run::{json_run, mws_config, offline_config};

fn setup(calls: bool) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let config = offline_config(dir.path(), "catalogs/time.json");
    let store = Store::open(&dir.path().join("state/state.db")).unwrap();
    let now = mws::clock::now();
    for n in 0..if calls { 40 } else { 0 } {
        let c = Call {
            ts: mws::clock::fmt(now - time::Duration::hours(n * 7 + 1)),
            session_id: format!("s{}", n / 3),
            tool: if n % 4 == 0 {
                "convert_time"
            } else {
                "get_current_time"
            }
            .into(),
            via: "direct".into(),
            status: Some(Status::Ok),
            source_key: format!("proxy:{n}"),
            ..Call::default()
        };
        mws::store::log::insert_call(store.conn(), &c).unwrap();
    }
    (dir, config)
}

#[test]
fn table_json_and_svg() {
    let (dir, config) = setup(true);
    let svg = dir.path().join("w.svg");
    let v = json_run(
        mws_config(&config)
            .args(["what-if", "--json", "--svg"])
            .arg(&svg),
    );
    let settings = v["settings"].as_array().unwrap();
    assert!(settings.len() >= 24, "{v}");
    assert_eq!(settings[0]["current"], true);
    assert_eq!(settings[0]["okCalls"], 40);
    assert!(
        settings
            .iter()
            .all(|s| s["avgListedTokens"].as_f64().unwrap() > 100.0)
    );
    assert!(
        v["recommended"]["reason"]
            .as_str()
            .unwrap()
            .contains("hit rate")
    );
    let text = std::fs::read_to_string(&svg).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let points = doc
        .descendants()
        .filter(|n| n.has_tag_name("circle"))
        .count();
    assert_eq!(points, settings.len());

    let out = mws_config(&config)
        .args(["what-if", "--min-sessions", "1", "--min-calls", "1,2"])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("* current setting") && text.contains("→ recommended:"),
        "{text}"
    );
}

#[test]
fn bad_input_is_named() {
    let (_dir, config) = setup(false);
    let run = |args: &[&str]| {
        let out = mws_config(&config).args(args).output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).trim_end().to_string(),
        )
    };
    let (code, err) = run(&["what-if", "--min-sessions", "0"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "mws: --min-sessions \"0\": 0 is not allowed, the least is 1"
    );
    let (code, err) = run(&["what-if", "--keep-days", "-3"]);
    assert_eq!(code, Some(2));
    assert_eq!(
        err,
        "mws: --keep-days \"-3\": \"-3\" is not a whole number of at least 1"
    );
    let (code, err) = run(&["what-if"]);
    assert_eq!(code, Some(1));
    assert!(
        err.ends_with(
            "nothing to replay (`mws serve` records calls, `mws ingest` reads transcripts)"
        ),
        "{err}"
    );
}

/// The current setting ends with what `mws promote` lists now: today's calls (after the replay's
/// last midnight) count, and so does the working set promote already wrote.
#[test]
fn the_current_setting_ends_with_what_promote_lists_now() {
    let (dir, config) = setup(false);
    let store = Store::open(&dir.path().join("state/state.db")).unwrap();
    let now = mws::clock::now();
    // One tool used days ago, one first used seconds ago: promote lists both, a midnight run
    // only the first.
    for n in 0..6 {
        let (tool, ago) = if n < 3 {
            ("convert_time", time::Duration::days(2 + n))
        } else {
            ("get_current_time", time::Duration::seconds(n))
        };
        let c = Call {
            ts: mws::clock::fmt(now - ago),
            session_id: format!("s{n}"),
            tool: tool.into(),
            via: "direct".into(),
            status: Some(Status::Ok),
            source_key: format!("proxy:{n}"),
            ..Call::default()
        };
        mws::store::log::insert_call(store.conn(), &c).unwrap();
    }
    let run = |args: &[&str]| -> Value { json_run(mws_config(&config).args(args)) };
    for promote in [
        &["promote", "--dry-run", "--json"][..],
        &["promote", "--no-ingest", "--json"][..],
    ] {
        let decisions = run(promote);
        let listed = decisions
            .as_array()
            .unwrap_or_else(|| panic!("{decisions:#}"))
            .iter()
            .filter(|d| d["after"] == true)
            .count();
        assert_eq!(listed, 2, "{decisions:#}");
        let w = run(&["what-if", "--json"]);
        let current = w["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["current"] == true)
            .unwrap();
        assert_eq!(
            current["endListedTools"], listed,
            "{promote:?}: {current:#}\n{decisions:#}"
        );
    }
}
