//! The usage history through the real binary: config errors (exact text, exit 2), `mws init`,
//! `mws promote` end to end on a database built here, and three concurrent writers.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;

use mws::call::{Call, Status};
use mws::store::{Store, log::insert_call};
use serde_json::{Value, json};

use crate::support::run::mws_in;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn check_config_error(config: &str, want_stderr: &str) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.json"), config).unwrap();
    let out = mws_in(dir.path())
        .args(["promote", "--dry-run", "--config", "c.json"])
        .output()
        .unwrap();
    assert_eq!(text(&out.stderr), want_stderr, "config: {config}");
    assert_eq!(out.status.code(), Some(2), "config: {config}");
    assert!(out.stdout.is_empty());
}

#[test]
fn config_errors_exit_2_with_exact_messages() {
    let cases = [
        (
            "{\n  \"promote\": { \"minSesions\": 3 }\n}\n",
            "mws: c.json:2:27: `promote.minSesions`: unknown field, did you mean `minSessions`?\n",
        ),
        (
            "{\n  \"pins\": [\"a\"]\n  \"serverName\": \"tb\"\n}\n",
            "mws: c.json:3:3: invalid JSON: expected `,` or `}`\n",
        ),
        (
            "{ \"listen\": { \"host\": \"0.0.0.0\", \"port\": 4484 } }",
            "mws: c.json: `listen.host`: \"0.0.0.0\" is not a loopback address; mws listens on \
             loopback only (use 127.0.0.1, ::1 or localhost)\n",
        ),
        (
            "{ \"promote\": { \"keepDays\": \"sixty\" } }",
            "mws: c.json:1:34: `promote.keepDays`: expected a whole number from 0 to 4294967295, \
             found string \"sixty\"\n",
        ),
        (
            "{ \"transcripts\": [{ \"type\": \"codx\", \"root\": \"~/t\" }] }",
            "mws: c.json:1:34: `transcripts[0].type`: unknown value \"codx\", did you mean \
             \"codex\"?\n",
        ),
    ];
    for (config, want) in cases {
        check_config_error(config, want);
    }
}

#[test]
fn init_writes_config_and_database_0600_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = mws_in(dir.path())
        .args(["init", "--config", "./c.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let state = dir.path().join("xdg-state/mcp-working-set");
    let db = state.join("state.db");
    assert!(text(&out.stdout).contains(&db.display().to_string()));
    for f in [dir.path().join("c.json"), db.clone()] {
        let mode = std::fs::metadata(&f).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{}", f.display());
    }
    let store = Store::open(&db).unwrap();
    let names: Vec<String> = store
        .conn()
        .prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    for want in [
        "sessions",
        "calls",
        "searches",
        "catalog",
        "working_set",
        "promotion_runs",
        "transitions",
        "pin_declarations",
        "ingest_files",
        "tool_usage",
        "daily_calls",
        "daily_searches",
        "never_called",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "missing {want} in {names:?}"
        );
    }

    let again = mws_in(dir.path())
        .args(["init", "--config", "./c.json"])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(
        text(&again.stderr),
        "mws: ./c.json: already exists; run `mws init --force` to overwrite it with the defaults\n"
    );
    std::fs::write(dir.path().join("c.json"), "{}").unwrap();
    let forced = mws_in(dir.path())
        .args(["init", "--force", "--config", "./c.json"])
        .output()
        .unwrap();
    assert_eq!(forced.status.code(), Some(0));
    let written = std::fs::read_to_string(dir.path().join("c.json")).unwrap();
    assert!(written.starts_with("// mws"), "{written}");
}

fn day_ago(days: i64) -> String {
    mws::clock::fmt(mws::clock::now() - time::Duration::days(days))
}

fn call(n: usize, tool: &str, session: &str, days: i64, ok: bool) -> Call {
    Call {
        ts: day_ago(days),
        session_id: session.into(),
        tool: tool.into(),
        via: "direct".into(),
        status: Some(if ok { Status::Ok } else { Status::Error }),
        ms: Some(5),
        client: Some("test".into()),
        client_call_id: None,
        source_key: format!("proxy:{n}"),
        ..Call::default()
    }
}

fn promote(dir: &Path, extra: &[&str]) -> Output {
    let out = mws_in(dir)
        .args(["promote", "--no-ingest", "--config", "c.json"])
        .args(extra)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    out
}

/// A database path that cannot be opened names the path and the cause once (the store's errors
/// carry their cause in their own message, not again as a chained source).
#[test]
fn unopenable_database_is_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("state").join("state.db");
    std::fs::create_dir_all(&db).unwrap();
    let config = json!({"stateDir": dir.path().join("state"), "timeouts": {"listMs": 200}});
    std::fs::write(dir.path().join("c.json"), config.to_string()).unwrap();
    let out = mws_in(dir.path())
        .args(["promote", "--no-ingest", "--config", "c.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!("mws: {}: Is a directory (os error 21)\n", db.display())
    );
}

