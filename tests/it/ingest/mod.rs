//! `mws ingest` over the transcript fixtures: exactly the expected calls and statuses, the real
//! clients' files, idempotent re-runs, appended and partial lines, malformed lines, replaced
//! files, bad roots, and one row per call when the proxy logged it too.

mod compressed;
mod env;

use mws::call::{Call, Status};
use mws::store::log::LogEvent;
use serde_json::{Value, json};

use super::cli::mws;
use super::support::run::{json_run, mws_config};
use env::{Env, append, fixtures};

/// A status of expected_mcp_calls.json as (ok, error_kind).
fn expected_outcome(status: &str) -> Option<(bool, Option<&str>)> {
    match status {
        "ok" | "ok_code_mode" => Some((true, None)),
        "pending" => None,
        other => Some((false, Some(other))),
    }
}

#[test]
fn samples_yield_exactly_the_expected_calls_and_statuses() {
    let env = Env::samples();
    let summary = env.ingest();
    assert!(
        summary.errors.is_empty() && summary.skipped_lines == 0,
        "{summary:?}"
    );
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("expected_mcp_calls.json")).unwrap(),
    )
    .unwrap();
    let mut want = Vec::new();
    for c in expected["mcp_calls"].as_array().unwrap() {
        let s = |k: &str| c[k].as_str().unwrap().to_string();
        let status = s("status");
        let Some((ok, kind)) = expected_outcome(&status) else {
            continue;
        };
        let adapter = if s("client") == "claude" {
            "claude-code"
        } else {
            "codex"
        };
        want.push((
            format!("{adapter}:{}", s("call_id")),
            s("session_id"),
            s("tool"),
            ok,
            kind.map(String::from),
            s("timestamp"),
        ));
    }
    want.sort();
    assert_eq!(env.calls(), want);
    assert_eq!(summary.new_calls, want.len() as u64);
    // The resumed Claude session's replay and the forked Codex thread's copy added nothing (the
    // progress mirror and the compacted history are not read as calls at all).
    assert_eq!(summary.duplicates, 2, "{summary:?}");
}

#[test]
fn real_client_transcripts_yield_the_right_calls() {
    let env = Env::real();
    // A catalog.json with the upstream's names: the sanitized get_sum maps back to get-sum.
    std::fs::create_dir_all(env.path("state")).unwrap();
    std::fs::write(
        env.path("state/catalog.json"),
        json!({"tools": [{"name": "echo"}, {"name": "get-sum"}]}).to_string(),
    )
    .unwrap();
    let summary = env.ingest();
    assert!(
        summary.errors.is_empty() && summary.skipped_lines == 0,
        "{summary:?}"
    );
    let got: Vec<_> = env
        .calls()
        .into_iter()
        .map(|(k, s, t, ok, kind, _)| (k, s, t, ok, kind))
        .collect();
    let row = |k: &str, s: &str, t: &str, ok: bool, kind: Option<&str>| {
        (
            k.to_string(),
            s.to_string(),
            t.to_string(),
            ok,
            kind.map(String::from),
        )
    };
    assert_eq!(
        got,
        [
            row(
                "claude-code:toolu_mock_e44e9742da904ce6b207",
                "4db42166-1ef2-462a-959b-a4af51fb8cf9",
                "echo",
                true,
                None
            ),
            row(
                "claude-code:toolu_mock_ffe0430900fa4fdbaf7f",
                "4cf52b32-2521-48d0-b7c9-00b6c103ebdd",
                "echo",
                true,
                None
            ),
            row(
                "codex:call_mock_1846f568396c4cb5",
                "01a2294c-4e25-77f0-8c6d-6d9d8be0a0df",
                "get-sum",
                false,
                Some("error")
            ),
            row(
                "codex:call_mock_9398b846f62c48f7",
                "01a2294c-49c6-75d3-a9e2-1487e56a3cd2",
                "get-sum",
                true,
                None
            ),
        ]
    );
}

