//! Tests of the Codex adapter: one case per naming generation, outcome source and trap.

use super::*;
use crate::ingest::parse_all;

fn run(lines: &[&str]) -> (Vec<(String, String, Option<Status>)>, u64) {
    let names = Names::new(&["toolbox", "chrome-devtools"], &["get-sum", "mail.send"]);
    let mut a = Codex::new(
        &names,
        "rollout-2026-11-28T09-14-03-019ac3e1-5d2f-7a40-b8e3-3c9d1f6a2e71",
        "2026-01-01T00:00:00.000Z",
    );
    let text = lines.join("\n") + "\n";
    let (calls, bad) = parse_all(&mut a, text.as_bytes());
    let calls = calls
        .into_iter()
        .map(|c| {
            (
                c.call_id().to_string(),
                format!("{}/{}@{}", c.server.unwrap(), c.tool, c.session_id),
                c.status,
            )
        })
        .collect();
    (calls, bad)
}

const META: &str =
    r#"{"timestamp":"2026-11-28T09:14:03.512Z","type":"session_meta","payload":{"id":"own"}}"#;

#[test]
fn stem_ids() {
    assert_eq!(
        stem_id("rollout-2026-11-28T09-14-03-019ac3e1-5d2f-7a40-b8e3-3c9d1f6a2e71"),
        "019ac3e1-5d2f-7a40-b8e3-3c9d1f6a2e71"
    );
    assert_eq!(stem_id("short"), "short");
    // A character across the 36-byte cut used to panic on slicing (seen while writing the fuzz
    // target; fuzz/regressions/codex/ holds the input).
    let stem = format!("rollout-\u{e9}{}", "0".repeat(35));
    assert_eq!(stem_id(&stem), stem);
}

#[test]
fn generations_and_outcomes() {
    let (calls, bad) = run(&[
        META,
        // 2026 namespaced, sanitized tool name; outcome from mcp_tool_call_end with the raw name.
        r#"{"timestamp":"2026-11-28T09:14:07Z","type":"response_item","payload":{"type":"function_call","name":"get_sum","namespace":"mcp__toolbox","arguments":"{}","call_id":"c1"}}"#,
        r#"{"timestamp":"2026-11-28T09:14:08Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c1","invocation":{"server":"toolbox","tool":"get-sum"},"duration":{"secs":1,"nanos":5000000},"result":{"Ok":{"content":[],"isError":true}}}}"#,
        r#"{"timestamp":"2026-11-28T09:14:09Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"fine"}}"#,
        // flat mcp__ name, Err outcome.
        r#"{"timestamp":"2026-11-28T09:15:00Z","type":"response_item","payload":{"type":"function_call","name":"mcp__chrome_devtools__snap","arguments":"{}","call_id":"c2"}}"#,
        r#"{"timestamp":"2026-11-28T09:15:01Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"c2","invocation":{"server":"chrome-devtools","tool":"snap"},"result":{"Err":"timed out"}}}"#,
        // 2025 flat server__tool, output only.
        r#"{"timestamp":"2026-11-28T09:16:00Z","type":"response_item","payload":{"type":"function_call","name":"toolbox__mail_send","arguments":"{}","call_id":"c3"}}"#,
        r#"{"timestamp":"2026-11-28T09:16:01Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c3","output":"err: \"boom\""}}"#,
        // call_tool through mws: recorded under its target.
        r#"{"timestamp":"2026-11-28T09:17:00Z","type":"response_item","payload":{"type":"function_call","name":"call_tool","namespace":"mcp__toolbox","arguments":"{\"name\":\"mail_send\"}","call_id":"c4"}}"#,
        r#"{"timestamp":"2026-11-28T09:17:01Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c4","output":[{"type":"input_text","text":"Wall time: 1s\nOutput:"},{"type":"input_text","text":"sent"}]}}"#,
        // search_tools and foreign servers are not calls.
        r#"{"timestamp":"2026-11-28T09:18:00Z","type":"response_item","payload":{"type":"function_call","name":"search_tools","namespace":"mcp__toolbox","arguments":"{}","call_id":"c5"}}"#,
        r#"{"timestamp":"2026-11-28T09:18:00Z","type":"response_item","payload":{"type":"function_call","name":"x","namespace":"mcp__github","arguments":"{}","call_id":"c6"}}"#,
        // 0.169 item_completed refused by approval policy, with no function_call line.
        r#"{"timestamp":"2026-11-28T09:19:00Z","ordinal":9,"type":"event_msg","payload":{"type":"item_completed","thread_id":"own","item":{"type":"McpToolCall","id":"c7","server":"toolbox","tool":"get-sum","status":"failed","error":{"message":"MCP tool call requires approval, but approval policy is never"}}}}"#,
        // aborted turn: the open call ends aborted.
        r#"{"timestamp":"2026-11-28T09:20:00Z","type":"response_item","payload":{"type":"function_call","name":"get_sum","namespace":"mcp__toolbox__","arguments":"{}","call_id":"c8"}}"#,
        r#"{"timestamp":"2026-11-28T09:20:01Z","type":"event_msg","payload":{"type":"turn_aborted","reason":"interrupted"}}"#,
        r#"{"timestamp":"2026-11-28T09:21:00Z","type":"compacted","payload":{"replacement_history":[{"type":"function_call","name":"get_sum","namespace":"mcp__toolbox","call_id":"c9"}]}}"#,
    ]);
    assert_eq!(bad, 0);
    let got: Vec<_> = calls
        .iter()
        .map(|(i, n, s)| (i.as_str(), n.as_str(), *s))
        .collect();
    assert_eq!(
        got,
        [
            ("c1", "toolbox/get-sum@own", Some(Status::Error)),
            ("c2", "chrome-devtools/snap@own", Some(Status::Error)),
            ("c3", "toolbox/mail.send@own", Some(Status::Error)),
            ("c4", "toolbox/mail.send@own", Some(Status::Ok)),
            ("c7", "toolbox/get-sum@own", Some(Status::Denied)),
            ("c8", "toolbox/get-sum@own", Some(Status::Aborted)),
        ]
    );
}