#[test]
fn promote_end_to_end() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let state = d.join("state");
    std::fs::create_dir_all(d.join("skills/s")).unwrap();
    std::fs::write(
        d.join("skills/s/SKILL.md"),
        "---\nname: s\nworking-set-pins: [drive_get]\n---\nbody\n",
    )
    .unwrap();
    let config = json!({
        "stateDir": state,
        "pins": ["mail_send"],
        "pinFiles": [d.join("skills/*/SKILL.md")],
        "timeouts": {"listMs": 200},
    });
    std::fs::write(d.join("c.json"), config.to_string()).unwrap();
    let store = Store::open(&state.join("state.db")).unwrap();
    let calls = [
        ("mail_list", "s1", 1, true),
        ("mail_list", "s2", 2, true),
        ("one_session", "s1", 1, true),
        ("one_session", "s1", 2, true),
        ("failing", "s1", 1, false),
        ("failing", "s2", 2, false),
        ("gone_tool", "s1", 1, true),
        ("gone_tool", "s2", 2, true),
    ];
    for (n, (tool, session, days, ok)) in calls.iter().enumerate() {
        insert_call(store.conn(), &call(n, tool, session, *days, *ok)).unwrap();
    }
    let tools: Vec<Value> = [
        "mail_send",
        "mail_list",
        "one_session",
        "failing",
        "drive_get",
    ]
    .into_iter()
    .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
    .collect();
    let catalog = json!({ "tools": tools });
    std::fs::write(state.join("catalog.json"), catalog.to_string()).unwrap();

    let dry = promote(d, &["--dry-run", "--json"]);
    let rows: Value = serde_json::from_slice(&dry.stdout).unwrap();
    let brief: Vec<(String, bool, bool)> = rows
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let reason = r["reason"].as_str().unwrap();
            let action = reason.split(':').next().unwrap();
            (
                format!("{} {action}", r["tool"].as_str().unwrap()),
                r["before"] == true,
                r["after"] == true,
            )
        })
        .collect();
    assert_eq!(
        brief,
        [
            ("mail_send pinned".to_string(), false, true),
            ("drive_get pinned".to_string(), false, true),
            ("mail_list promoted".to_string(), false, true),
            ("gone_tool dropped".to_string(), false, false),
            ("one_session unchanged".to_string(), false, false),
            ("failing unchanged".to_string(), false, false),
        ]
    );
    let first = &rows[2];
    assert_eq!(first["sessions"], 2);
    assert_eq!(first["calls"], 2);
    assert_eq!(
        first["lastSuccess"].as_str().unwrap()[..10],
        day_ago(1)[..10]
    );
    assert!(
        !state.join("working-set.json").exists(),
        "dry run wrote the export"
    );
    let runs = |s: &Store| -> i64 {
        s.conn()
            .query_row("SELECT COUNT(*) FROM promotion_runs", [], |r| r.get(0))
            .unwrap()
    };
    assert_eq!(runs(&store), 0, "dry run wrote a run");

    let real = promote(d, &[]);
    assert!(text(&real.stdout).contains("mail_list"));
    let export: Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("working-set.json")).unwrap())
            .unwrap();
    assert_eq!(
        export["tools"],
        json!(["mail_send", "drive_get", "mail_list"])
    );
    assert_eq!(export["pins"], json!(["mail_send", "drive_get"]));
    let mode = std::fs::metadata(state.join("working-set.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let listed: Vec<(String, i64, String)> = store
        .conn()
        .prepare("SELECT tool, position, reason FROM working_set ORDER BY position")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        listed,
        [
            ("mail_send".into(), 0, "pin".into()),
            ("drive_get".into(), 1, "pin-file".into()),
            ("mail_list".into(), 2, "promoted".into()),
        ]
    );
    let (source, promoted, dropped): (String, i64, i64) = store
        .conn()
        .query_row(
            "SELECT catalog_source, promoted, dropped FROM promotion_runs",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((source.as_str(), promoted, dropped), ("catalog.json", 1, 1));
    let present: i64 = store
        .conn()
        .query_row("SELECT COUNT(*) FROM catalog WHERE present = 1", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(present, 5);

    // A second run keeps everything in place; the transition log says so.
    promote(d, &[]);
    let actions: Vec<(String, String)> = store
        .conn()
        .prepare(
            "SELECT tool, action FROM transitions WHERE run_id = 2 AND after = 1 ORDER BY tool",
        )
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        actions,
        [
            ("drive_get".into(), "pinned".into()),
            ("mail_list".into(), "kept".into()),
            ("mail_send".into(), "pinned".into()),
        ]
    );
}
