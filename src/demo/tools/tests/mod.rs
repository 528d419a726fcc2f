//! Unit tests for the demo tools: argument checking as a table here, each backend's effects in
//! the files beside it.

mod office;
mod web_code;

use serde_json::{Value, json};
use time::macros::datetime;

use super::{ToolError, call as run, check_args};
use crate::demo::protocol::catalog_tools;
use crate::demo::tools::State;

pub(super) fn state() -> State {
    State::seeded(datetime!(2026-12-01 08:00 UTC))
}

/// Checks the arguments against the catalog schema, runs the tool, returns its JSON data.
pub(super) fn call(s: &mut State, name: &str, args: Value) -> Result<Value, ToolError> {
    let tool = catalog_tools()
        .into_iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not in the catalog"));
    let args = args.as_object().cloned().expect("args are an object");
    check_args(&tool, &args).map_err(ToolError::BadParams)?;
    run(s, name, &args).map(|o| o.data)
}

pub(super) fn ok(s: &mut State, name: &str, args: Value) -> Value {
    call(s, name, args.clone()).unwrap_or_else(|e| panic!("{name} {args}: {e:?}"))
}

pub(super) fn failed(s: &mut State, name: &str, args: Value) -> String {
    match call(s, name, args) {
        Err(ToolError::Failed(m)) => m,
        other => panic!("{name}: expected a tool failure, got {other:?}"),
    }
}

#[test]
fn every_catalog_tool_is_implemented() {
    let mut s = state();
    for t in catalog_tools() {
        let name = t["name"].as_str().unwrap();
        let r = run(&mut s, name, &serde_json::Map::new());
        if let Err(ToolError::BadParams(m)) = &r {
            assert!(!m.contains("unknown tool"), "{name}: {m}");
        }
    }
    assert_eq!(catalog_tools().len(), 60);
}

#[test]
fn bad_arguments_name_the_problem() {
    let cases: &[(&str, Value, &str)] = &[
        (
            "mail_send_message",
            json!({"subject": "s", "body": "b"}),
            "missing required argument \"to\"",
        ),
        (
            "mail_send_message",
            json!({"to": [], "subject": "s", "body": "b"}),
            "\"to\" needs at least 1",
        ),
        (
            "mail_send_message",
            json!({"to": ["nobody"], "subject": "s", "body": "b"}),
            "\"to[0]\" must be an email",
        ),
        (
            "mail_send_message",
            json!({"to": ["a@b.co"], "subject": 3, "body": "b"}),
            "\"subject\" must be string, got a number",
        ),
        (
            "mail_send_message",
            json!({"to": ["a@b.co"], "subject": "s", "body": "b", "bogus": 1}),
            "unknown argument \"bogus\"",
        ),
        ("mail_list_messages", json!({"limit": 101}), "at most 100"),
        (
            "calendar_respond_to_invite",
            json!({"event_id": "evt_e1", "response": "maybe"}),
            "must be one of",
        ),
        (
            "browser_fill_form",
            json!({"fields": [{"selector": "#q"}]}),
            "missing required argument \"fields[0].value\"",
        ),
        (
            "calendar_create_event",
            json!({"title": "t", "start": "tomorrow", "end": "2026-12-02T10:00:00Z"}),
            "RFC 3339",
        ),
        (
            "codesearch_grep",
            json!({"pattern": "(", "repo": "acme/web"}),
            "invalid regular expression",
        ),
        (
            "mail_list_messages",
            json!({"page_token": "zz"}),
            "invalid page_token",
        ),
    ];
    for (tool, args, want) in cases {
        let mut s = state();
        match call(&mut s, tool, args.clone()) {
            Err(ToolError::BadParams(m)) => {
                assert!(m.contains(want), "{tool} {args}: {m:?} lacks {want:?}")
            }
            other => panic!("{tool} {args}: expected bad params, got {other:?}"),
        }
    }
}
