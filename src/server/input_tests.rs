//! Unit tests of `input.rs`: which capabilities are relayed, which requests may be relayed, and
//! that a posted answer reaches only the call (and session) it belongs to.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::*;
use crate::mcp::Era;

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap()
}

#[test]
fn only_input_capabilities_are_relayed() {
    // (initialize params, relayed capabilities)
    let cases = [
        (json!({"capabilities": {}}), None),
        (json!({}), None),
        (json!({"capabilities": {"experimental": {}}}), None),
        (
            json!({"capabilities": {"sampling": {}, "roots": {"listChanged": true}, "tasks": {}}}),
            Some(json!({"sampling": {}, "roots": {"listChanged": true}})),
        ),
        (
            json!({"capabilities": {"elicitation": {"form": {}}, "sampling": true}}),
            Some(json!({"elicitation": {"form": {}}})),
        ),
    ];
    for (params, want) in cases {
        let got = capabilities(Some(&params)).map(|v| (*v).clone());
        assert_eq!(got, want, "{params}");
    }
    assert_eq!(capabilities(None), None);
}

#[test]
fn input_is_kept_only_where_it_can_be_relayed() {
    let caps = Some(Arc::new(json!({"sampling": {}})));
    let sse = Some("application/json, text/event-stream");
    // (message, Accept, relayed)
    let cases = [
        (json!({"id": 1, "method": "tools/call"}), sse, true),
        (json!({"id": 1, "method": "prompts/get"}), sse, true),
        (json!({"id": 1, "method": "resources/read"}), sse, true),
        (
            json!({"id": 1, "method": "tools/call"}),
            Some("application/json"),
            false,
        ),
        (json!({"id": 1, "method": "tools/call"}), None, false),
        (json!({"id": 1, "method": "tools/list"}), sse, false),
        (json!({"method": "tools/call"}), sse, false),
    ];
    for (msg, accept, relayed) in cases {
        let mut caller = Caller {
            era: Era::Legacy,
            client: None,
            session: Some("s".into()),
            input: caps.clone(),
        };
        limit(&mut caller, &obj(msg.clone()), accept);
        assert_eq!(caller.input.is_some(), relayed, "{msg} {accept:?}");
    }
}

#[test]
fn answers_and_responses_are_recognised() {
    assert!(asks_input(
        &json!({"id": 1, "result": {"resultType": "input_required", "inputRequests": {}}})
    ));
    assert!(!asks_input(&json!({"id": 1, "result": {"content": []}})));
    assert!(!asks_input(&json!({"id": 1, "error": {"code": 1}})));
    assert!(is_response(&obj(
        json!({"id": "mws-input-1", "result": {}})
    )));
    assert!(is_response(&obj(json!({"id": "x", "error": {"code": -1}}))));
    assert!(!is_response(&obj(json!({"id": 1, "method": "ping"}))));
    assert!(!is_response(&obj(json!({"result": {}}))));
}

#[tokio::test]
async fn an_answer_reaches_only_its_own_call_and_session() {
    let p = Pending::default();
    let (id, rx) = p.register("session-a");
    let answer = obj(json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept"}}));
    assert!(!p.deliver(Some("session-b"), &answer), "another session");
    assert!(!p.deliver(None, &answer), "no session");
    let unknown = obj(json!({"jsonrpc": "2.0", "id": "mws-input-0", "result": {}}));
    assert!(!p.deliver(Some("session-a"), &unknown));
    assert!(p.deliver(Some("session-a"), &answer));
    assert_eq!(rx.await.unwrap()["result"]["action"], "accept");
    assert!(!p.deliver(Some("session-a"), &answer), "answered twice");
    assert!(p.is_empty());
    let (id, _rx) = p.register("s");
    p.forget(&[id]);
    assert!(p.is_empty());
}
