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
            project: None,
        };
        limit(
            &mut caller,
            &obj(msg.clone()),
            progress::accepts_sse(accept),
        );
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

/// An upstream that asks for input on every `tools/call`, or (`named_none`) answers
/// `input_required` without naming any request; records the params of each call.
struct Asking {
    named_none: bool,
    seen: std::sync::Mutex<Vec<Value>>,
}

#[async_trait::async_trait]
impl crate::upstream::Upstream for Asking {
    async fn catalog(&self) -> crate::upstream::CatalogSnapshot {
        crate::upstream::CatalogSnapshot {
            catalog: Arc::default(),
            source: crate::upstream::CatalogSource::None,
            version: 0,
        }
    }

    async fn request(
        &self,
        _: &str,
        params: Value,
        _: &crate::upstream::CallContext,
    ) -> Result<Value, crate::upstream::UpstreamError> {
        let mut seen = self.seen.lock().unwrap();
        seen.push(params);
        if self.named_none {
            return Ok(json!({"resultType": "input_required"}));
        }
        let ask = json!({"method": "elicitation/create", "params": {"message": "again?"}});
        Ok(
            json!({"resultType": "input_required", "inputRequests": {"q": ask},
                  "requestState": format!("state-{}", seen.len())}),
        )
    }

    async fn notify(
        &self,
        _: &str,
        _: Option<Value>,
    ) -> Result<(), crate::upstream::UpstreamError> {
        Ok(())
    }

    fn status(&self) -> crate::upstream::UpstreamStatus {
        crate::upstream::UpstreamStatus::default()
    }

    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        tokio::sync::watch::channel(0).1
    }
}

/// Runs one relayed call against `upstream`, answering every request mws sends with `accept`.
async fn relayed_call(upstream: Arc<Asking>) -> Value {
    let (_keep, ws) = tokio::sync::watch::channel(Arc::new(Default::default()));
    let proxy = Proxy::new(upstream, crate::config::Config::default(), ws, None);
    let pending = Arc::new(Pending::default());
    let caller = Caller {
        era: Era::Legacy,
        client: Some("legacy-client".into()),
        session: Some("s1".into()),
        input: Some(Arc::new(json!({"elicitation": {}}))),
        project: None,
    };
    let msg = obj(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                         "params": {"name": "t", "arguments": {}}}));
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let answering = pending.clone();
    let answerer = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            let data = event
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap();
            let req: Value = serde_json::from_str(data).unwrap();
            assert_eq!(req["method"], "elicitation/create", "{req}");
            let reply =
                obj(json!({"jsonrpc": "2.0", "id": req["id"], "result": {"action": "accept"}}));
            assert!(answering.deliver(Some("s1"), &reply));
        }
    });
    let answer = rounds(&proxy, &pending, msg, &caller, None, None, &tx).await;
    drop(tx);
    answerer.await.unwrap();
    assert!(pending.is_empty());
    answer
}

#[tokio::test]
async fn an_upstream_that_keeps_asking_is_cut_off_after_max_rounds() {
    let up = Arc::new(Asking {
        named_none: false,
        seen: Default::default(),
    });
    let answer = relayed_call(up.clone()).await;
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert_eq!(
        message,
        "the upstream still asked for input after 8 rounds; mws gave up on the call"
    );
    assert_eq!(answer["id"], 7);
    let seen = up.seen.lock().unwrap();
    assert_eq!(seen.len(), MAX_ROUNDS + 1);
    assert!(seen[0].get("inputResponses").is_none());
    for (n, params) in seen.iter().enumerate().skip(1) {
        assert_eq!(params["inputResponses"], json!({"q": {"action": "accept"}}));
        assert_eq!(params["requestState"], format!("state-{n}"));
        assert_eq!(params["name"], "t");
    }
}

#[tokio::test]
async fn input_required_naming_nothing_is_an_error() {
    let up = Arc::new(Asking {
        named_none: true,
        seen: Default::default(),
    });
    let answer = relayed_call(up).await;
    assert_eq!(
        answer["error"]["message"],
        "the upstream asked for input (input_required) but named no inputRequests"
    );
}
