//! Unit tests of `answer/mod.rs`: the one rule that picks how a request is answered, as a table of
//! the cases each transport meets.

use serde_json::json;

use super::*;
use crate::upstream::related::META_LOG_LEVEL;

fn call(meta: Value) -> Map<String, Value> {
    let m = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "t", "arguments": {}, "_meta": meta}});
    m.as_object().cloned().unwrap()
}

fn level(name: &str) -> Option<Level> {
    Level::parse(name)
}

#[test]
fn one_rule_for_every_transport() {
    let token = json!({"progressToken": "p1"});
    let asks_logs = json!({META_LOG_LEVEL: "debug", "progressToken": 7});
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"});
    let list = list.as_object().cloned().unwrap();
    let input = Some(Arc::new(json!({"sampling": {}})));
    // (what, message, era, input capabilities, stream, session level, relays logs,
    //  the way, input capabilities kept)
    let cases = [
        (
            "plain call",
            call(json!({})),
            Era::Modern,
            None,
            true,
            None,
            true,
            Way::Plain,
            false,
        ),
        (
            "progress",
            call(token.clone()),
            Era::Modern,
            None,
            true,
            None,
            true,
            Way::Progress(json!("p1")),
            false,
        ),
        (
            "progress, no SSE",
            call(token.clone()),
            Era::Modern,
            None,
            false,
            None,
            true,
            Way::Plain,
            false,
        ),
        (
            "2026 logs with progress",
            call(asks_logs.clone()),
            Era::Modern,
            None,
            true,
            None,
            true,
            Way::Logs(level("debug").unwrap(), Some(json!(7))),
            false,
        ),
        (
            "2026 logs, not relayed",
            call(asks_logs.clone()),
            Era::Modern,
            None,
            true,
            None,
            false,
            Way::Progress(json!(7)),
            false,
        ),
        (
            "2026 logs, no SSE",
            call(asks_logs.clone()),
            Era::Modern,
            None,
            false,
            None,
            true,
            Way::Plain,
            false,
        ),
        (
            "2026 ignores a session level",
            call(json!({})),
            Era::Modern,
            None,
            true,
            level("info"),
            true,
            Way::Plain,
            false,
        ),
        (
            "session logs",
            call(json!({})),
            Era::Legacy,
            None,
            true,
            level("info"),
            true,
            Way::Logs(level("info").unwrap(), None),
            false,
        ),
        (
            "session logs only for calls",
            list.clone(),
            Era::Legacy,
            None,
            true,
            level("info"),
            true,
            Way::Plain,
            false,
        ),
        (
            "2025 ignores the 2026 key",
            call(asks_logs.clone()),
            Era::Legacy,
            None,
            true,
            None,
            true,
            Way::Progress(json!(7)),
            false,
        ),
        (
            "input relay for progress",
            call(token.clone()),
            Era::Legacy,
            input.clone(),
            true,
            None,
            true,
            Way::Input(None),
            true,
        ),
        (
            "input relay with logs",
            call(json!({})),
            Era::Legacy,
            input.clone(),
            true,
            level("info"),
            true,
            Way::Input(level("info")),
            true,
        ),
        (
            "input may follow a plain answer",
            call(json!({})),
            Era::Legacy,
            input.clone(),
            true,
            None,
            true,
            Way::Plain,
            true,
        ),
        (
            "no input relay without SSE",
            call(token.clone()),
            Era::Legacy,
            input.clone(),
            false,
            None,
            true,
            Way::Plain,
            false,
        ),
        (
            "no input relay for lists",
            list.clone(),
            Era::Legacy,
            input.clone(),
            true,
            None,
            true,
            Way::Plain,
            false,
        ),
    ];
    for (what, msg, era, input, stream, session, relays, want, kept) in cases {
        let mut caller = Caller {
            era,
            client: None,
            session: Some("s".into()),
            input,
            project: None,
        };
        let got = choose(&msg, &mut caller, stream, session, || relays);
        assert_eq!(got, want, "{what}");
        assert_eq!(caller.input.is_some(), kept, "{what}: input kept");
    }
}