#[test]
fn a_second_run_adds_nothing_and_appended_lines_only_are_read() {
    let env = Env::samples();
    let first = env.ingest();
    let before = env.calls();
    let second = env.ingest();
    assert_eq!(
        (second.files_read, second.bytes, second.new_calls),
        (0, 0, 0),
        "{second:?}"
    );
    assert_eq!(second.files, first.files);
    assert_eq!(env.calls(), before);

    let file = env.path(
        "claude/projects/-Users-dana-src-weather-app/c8e21d40-93aa-4f6b-a7d2-6b0e5f14c9a7.jsonl",
    );
    let added = [
        r#"{"type":"assistant","sessionId":"c8e21d40-93aa-4f6b-a7d2-6b0e5f14c9a7","timestamp":"2026-11-28T09:00:00.000Z","message":{"content":[{"type":"tool_use","id":"toolu_new1","name":"mcp__github__search_code","input":{}}]}}"#,
        r#"{"type":"user","sessionId":"c8e21d40-93aa-4f6b-a7d2-6b0e5f14c9a7","timestamp":"2026-11-28T09:00:01.000Z","message":{"content":[{"tool_use_id":"toolu_new1","type":"tool_result","content":"found"}]}}"#,
    ]
    .join("\n")
        + "\n";
    append(&file, &added);
    let third = env.ingest();
    assert_eq!(
        (
            third.files_read,
            third.bytes,
            third.new_calls,
            third.duplicates
        ),
        (1, added.len() as u64, 1, 0),
        "{third:?}"
    );
    assert_eq!(env.calls().len(), before.len() + 1);
}

#[test]
fn a_partial_last_line_and_a_missing_result_are_picked_up_next_run() {
    let env = Env::new(&["toolbox"]);
    let dir = env.path("claude/projects/p");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("s1.jsonl");
    // Three hours before the run's clock: waiting, not yet expired.
    let call = r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-11-29T09:00:00.000Z","message":{"content":[{"type":"tool_use","id":"toolu_p","name":"mcp__toolbox__echo","input":{}}]}}"#;
    let (head, tail) = call.split_at(60);
    std::fs::write(&file, head).unwrap();
    let s = env.ingest();
    assert_eq!(
        (s.new_calls, s.pending, s.skipped_lines),
        (0, 0, 0),
        "{s:?}"
    );
    append(&file, &format!("{tail}\n"));
    let s = env.ingest();
    assert_eq!((s.new_calls, s.pending), (0, 1), "{s:?}");
    append(
        &file,
        r#"{"type":"user","sessionId":"s1","message":{"content":[{"tool_use_id":"toolu_p","type":"tool_result","content":"x","is_error":true}]}}"#,
    );
    append(&file, "\n");
    let s = env.ingest();
    assert_eq!((s.new_calls, s.pending), (1, 0), "{s:?}");
    let calls = env.calls();
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].3, calls[0].4.as_deref()), (false, Some("error")));
}

/// A call whose result never comes (the client was killed) is recorded as aborted once it has
/// waited `PENDING_EXPIRY`, instead of waiting for ever; a younger one keeps waiting.
#[test]
fn a_call_without_a_result_for_a_day_is_recorded_as_aborted() {
    let env = Env::new(&["toolbox"]);
    let dir = env.path("claude/projects/p");
    std::fs::create_dir_all(&dir).unwrap();
    // The run's clock is 2026-11-29T12:00Z: one call 27 hours before it, one 3 hours before.
    let old = r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-11-28T09:00:00.000Z","message":{"content":[{"type":"tool_use","id":"toolu_old","name":"mcp__toolbox__echo","input":{}}]}}"#;
    let young = r#"{"type":"assistant","sessionId":"s2","timestamp":"2026-11-29T09:00:00.000Z","message":{"content":[{"type":"tool_use","id":"toolu_young","name":"mcp__toolbox__echo","input":{}}]}}"#;
    std::fs::write(dir.join("s1.jsonl"), format!("{old}\n")).unwrap();
    std::fs::write(dir.join("s2.jsonl"), format!("{young}\n")).unwrap();
    let s = env.ingest();
    assert_eq!((s.new_calls, s.pending, s.expired), (0, 2, 1), "{s:?}");
    let calls = env.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].0, "claude-code:toolu_old");
    assert_eq!(
        (calls[0].3, calls[0].4.as_deref()),
        (false, Some("aborted"))
    );
    assert_eq!(calls[0].5, "2026-11-28T09:00:00.000Z");
    assert!(
        mws::cmd::ingest::render(&s)
            .contains("1 call(s) still without a result after 24 h recorded as aborted")
    );
    // A second run changes nothing: the young call still waits.
    let s = env.ingest();
    assert_eq!((s.new_calls, s.expired), (0, 0), "{s:?}");
    assert_eq!(env.calls().len(), 1);
}

