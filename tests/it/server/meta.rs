//! The meta-tools' bad inputs through the real `mws serve`: a huge `search_tools` query refused
//! while other requests go on, and queries and `call_tool` parameters of the wrong type.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::clients;
use crate::support::fake_http::{self, Mode};
use crate::support::serve::{self, Served, names, post_modern};
use crate::support::wire::LegacyClient;

/// How long the upstream may take to be listed before a test fails.
const SETTLE: Duration = Duration::from_secs(30);

/// How long a `ping` may wait while a huge search is handled. A 64,000-word query once held the
/// proxy's one worker for 13.6 s (release build), so a ping waited as long.
const PING_WAIT: Duration = Duration::from_secs(10);

/// Polls `tools/list` until it lists `want`.
async fn listed(served: &Served, want: &[&str]) {
    let deadline = Instant::now() + SETTLE;
    loop {
        let got = names(&post_modern(&served.url, 1, "tools/list", json!({})).await);
        if got == want {
            return;
        }
        assert!(Instant::now() < deadline, "never listed {want:?}: {got:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// `tools/call` of `name` with `arguments`: the result (which must not be a JSON-RPC error).
async fn call(served: &Served, name: &str, arguments: Value) -> Value {
    let r = post_modern(
        &served.url,
        7,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
    .await;
    assert!(r.get("error").is_none(), "{r}");
    r["result"].clone()
}

/// The text of a tool error result.
fn error_text(result: &Value) -> String {
    assert_eq!(result["isError"], true, "{result}");
    clients::text(result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_huge_search_is_refused_while_a_ping_is_answered() {
    let dir = tempfile::tempdir().unwrap();
    let served = serve::start_in(dir, &json!({}), &["--demo"]);
    let mut want = vec!["search_tools", "call_tool"];
    want.extend(crate::support::demo_pins());
    listed(&served, &want).await;
    let r = call(
        &served,
        "search_tools",
        json!({"query": "cancel a meeting"}),
    )
    .await;
    assert!(clients::text(&r).contains("calendar_delete_event"), "{r}");

    // 64,000 distinct words (about 500 KB), the size that once took 13.6 s to rank.
    let words: Vec<String> = (0..64_000).map(|i| format!("w{i}q")).collect();
    let query = format!("send an email {}", words.join(" "));
    let url = served.url.clone();
    let search = tokio::spawn(async move {
        let args = json!({"name": "search_tools", "arguments": {"query": query}});
        post_modern(&url, 2, "tools/call", args).await
    });
    // The search is on its way (a loopback upload of 500 KB takes milliseconds).
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ping = async {
        let legacy = LegacyClient::open(&served.url, "pinger", json!({})).await;
        legacy.rpc("ping", json!({})).await
    };
    let pong = tokio::time::timeout(PING_WAIT, ping)
        .await
        .expect("a session opened and pinged while the huge search is handled");
    assert_eq!(pong["result"], json!({}), "{pong}");
    let r = tokio::time::timeout(SETTLE, search)
        .await
        .expect("the huge search answered")
        .unwrap();
    let text = error_text(&r["result"]);
    assert_eq!(
        text,
        "search_tools: query too long: 500903 bytes, at most 4096; search with a few words that \
         say what the tool does"
    );
    let words = "share file ".repeat(200);
    let r = call(&served, "search_tools", json!({"query": words})).await;
    let text = error_text(&r);
    assert!(
        text.starts_with("search_tools: query has too many words: more than 256"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_or_call_tool_parameter_of_the_wrong_type_is_a_tool_error() {
    let tools = vec![json!({"name": "notes_list"}), json!({"name": "notes_add"})];
    let fake = fake_http::start(Mode::Modern, tools, 10).await;
    let served = serve::start(&json!({"upstream": {"url": fake.url}}), &["notes_list"]);
    listed(&served, &["search_tools", "call_tool", "notes_list"]).await;
    for (arguments, got) in [
        (json!({"query": {"a": 1}}), "an object"),
        (json!({"query": null}), "null"),
        (json!({"query": 3}), "a number"),
        (json!({"query": true}), "a boolean"),
        (json!({}), "nothing"),
        (json!("notes"), "nothing"),
    ] {
        let r = call(&served, "search_tools", arguments.clone()).await;
        assert_eq!(
            error_text(&r),
            format!(
                "search_tools: 'query' must be a string, got {got}; pass what the tool should do \
                 (\"send an email\"), a tool or backend name, or \"\" to list every tool"
            ),
            "{arguments}"
        );
    }
    // call_tool's own parameters.
    for (arguments, want) in [
        (json!({"name": 5}), "call_tool needs 'name'"),
        (json!({"name": null}), "call_tool needs 'name'"),
        (
            json!({"name": "notes_add", "arguments": 3}),
            "call_tool: 'arguments' must be a JSON object",
        ),
        (
            json!({"name": "notes_add", "arguments": [1]}),
            "call_tool: 'arguments' must be a JSON object",
        ),
        (json!([1]), "call_tool: 'arguments' must be a JSON object"),
    ] {
        let r = call(&served, "call_tool", arguments.clone()).await;
        assert!(error_text(&r).starts_with(want), "{arguments}: {r}");
    }
    // A string query still searches.
    let r = call(&served, "search_tools", json!({"query": "notes_add"})).await;
    assert_ne!(r["isError"], true, "{r}");
    assert_eq!(
        fake.state.count("tools/call"),
        0,
        "nothing bad reached the upstream"
    );
}
