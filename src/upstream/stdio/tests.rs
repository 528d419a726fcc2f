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
        pending
            .lock()
            .unwrap()
            .insert(id.to_string(), Waiter::Tree(tx));
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

/// The response a `Kept` waiter got read into a tree.
fn tree(answer: Result<Answer, WireError>) -> Value {
    match answer.unwrap() {
        Answer::Tree(m) => m,
        Answer::Raw(r) => panic!("kept as sent: {r:?}"),
    }
}

/// A waiter that takes a result kept as sent gets its response's result so, when the result is
/// an object the parser reads; anything else reaches it as a message, as before: an error, a
/// result that is not an object, a line not UTF-8 (mended), one nested past the parser's limit
/// (refused). Another waiter's response never reaches it, and that waiter gets its response as a
/// tree, id and all.
#[tokio::test]
async fn a_waiter_that_asks_gets_its_result_kept_as_sent() {
    let pending: Pending = Arc::default();
    let stdin = tokio::sync::Mutex::new(None);
    let note: OnNotification = Arc::new(|_: &Value| {});
    let wait = |id: &str| {
        let (tx, rx) = oneshot::channel();
        pending
            .lock()
            .unwrap()
            .insert(id.to_string(), Waiter::Kept(tx));
        rx
    };
    let (tx, mut other) = oneshot::channel();
    pending
        .lock()
        .unwrap()
        .insert("2".to_string(), Waiter::Tree(tx));
    let route = |line: Vec<u8>| {
        let (pending, stdin, note) = (&pending, &stdin, &note);
        async move { route_line(&line, pending, stdin, note, "t").await }
    };
    let mut kept = wait("\"a\"");
    let (mut error, mut array) = (wait("3"), wait("4"));
    let (mut mended, mut deep) = (wait("5"), wait("6"));
    route(br#"{"jsonrpc":"2.0","id":2,"result":{"content":[]}}"#.to_vec()).await;
    route(br#"{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"x"}],"isError":false}}"#.to_vec()).await;
    route(br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"no"}}"#.to_vec()).await;
    route(br#"{"jsonrpc":"2.0","id":4,"result":[1]}"#.to_vec()).await;
    route(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{\"content\":\"a\xffb\"}}".to_vec()).await;
    let nested = format!("{}{}", "[".repeat(200), "]".repeat(200));
    let line = format!(r#"{{"jsonrpc":"2.0","id":6,"result":{{"content":{nested}}}}}"#);
    route(line.into_bytes()).await;
    match kept.try_recv().unwrap().unwrap() {
        Answer::Raw(r) => {
            assert_eq!(r.kept_len(), r#"[{"type":"text","text":"x"}]"#.len());
            assert_eq!(r.top.get("isError"), Some(&json!(false)));
        }
        Answer::Tree(m) => panic!("read into a tree: {m}"),
    }
    let other = other.try_recv().unwrap().unwrap();
    assert_eq!(
        other,
        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": []}})
    );
    assert_eq!(tree(error.try_recv().unwrap())["error"]["code"], -32602);
    assert_eq!(tree(array.try_recv().unwrap())["result"], json!([1]));
    assert_eq!(
        tree(mended.try_recv().unwrap())["result"]["content"],
        "a\u{FFFD}b"
    );
    match deep.try_recv().unwrap() {
        Err(WireError::Protocol(why)) => assert!(why.contains("nested"), "{why}"),
        other => panic!("a result nested too deep was not refused: {other:?}"),
    }
    assert!(pending.lock().unwrap().is_empty());
}