#[test]
fn a_corrupt_line_is_counted_and_shown_with_path_and_line() {
    let env = Env::samples();
    env.ingest();
    let file = env.path("codex/sessions/2025/10/14/rollout-2025-10-14T23-52-10-0199e4b2-7a10-7c3e-8f21-4d5e6f7a8b9c.jsonl");
    let lines = std::fs::read_to_string(&file).unwrap().lines().count();
    let bad = r#"{"timestamp":"2025-10-15T00:03:00Z","type":"response_item","payload":{"type":"function_call",oops}"#;
    append(&file, &format!("{bad}\n"));
    let out = mws()
        .args(["--config"])
        .arg(&env.config_path)
        .arg("ingest")
        .env("MWS_LOG", "debug")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    let msg = format!(
        "{}:{}: key must be a string at line 1 column {}",
        file.display(),
        lines + 1,
        bad.find("oops").unwrap() + 1
    );
    assert!(stdout.contains("1 skipped line(s)"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "malformed: 1 line(s) in {}, first {msg}",
            file.display()
        )),
        "{stdout}"
    );
    assert!(stderr.contains(&msg), "{stderr}");
}

#[test]
fn a_replaced_file_is_read_again_and_dedupe_keeps_one_row() {
    let env = Env::samples();
    env.ingest();
    let before = env.calls();
    let file = env.path(
        "claude/projects/-Users-dana-src-weather-app/c8e21d40-93aa-4f6b-a7d2-6b0e5f14c9a7.jsonl",
    );
    let text = std::fs::read_to_string(&file).unwrap();
    // Same calls, different head (the summary line dropped): read from the start again.
    let rest = text.split_once('\n').unwrap().1;
    std::fs::write(&file, rest).unwrap();
    let s = env.ingest();
    assert_eq!((s.files_read, s.new_calls), (1, 0), "{s:?}");
    assert!(s.duplicates >= 3, "{s:?}");
    assert_eq!(env.calls(), before);
}

#[test]
fn a_bad_root_is_reported_and_the_others_go_on() {
    let env = Env::real();
    std::fs::remove_dir_all(env.path("codex/sessions")).unwrap();
    std::fs::write(env.path("codex/sessions"), "not a dir").unwrap();
    let mut config: Value =
        serde_json::from_str(&std::fs::read_to_string(&env.config_path).unwrap()).unwrap();
    config["transcripts"]
        .as_array_mut()
        .unwrap()
        .push(json!({"type": "codex", "root": env.path("nowhere")}));
    std::fs::write(&env.config_path, config.to_string()).unwrap();
    let s = env.ingest();
    assert_eq!(
        s.errors,
        [(
            env.path("codex/sessions").display().to_string(),
            "not a directory".to_string()
        )]
    );
    assert_eq!(s.missing_roots, [env.path("nowhere").display().to_string()]);
    assert_eq!(s.new_calls, 2, "the claude root was still read: {s:?}");
}

fn proxy_row(id: &str) -> LogEvent {
    LogEvent::Call(Call {
        ts: "2026-11-29T21:53:12.250Z".into(),
        session_id: "proxy:claude-code:7".into(),
        tool: "echo".into(),
        via: "direct".into(),
        status: Some(Status::Ok),
        ms: Some(3),
        client: Some("claude-code".into()),
        client_call_id: Some(id.into()),
        source_key: "proxy:42".into(),
        ..Call::default()
    })
}

