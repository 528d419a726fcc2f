//! Tests of how a stdio upstream's output lines are routed.

use super::*;
use serde_json::json;

/// A line is routed as bytes: a response reaches its waiter; one holding bytes that are not
/// UTF-8 is still answered, with U+FFFD in their place; a line that is not JSON is skipped.
#[tokio::test]
async fn lines_are_routed_as_bytes_and_bytes_not_utf8_are_mended() {
    let pending: Pending = Arc::default();
    let stdin = tokio::sync::Mutex::new(None);
    let notes = Arc::new(Mutex::new(Vec::new()));
    let seen = notes.clone();
    let note: OnNotification = Arc::new(move |m: &Value| seen.lock().unwrap().push(m.clone()));
    let wait = |id: &str| {
        let (tx, rx) = oneshot::channel();
        pending.lock().unwrap().insert(id.to_string(), tx);
        rx
    };
    let (mut one, mut two) = (wait("1"), wait("2"));
    route_line(
        br#"{"jsonrpc":"2.0","id":1,"result":{"t":"ok"}}"#,
        &pending,
        &stdin,
        &note,
        "t",
    )
    .await;
    let bad = b"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"t\":\"a\xffb\"}}";
    route_line(bad, &pending, &stdin, &note, "t").await;
    route_line(b"\xff\xfe banner", &pending, &stdin, &note, "t").await;
    route_line(
        br#"{"jsonrpc":"2.0","method":"notifications/x"}"#,
        &pending,
        &stdin,
        &note,
        "t",
    )
    .await;
    assert_eq!(
        one.try_recv().unwrap().unwrap()["result"],
        json!({"t": "ok"})
    );
    let mended = two
        .try_recv()
        .expect("the line with bytes not UTF-8 is answered");
    assert_eq!(mended.unwrap()["result"], json!({"t": "a\u{FFFD}b"}));
    assert_eq!(notes.lock().unwrap().len(), 1);
    assert!(pending.lock().unwrap().is_empty());
}
