//! The meta-tools' bad inputs through the real `mws serve`: a huge `search_tools` query refused
//! while other requests go on, queries and `call_tool` parameters of the wrong type, and an
//! upstream whose own tools are named `search_tools` and `call_tool`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::clients;
use crate::support::fake_http::{self, Mode};
use crate::support::run::{json_run, mws_config};
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
    let mut want = vec![
        "search_tools",
        "call_tool",
        "call_read_only_tool",
        "run_script",
    ];
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
    let config = json!({"upstream": {"url": fake.url}, "listing": "working-set"});
    let served = serve::start(&config, &["notes_list"]);
    listed(
        &served,
        &["search_tools", "call_tool", "run_script", "notes_list"],
    )
    .await;
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
    // The same through call_tool, and call_tool's own parameters.
    let r = call(
        &served,
        "call_tool",
        json!({"name": "search_tools", "arguments": {"query": 7}}),
    )
    .await;
    assert!(error_text(&r).contains("got a number"), "{r}");
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn meta_named_upstream_tools_are_reached_as_upstream_names() {
    let tools = vec![
        json!({"name": "search_tools", "description": "Search the upstream's own records.",
               "inputSchema": {"type": "object"}}),
        json!({"name": "call_tool", "description": "The upstream's own dispatcher.",
               "inputSchema": {"type": "object"}}),
        json!({"name": "notes_list", "description": "List notes.", "inputSchema": {"type": "object"}}),
    ];
    let fake = fake_http::start(Mode::Modern, tools, 10).await;
    // The working set and pins name upstream tools as the upstream knows them.
    let config =
        json!({"upstream": {"url": fake.url}, "pins": ["call_tool"], "listing": "working-set"});
    let mut served = serve::start(&config, &["search_tools"]);
    listed(
        &served,
        &[
            "search_tools",
            "call_tool",
            "run_script",
            "upstream__search_tools",
            "upstream__call_tool",
        ],
    )
    .await;
    let list = post_modern(&served.url, 1, "tools/list", json!({})).await;
    let tool = &list["result"]["tools"][3];
    assert_eq!(tool["description"], "Search the upstream's own records.");
    assert_eq!(list["result"]["tools"][0]["title"], "Search tools");

    // Search shows the upstream's tools under the same names, and so do its templates.
    let r = call(&served, "search_tools", json!({"query": "own records"})).await;
    let reply: Value = serde_json::from_str(&clients::text(&r)).unwrap();
    assert_eq!(
        reply["results"][0]["name"], "upstream__search_tools",
        "{reply}"
    );
    assert_eq!(reply["results"][0]["listed"], true, "{reply}");
    let template = &reply["results"][0]["call_tool"];
    assert_eq!(template["name"], "upstream__search_tools", "{reply}");
    let r = call(&served, "search_tools", json!({"query": ""})).await;
    let text = clients::text(&r);
    assert!(text.contains("upstream__call_tool"), "{text}");
    assert!(!text.contains("\"call_tool\""), "{text}");

    // The bare names are mws's; the upstream__ names reach the upstream, directly and through
    // call_tool, under the upstream's own names.
    let r = call(&served, "upstream__search_tools", json!({"q": 1})).await;
    assert_eq!(clients::text(&r), "called search_tools");
    let via = json!({"name": "upstream__call_tool", "arguments": {}});
    let r = call(&served, "call_tool", via).await;
    assert_eq!(clients::text(&r), "called call_tool");
    let via = json!({"name": "mcp__mws__upstream__search_tools"});
    let r = call(&served, "call_tool", via).await;
    assert_eq!(clients::text(&r), "called search_tools");
    let via = json!({"name": "search_tools", "arguments": {"query": "list notes"}});
    let r = call(&served, "call_tool", via).await;
    assert!(clients::text(&r).contains("\"mode\":\"ranked\""), "{r}");
    let r = call(&served, "call_tool", json!({"name": "call_tool"})).await;
    assert_eq!(
        error_text(&r),
        "call_tool: 'name' must be the tool to run, not call_tool itself"
    );
    let r = call(
        &served,
        "call_tool",
        json!({"name": "upstream_search_tool"}),
    )
    .await;
    let text = error_text(&r);
    assert!(
        text.contains("Did you mean: upstream__search_tools"),
        "{text}"
    );
    let sent: Vec<String> = fake
        .state
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|s| s.method == "tools/call")
        .map(|s| s.body["params"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(sent, ["search_tools", "call_tool", "search_tools"]);

    served.stop();
    let rows: Vec<(String, String)> = served.calls().into_iter().map(|r| (r.0, r.1)).collect();
    let row = |t: &str, via: &str| (t.to_string(), via.to_string());
    assert_eq!(
        rows,
        [
            row("search_tools", "direct"),
            row("call_tool", "call_tool"),
            row("search_tools", "call_tool"),
        ]
    );
    // The report lists the upstream's tool as clients see it, with the calls logged under its
    // upstream name.
    let config = json!({"upstream": {"url": fake.url}, "pins": ["call_tool"], "listing": "working-set",
                        "stateDir": served.dir.path().join("state"), "transcripts": []});
    let path = served.dir.path().join("report.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let report = json_run(mws_config(&path).args(["report", "--json"]));
    let rows: Vec<(&str, &str, bool, u64)> = report["listed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap();
            let reason = t["reason"].as_str().unwrap();
            (
                name,
                reason,
                t["inCatalog"] == true,
                t["calls"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("search_tools", "meta-tool", false, 0),
            ("call_tool", "meta-tool", false, 0),
            ("run_script", "meta-tool", false, 0),
            ("upstream__search_tools", "promoted", true, 2),
            ("upstream__call_tool", "pin", true, 1),
        ],
        "{report}"
    );
    let stderr = served.stderr.lock().unwrap().join("\n");
    for name in ["search_tools", "call_tool"] {
        let warning = format!(
            "the upstream has a tool named '{name}', like mws's own meta-tool: clients see it as \
             'upstream__{name}' (the bare name runs mws's {name})"
        );
        assert_eq!(stderr.matches(&warning).count(), 1, "{stderr}");
    }
}
