//! `mws ingest` SIGKILLed mid-run, then run again, ends with exactly the rows of one uninterrupted
//! run: each file is one transaction, so a kill loses only the file in flight, and the re-run
//! reads it again from its last committed offset.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use super::state::calls_in;
use crate::support::run::{config_in, mws_config};

/// Files in the generated corpus and MCP calls in each. Raising them makes the kill land
/// mid-run more surely on a fast machine, at the cost of generation and ingest time.
const FILES: usize = 600;
const CALLS_PER_FILE: usize = 20;
/// Filler bytes per turn, so that reading (not only writing) takes time.
const FILLER: usize = 1500;

fn corpus(root: &Path) {
    let filler = "lorem ipsum température 東京 ".repeat(FILLER / 30);
    for f in 0..FILES {
        let project = root.join(format!("claude/projects/-home-dev-p{}", f % 10));
        std::fs::create_dir_all(&project).unwrap();
        let path = project.join(format!("{f:08x}-0000-4000-8000-000000000000.jsonl"));
        let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
        let sid = format!(r#""sessionId":"s{f}","cwd":"/home/dev""#);
        for c in 0..CALLS_PER_FILE {
            let ts = format!(
                r#""timestamp":"2026-11-{:02}T10:{:02}:00.000Z""#,
                1 + f % 28,
                c
            );
            let id = format!("toolu_{f}_{c}");
            let tool = ["echo", "get-sum", "mail_send"][c % 3];
            let err = if c % 7 == 0 {
                r#","is_error":true"#
            } else {
                ""
            };
            writeln!(
                w,
                r#"{{{sid},{ts},"type":"user","message":{{"role":"user","content":"{filler}"}}}}"#
            )
            .unwrap();
            writeln!(w, r#"{{{sid},{ts},"type":"assistant","message":{{"role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"mcp__toolbox__{tool}","input":{{}}}}]}}}}"#).unwrap();
            writeln!(w, r#"{{{sid},{ts},"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"{id}","type":"tool_result","content":[{{"type":"text","text":"{filler}"}}]{err}}}]}}}}"#).unwrap();
        }
    }
}

/// A corpus and its config in `dir`; returns the config path.
fn setup(dir: &Path) -> std::path::PathBuf {
    corpus(dir);
    let config = json!({
        "transcripts": [{"type": "claude-code", "root": dir.join("claude/projects"), "serverNames": ["toolbox"]}],
    });
    config_in(dir, config)
}

fn ingest(config: &Path) -> Command {
    let mut c = mws_config(config);
    c.args(["ingest", "--json"]);
    c
}

/// What a run leaves: calls per (tool, ok, error_kind), sessions, and files with their offsets.
type Tally = (
    Vec<(String, i64, Option<String>, i64)>,
    i64,
    Vec<(String, i64, i64)>,
);

fn tally(db: &Path) -> Tally {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut s = conn
        .prepare(
            "SELECT tool, ok, error_kind, count(*) FROM calls GROUP BY 1, 2, 3 ORDER BY 1, 2, 3",
        )
        .unwrap();
    let calls = s
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let sessions = conn
        .query_row("SELECT count(DISTINCT session_id) FROM calls", [], |r| {
            r.get(0)
        })
        .unwrap();
    let mut s = conn
        .prepare("SELECT path, offset, calls FROM ingest_files ORDER BY path")
        .unwrap();
    let files = s
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<Vec<(String, i64, i64)>, _>>()
        .unwrap()
        .into_iter()
        // Paths differ between the two temp dirs; keep the part under the root.
        .map(|(p, o, n)| (p.rsplit_once("projects/").unwrap().1.to_string(), o, n))
        .collect();
    (calls, sessions, files)
}

#[test]
fn sigkill_mid_ingest_then_rerun_gives_the_uninterrupted_counts() {
    let total = (FILES * CALLS_PER_FILE) as i64;
    let whole = tempfile::tempdir().unwrap();
    let config = setup(whole.path());
    let out = ingest(&config).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let expected = tally(&whole.path().join("state/state.db"));
    assert_eq!(expected.0.iter().map(|c| c.3).sum::<i64>(), total);

    let killed = tempfile::tempdir().unwrap();
    let config = setup(killed.path());
    let db = killed.path().join("state/state.db");
    let mut child = crate::support::Child(
        ingest(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = Instant::now() + Duration::from_secs(60);
    let at_kill = loop {
        if let Some(n) = calls_in(&db).filter(|n| *n > 0) {
            child.0.kill().unwrap();
            child.0.wait().unwrap();
            break calls_in(&db).unwrap_or(n);
        }
        assert!(
            child.0.try_wait().unwrap().is_none(),
            "ingest finished before any row was seen"
        );
        assert!(Instant::now() < deadline, "ingest wrote no row within 60 s");
        std::thread::sleep(Duration::from_millis(2));
    };
    assert!(
        at_kill < total,
        "the kill landed after the run ({at_kill} of {total} rows): raise FILES"
    );
    let out = ingest(&config).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(tally(&db), expected, "killed at {at_kill} of {total} rows");
}