#[test]
fn a_call_seen_by_proxy_and_transcript_is_one_row_in_the_transcript_session() {
    let id = "toolu_mock_e44e9742da904ce6b207";
    let session = "4db42166-1ef2-462a-959b-a4af51fb8cf9";
    for proxy_first in [true, false] {
        let env = Env::real();
        if proxy_first {
            env.store().write_log(&[proxy_row(id)]).unwrap();
            assert_eq!(env.ingest().merged, 1);
        } else {
            env.ingest();
            env.store().write_log(&[proxy_row(id)]).unwrap();
        }
        // Touch the file so that it is read again: still one row.
        let file = env
            .path("claude/projects/-home-dev-project/4db42166-1ef2-462a-959b-a4af51fb8cf9.jsonl");
        let text = std::fs::read(&file).unwrap();
        std::fs::write(&file, [&text[..], b"\n"].concat()).unwrap();
        env.ingest();
        let store = env.store();
        let rows: Vec<(String, String, String)> = store
            .conn()
            .prepare("SELECT session_id, via, tool FROM calls WHERE client_call_id = ?1")
            .unwrap()
            .query_map([id], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            [(
                session.to_string(),
                "direct".to_string(),
                "echo".to_string()
            )],
            "proxy first: {proxy_first}"
        );
        let source: String = store
            .conn()
            .query_row(
                "SELECT source FROM sessions WHERE id = ?1",
                [session],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(source, "transcript:claude-code");
    }
}

#[test]
fn json_summary_for_machines() {
    let env = Env::samples();
    let v = json_run(mws_config(&env.config_path).args(["ingest", "--json"]));
    assert_eq!(v["files"], 6);
    assert_eq!(v["new_calls"], 19);
    assert_eq!(v["skipped_lines"], 0);
    assert!(v["errors"].as_array().unwrap().is_empty());
}

/// Calls older than the history's horizon are not recorded (retention would remove them), and
/// are counted; a later run with the same horizon records nothing more.
#[test]
fn calls_past_the_horizon_are_counted_not_recorded() {
    let env = Env::samples();
    let s = env.ingest_keeping_from(Some("2026-01-01T00:00:00.000Z"));
    assert_eq!((s.new_calls, s.past_horizon), (15, 4));
    assert!(env.calls().iter().all(|c| c.5.as_str() >= "2026-01-01"));
    let again = env.ingest_keeping_from(Some("2026-01-01T00:00:00.000Z"));
    assert_eq!(again.new_calls, 0);
}

#[test]
fn identical_duplicate_lines_count_once() {
    let env = Env::new(&["toolbox"]);
    let dir = env.path("claude/projects/p");
    std::fs::create_dir_all(&dir).unwrap();
    let call = r#"{"type":"assistant","sessionId":"s1","timestamp":"2026-11-28T09:00:00.000Z","message":{"content":[{"type":"tool_use","id":"toolu_d","name":"mcp__toolbox__echo","input":{}}]}}"#;
    let result = r#"{"type":"user","sessionId":"s1","message":{"content":[{"tool_use_id":"toolu_d","type":"tool_result","content":"ok"}]}}"#;
    std::fs::write(
        dir.join("s1.jsonl"),
        [call, call, result, result, call, ""].join("\n"),
    )
    .unwrap();
    let s = env.ingest();
    assert_eq!((s.new_calls, s.duplicates, s.pending), (1, 2, 0), "{s:?}");
    assert_eq!(env.calls().len(), 1);
}

/// A transcript file deleted after it was read: its `ingest_files` row goes (the table would
/// otherwise grow with every session file ever seen), its calls stay; a file that comes back is
/// read again and adds no row.
#[test]
fn a_deleted_file_is_no_longer_tracked_and_its_calls_stay() {
    let env = Env::samples();
    env.ingest();
    let before = env.calls();
    let tracked = env.store().ingest_files().unwrap();
    let file = env.path(
        "claude/projects/-Users-dana-src-weather-app/c8e21d40-93aa-4f6b-a7d2-6b0e5f14c9a7.jsonl",
    );
    let key = file.display().to_string();
    assert!(tracked.contains_key(&key), "{:?}", tracked.keys());
    let text = std::fs::read(&file).unwrap();
    std::fs::remove_file(&file).unwrap();

    let s = env.ingest();
    assert_eq!(s.files_gone, 1, "{s:?}");
    let now = env.store().ingest_files().unwrap();
    assert!(!now.contains_key(&key));
    assert_eq!(now.len(), tracked.len() - 1);
    assert_eq!(env.calls(), before, "the calls of a gone file stay");
    let shown = mws::cmd::ingest::render(&s);
    assert!(
        shown.contains("1 file(s) read before are gone: no longer tracked (their calls stay)"),
        "{shown}"
    );

    // Back again: read from its start, every call a duplicate.
    std::fs::write(&file, &text).unwrap();
    let back = env.ingest();
    assert_eq!(
        (back.files_read, back.new_calls, back.files_gone),
        (1, 0, 0),
        "{back:?}"
    );
    assert_eq!(env.calls(), before);
    assert!(env.store().ingest_files().unwrap().contains_key(&key));
}
