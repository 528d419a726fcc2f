//! Log messages that belong to one call: a caller that wants the upstream's `notifications/message`
//! for a `tools/call` runs it inside `scope` with a `CallSink`. Inside that scope the request asks
//! the upstream for logs (a modern upstream gets `_meta["io.modelcontextprotocol/logLevel"]`, a
//! legacy one a session-wide `logging/setLevel`), and the HTTP wire hands every
//! `notifications/message` that arrives on that request's own response stream to the sink instead
//! of the shared notification channel. Outside a scope nothing changes and nothing is asked for.
//! Never looks at, stores or logs a message's content beyond its `level`.

use std::future::Future;

use serde_json::Value;
use tokio::sync::mpsc;

/// The `_meta` key a 2026-07-28 request sets to ask for log messages at or above a level.
pub const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";

/// RFC 5424 severities as MCP names them, least severe first (the index is the order).
pub const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Messages of one call waiting for the client to read them; past this the newest are dropped
/// (the call itself is never held up). Raising it lets a very chatty tool lose fewer messages to a
/// slow client, at the cost of memory per call.
pub const SINK_CAPACITY: usize = 1024;

/// A severity, ordered as in `LEVELS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Level(u8);

impl Level {
    /// The level named `name` (`"debug"` ... `"emergency"`), `None` for anything else.
    pub fn parse(name: &str) -> Option<Level> {
        LEVELS
            .iter()
            .position(|l| *l == name)
            .and_then(|i| u8::try_from(i).ok())
            .map(Level)
    }

    pub fn name(self) -> &'static str {
        LEVELS[usize::from(self.0)]
    }
}

/// Where the log messages of the call running in this scope go, and the least severe level the
/// client asked for.
#[derive(Debug, Clone)]
pub struct CallSink {
    pub tx: mpsc::Sender<Value>,
    pub level: Level,
    /// The call's progress token as sent upstream and the client's own: the call's progress is
    /// taken too (with the client's token put back), so it keeps its order among the logs.
    pub progress: Option<(Value, Value)>,
}

impl CallSink {
    /// A sink and the receiver its messages come out of.
    pub fn new(level: Level) -> (CallSink, mpsc::Receiver<Value>) {
        let (tx, rx) = mpsc::channel(SINK_CAPACITY);
        let sink = CallSink {
            tx,
            level,
            progress: None,
        };
        (sink, rx)
    }

    /// Also takes the progress sent upstream with token `ours`, as the client's `theirs`.
    pub fn with_progress(mut self, ours: Value, theirs: Value) -> CallSink {
        self.progress = Some((ours, theirs));
        self
    }
}

tokio::task_local! {
    static SINK: CallSink;
}

/// Runs `f` (a `tools/call` through the `Upstream`) with `sink` receiving its log messages.
pub async fn scope<F: Future>(sink: CallSink, f: F) -> F::Output {
    SINK.scope(sink, f).await
}

/// The level the caller in scope asked for, if any.
pub fn requested_level() -> Option<Level> {
    SINK.try_with(|s| s.level).ok()
}

/// Hands `msg` to the sink in scope when it is a `notifications/message`, or the progress of the
/// sink's call (true: it was taken, or dropped for being below the level or over capacity). False
/// outside a scope and for anything else, which the caller routes as before.
pub fn deliver(msg: &Value) -> bool {
    match msg.get("method").and_then(Value::as_str) {
        Some("notifications/message") => SINK
            .try_with(|s| {
                if message_level(msg).is_none_or(|l| l >= s.level) {
                    let _ = s.tx.try_send(msg.clone());
                }
            })
            .is_ok(),
        Some("notifications/progress") => SINK
            .try_with(|s| {
                let (ours, theirs) = s.progress.as_ref()?;
                if msg.pointer("/params/progressToken") != Some(ours) {
                    return None;
                }
                let mut n = msg.clone();
                n["params"]["progressToken"] = theirs.clone();
                let _ = s.tx.try_send(n);
                Some(())
            })
            .ok()
            .flatten()
            .is_some(),
        _ => false,
    }
}