#[test]
fn fork_copies_are_attributed_to_the_parent() {
    let (calls, _) = run(&[
        r#"{"timestamp":"2026-11-28T09:20:41Z","type":"session_meta","payload":{"id":"child","forked_from_id":"parent"}}"#,
        r#"{"timestamp":"2026-11-28T09:14:03Z","type":"session_meta","payload":{"id":"parent"}}"#,
        r#"{"timestamp":"2026-11-28T09:14:07Z","type":"response_item","payload":{"type":"function_call","name":"get_sum","namespace":"mcp__toolbox","arguments":"{}","call_id":"p1"}}"#,
        r#"{"timestamp":"2026-11-28T09:20:41Z","type":"turn_context","payload":{}}"#,
        r#"{"timestamp":"2026-11-28T09:20:44Z","type":"response_item","payload":{"type":"custom_tool_call","name":"exec","call_id":"x1","input":"await tools.mcp__toolbox__get_sum({}); await tools.mcp__github__x({});"}}"#,
        r#"{"timestamp":"2026-11-28T09:20:45Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"x1","output":"Script completed\nOutput:\n5"}}"#,
    ]);
    let got: Vec<_> = calls
        .iter()
        .map(|(i, n, s)| (i.as_str(), n.as_str(), *s))
        .collect();
    assert_eq!(
        got,
        [
            ("x1", "toolbox/get-sum@child", Some(Status::Ok)),
            ("p1", "toolbox/get-sum@parent", None),
        ]
    );
}

#[test]
fn legacy_header_and_bad_lines() {
    let (calls, bad) = run(&[
        r#"{"id":"legacy-id","timestamp":"2025-04-01T10:00:00Z","instructions":null}"#,
        r#"{"type":"function_call","name":"toolbox__get_sum","arguments":"{}","call_id":"l1"}"#,
        r#"{"type":"function_call_output","call_id":"l1","output":"{\"error\":\"bad\"}"}"#,
        r#"{"timestamp":"x","type":"response_item","payload":{"type":"function_call","name" BROKEN"#,
    ]);
    assert_eq!(bad, 1);
    assert_eq!(
        calls,
        [(
            "l1".to_string(),
            "toolbox/get-sum@legacy-id".to_string(),
            Some(Status::ErrorHeuristic)
        )]
    );
}

#[test]
fn spaced_json_is_read_too() {
    let (calls, bad) = run(&[
        r#"{"timestamp": "2026-11-28T09:14:03Z", "type": "session_meta", "payload": {"id": "sp"}}"#,
        r#"{"timestamp": "2026-11-28T09:14:07Z", "type": "response_item", "payload": {"type": "function_call", "name": "get_sum", "namespace": "mcp__toolbox", "arguments": "{}", "call_id": "s1"}}"#,
        r#"{"timestamp": "2026-11-28T09:14:08Z", "type": "response_item", "payload": {"type": "function_call_output", "call_id": "s1", "output": "err: \"x\""}}"#,
    ]);
    assert_eq!(bad, 0);
    assert_eq!(
        calls,
        [(
            "s1".to_string(),
            "toolbox/get-sum@sp".to_string(),
            Some(Status::Error)
        )]
    );
}

/// A call's project is the `cwd` of the last `session_meta` or `turn_context` before it.
#[test]
fn the_project_is_the_rollouts_cwd() {
    let names = Names::new(&["toolbox"], &["get-sum"]);
    let mut a = Codex::new(&names, "rollout-x", "2026-01-01T00:00:00.000Z");
    let call = |id: &str| {
        format!(
            r#"{{"timestamp":"2026-11-28T09:14:07Z","type":"response_item","payload":{{"type":"function_call","name":"get_sum","namespace":"mcp__toolbox","arguments":"{{}}","call_id":"{id}"}}}}"#
        )
    };
    let text = [
        call("c0"),
        r#"{"timestamp":"2026-11-28T09:14:03.512Z","type":"session_meta","payload":{"id":"own","cwd":"/w/api/"}}"#.to_string(),
        call("c1"),
        r#"{"timestamp":"2026-11-28T09:15:00Z","type":"turn_context","payload":{"cwd":"/w/web","model":"m"}}"#.to_string(),
        call("c2"),
        r#"{"timestamp":"2026-11-28T09:16:00Z","type":"turn_context","payload":{"model":"m"}}"#.to_string(),
        call("c3"),
        r#"{"timestamp":"2026-11-28T09:17:00Z","type":"turn_context","payload":{"cwd":"not/absolute"}}"#.to_string(),
        call("c4"),
    ]
    .join("\n")
        + "\n";
    let (calls, bad) = parse_all(&mut a, text.as_bytes());
    assert_eq!(bad, 0);
    let got: Vec<(&str, Option<&str>)> = calls
        .iter()
        .map(|c| (c.call_id(), c.project.as_deref()))
        .collect();
    assert_eq!(
        got,
        [
            ("c0", None),
            ("c1", Some("/w/api")),
            ("c2", Some("/w/web")),
            ("c3", Some("/w/web")),
            ("c4", Some("/w/web")),
        ]
    );
}