/// A message's `params.level`; `None` when missing or unknown (such a message is relayed).
pub fn message_level(msg: &Value) -> Option<Level> {
    msg.pointer("/params/level")
        .and_then(Value::as_str)
        .and_then(Level::parse)
}

/// For a modern upstream: `params` of a `tools/call` made in a scope get the scope's level in
/// `_meta`. Anything else is returned as it came.
pub fn with_requested_level(method: &str, mut params: Value) -> Value {
    if method != "tools/call" {
        return params;
    }
    let Some(level) = requested_level() else {
        return params;
    };
    if let Some(p) = params.as_object_mut() {
        let meta = p
            .entry("_meta")
            .or_insert_with(|| Value::Object(Default::default()));
        if let Some(m) = meta.as_object_mut() {
            m.insert(META_LOG_LEVEL.into(), Value::String(level.name().into()));
        }
    }
    params
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn note(level: &str) -> Value {
        json!({"jsonrpc": "2.0", "method": "notifications/message",
               "params": {"level": level, "data": "x"}})
    }

    #[test]
    fn levels_order_as_rfc5424() {
        let order: Vec<Level> = LEVELS.iter().map(|l| Level::parse(l).unwrap()).collect();
        assert!(order.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(Level::parse("warning").unwrap().name(), "warning");
        for bad in ["", "DEBUG", "warn", "trace"] {
            assert_eq!(Level::parse(bad), None, "{bad}");
        }
    }

    #[tokio::test]
    async fn outside_a_scope_nothing_is_taken_or_asked_for() {
        assert!(!deliver(&note("error")));
        let p = json!({"name": "t"});
        assert_eq!(with_requested_level("tools/call", p.clone()), p);
    }

    #[tokio::test]
    async fn a_scope_takes_its_messages_at_or_above_its_level() {
        let (sink, mut rx) = CallSink::new(Level::parse("info").unwrap());
        scope(sink, async {
            // (message, taken by the sink, relayed to the client)
            let cases = [
                (note("debug"), true, false),
                (note("info"), true, true),
                (note("emergency"), true, true),
                (
                    json!({"method": "notifications/message", "params": {}}),
                    true,
                    true,
                ),
                (
                    json!({"method": "notifications/progress", "params": {}}),
                    false,
                    false,
                ),
            ];
            for (msg, taken, _) in &cases {
                assert_eq!(deliver(msg), *taken, "{msg}");
            }
            let relayed: Vec<Value> = cases.iter().filter(|c| c.2).map(|c| c.0.clone()).collect();
            for want in relayed {
                assert_eq!(rx.try_recv().unwrap(), want);
            }
            assert!(rx.try_recv().is_err());
            assert_eq!(
                with_requested_level("tools/call", json!({"name": "t", "_meta": {"k": 1}})),
                json!({"name": "t", "_meta": {"k": 1, META_LOG_LEVEL: "info"}})
            );
            let list = json!({"cursor": "c"});
            assert_eq!(with_requested_level("tools/list", list.clone()), list);
        })
        .await;
    }

    #[tokio::test]
    async fn a_scope_with_a_progress_token_takes_that_calls_progress_in_order() {
        let (sink, mut rx) = CallSink::new(Level::parse("debug").unwrap());
        let sink = sink.with_progress(json!("mws-1"), json!(7));
        let progress =
            |t: Value| json!({"method": "notifications/progress", "params": {"progressToken": t}});
        scope(sink, async {
            assert!(deliver(&progress(json!("mws-1"))));
            assert!(deliver(&note("info")));
            assert!(
                !deliver(&progress(json!("mws-2"))),
                "another call's progress"
            );
        })
        .await;
        assert_eq!(rx.try_recv().unwrap(), progress(json!(7)));
        assert_eq!(rx.try_recv().unwrap(), note("info"));
        assert!(rx.try_recv().is_err());
    }
}
