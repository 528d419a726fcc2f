//! Arguments checked before dispatch, through the real `mws serve` in front of server-everything
//! behind the counting fixture (`support/counting_stdio.py`): a wrong-typed call, direct, through
//! `call_tool` and over `--stdio`, is refused with the path and the tool's schema, the upstream
//! receives nothing, the corrected call succeeds, and the `calls` row says `invalid_args`. A tool
//! the `policy` excludes is not listed, searched or suggested, and a call to it is refused;
//! `policy.readOnly` naming one server of two limits only that server.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::serve::{self, StdioServed, post_modern};

const TOOL: &str = "get-sum";

fn config(log: &Path) -> Value {
    with_policy(log, json!({}))
}

fn with_policy(log: &Path, policy: Value) -> Value {
    let counting = crate::support::root().join("tests/it/support/counting_stdio.py");
    json!({
        "upstream": {
            "command": "python3",
            "args": [counting, "node", crate::support::server_everything(), "stdio"],
            "env": {"COUNTING_LOG": log},
        },
        "timeouts": {"listMs": 20000, "callMs": 20000, "catalogTtlMs": 60000},
        "policy": policy,
    })
}

/// How many `tools/call` of `TOOL` reached the upstream.
fn calls_received(log: &Path) -> usize {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let line = format!("tools/call {TOOL}");
    text.lines().filter(|l| *l == line).count()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

/// The refusal names the place and the expected type, and ends with the schema, as JSON.
fn assert_refused(result: &Value) {
    assert_eq!(result["isError"], json!(true), "{result}");
    let t = text(result);
    assert!(
        t.starts_with(&format!("invalid arguments for {TOOL}: ")),
        "{t}"
    );
    assert!(
        t.contains("- at /a: the value is not of type \"number\" (found string \"1\")"),
        "{t}"
    );
    let schema: Value = serde_json::from_str(t.split_once("input schema:\n").unwrap().1).unwrap();
    assert_eq!(schema["properties"]["a"]["type"], "number", "{t}");
    assert_eq!(schema["properties"]["a"].get("description"), None, "{t}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_typed_call_never_reaches_server_everything_and_the_fixed_one_runs() {
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("received.log");
    let mut mws = serve::start(&config(&log), &[TOOL]);
    let wrong = json!({"a": "1", "b": 2});
    let direct = post_modern(
        &mws.url,
        1,
        "tools/call",
        json!({"name": TOOL, "arguments": wrong}),
    );
    assert_refused(&direct.await["result"]);
    let via = json!({"name": "call_tool", "arguments": {"name": TOOL, "arguments": wrong}});
    assert_refused(&post_modern(&mws.url, 2, "tools/call", via).await["result"]);
    assert_eq!(
        calls_received(&log),
        0,
        "a refused call reached the upstream"
    );

    let right = json!({"a": 1, "b": 2});
    let direct = post_modern(
        &mws.url,
        3,
        "tools/call",
        json!({"name": TOOL, "arguments": right}),
    );
    let r = direct.await;
    assert_eq!(r["result"].get("isError"), None, "{r}");
    assert!(text(&r["result"]).contains('3'), "{r}");
    let via = json!({"name": "call_tool", "arguments": {"name": TOOL, "arguments": right}});
    let r = post_modern(&mws.url, 4, "tools/call", via).await;
    assert!(text(&r["result"]).contains('3'), "{r}");
    assert_eq!(calls_received(&log), 2);

    mws.stop();
    let store = mws::store::Store::open(&mws.db()).unwrap();
    let mut stmt = store
        .conn()
        .prepare("SELECT via, ok, COALESCE(error_kind, '') FROM calls ORDER BY rowid")
        .unwrap();
    let rows: Vec<(String, bool, String)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let want = [
        ("direct", false, "invalid_args"),
        ("call_tool", false, "invalid_args"),
        ("direct", true, ""),
        ("call_tool", true, ""),
    ];
    let rows: Vec<(&str, bool, &str)> = rows
        .iter()
        .map(|(v, ok, k)| (v.as_str(), *ok, k.as_str()))
        .collect();
    assert_eq!(rows, want);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_a_wrong_typed_call_is_refused_and_the_fixed_one_runs() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("received.log");
    let mut mws = StdioServed::start(dir.path(), &config(&log));
    mws.initialize("guard-test").await;
    let mut ask = async |id: i64, args: Value| {
        mws.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "call_tool", "arguments": {"name": TOOL, "arguments": args}}}))
            .await;
        mws.reply(id).await["result"].clone()
    };
    assert_refused(&ask(2, json!({"a": "1", "b": 2})).await);
    assert_eq!(
        calls_received(&log),
        0,
        "a refused call reached the upstream"
    );
    let r = ask(3, json!({"a": 1, "b": 2})).await;
    assert!(text(&r).contains('3'), "{r}");
    assert_eq!(calls_received(&log), 1);
    mws.close().await;
}

/// `tools/call` of `name` with `arguments` through `mws`: the result.
async fn call(url: &str, name: &str, arguments: Value) -> Value {
    let r = post_modern(
        url,
        9,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
    .await;
    r["result"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_tool_is_not_listed_searched_suggested_or_run() {
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("received.log");
    let policy = json!({"deny": ["get-sum", "*-env"]});
    let mut mws = serve::start(
        &with_policy(&log, policy.clone()),
        &[TOOL, "echo", "get-env"],
    );
    let listed = serve::names(&post_modern(&mws.url, 1, "tools/list", json!({})).await);
    assert_eq!(
        listed,
        [
            "search_tools",
            "call_tool",
            "call_read_only_tool",
            "run_script",
            "echo"
        ]
    );

    let found = call(
        &mws.url,
        "search_tools",
        json!({"query": "add two numbers sum"}),
    )
    .await;
    assert!(!text(&found).contains(TOOL), "{found}");
    assert!(
        text(&found).contains("\"name\""),
        "search found nothing at all: {found}"
    );
    let unknown = call(&mws.url, "call_tool", json!({"name": "get-summ"})).await;
    let suggested = text(&unknown)
        .strip_prefix("unknown tool 'get-summ'. Did you mean: ")
        .and_then(|t| t.split_once('?'))
        .map(|(names, _)| names.split(", ").collect::<Vec<_>>());
    let suggested = suggested.unwrap_or_else(|| panic!("no suggestions: {unknown}"));
    assert!(!suggested.contains(&TOOL), "{unknown}");

    let want = "get-sum may not be called: the policy in mws's config excludes it (config \
                `policy.deny` has \"get-sum\"), so mws neither lists, searches nor runs it";
    let direct = call(&mws.url, TOOL, json!({"a": 1, "b": 2})).await;
    assert_eq!(direct["isError"], true, "{direct}");
    assert_eq!(text(&direct), want);
    let via = call(
        &mws.url,
        "call_tool",
        json!({"name": "get-sum", "arguments": {}}),
    )
    .await;
    assert_eq!(text(&via), want);
    let echoed = call(&mws.url, "echo", json!({"message": "hi"})).await;
    assert!(text(&echoed).contains("hi"), "{echoed}");
    assert_eq!(
        calls_received(&log),
        0,
        "a denied call reached the upstream"
    );

    mws.stop();
    let store = mws::store::Store::open(&mws.db()).unwrap();
    let kinds: Vec<String> = store
        .conn()
        .prepare("SELECT COALESCE(error_kind, 'ok') FROM calls ORDER BY rowid")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(kinds, ["denied_by_policy", "denied_by_policy", "ok"]);

    // `mws report` counts the hidden tools and the refused calls.
    let mut cfg = with_policy(&log, policy);
    cfg["stateDir"] = json!(mws.dir.path().join("state"));
    let path = mws.dir.path().join("report-config.json");
    std::fs::write(&path, cfg.to_string()).unwrap();
    let run = |json: bool| {
        let mut cmd = serve::mws();
        cmd.arg("--config").arg(&path).arg("report");
        if json {
            cmd.arg("--json");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    let v: Value = serde_json::from_str(&run(true)).unwrap();
    let want = json!({"policyHidden": 2, "invalidArgs": 0, "deniedByPolicy": 2,
                      "resultsShaped": 0, "bytesSaved": 0});
    assert_eq!(v["checks"], want);
    let text = run(false);
    assert!(
        text.contains("the config's policy hides 2 tool(s) of the catalog"),
        "{text}"
    );
    assert!(
        text.contains("refused before reaching the upstream: 0 call(s) with invalid arguments, 2 by the policy"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_lists_and_runs_only_tools_annotated_read_only() {
    const WRITER: &str = "toggle-simulated-logging";
    let log_dir = tempfile::tempdir().unwrap();
    let log = log_dir.path().join("received.log");
    let policy = json!({"readOnly": true});
    let mws = serve::start(&with_policy(&log, policy), &[WRITER, "echo"]);
    let listed = serve::names(&post_modern(&mws.url, 1, "tools/list", json!({})).await);
    assert_eq!(
        listed,
        [
            "search_tools",
            "call_tool",
            "call_read_only_tool",
            "run_script",
            "echo"
        ]
    );
    let refused = call(&mws.url, WRITER, json!({})).await;
    assert!(
        text(&refused).contains("`policy.readOnly` is true"),
        "{refused}"
    );
    let echoed = call(&mws.url, "echo", json!({"message": "hi"})).await;
    assert!(text(&echoed).contains("hi"), "{echoed}");
    let received = std::fs::read_to_string(&log).unwrap();
    assert!(received.contains("tools/call echo"), "{received}");
    assert!(!received.contains(WRITER), "{received}");
}

/// `policy.readOnly` naming one of two servers: only that server's tools must be annotated
/// read-only. Both servers are `support/big_stdio.py`, whose tools carry no annotations.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_for_one_server_hides_only_its_unannotated_tools() {
    let big = crate::support::root().join("tests/it/support/big_stdio.py");
    let server = json!({"command": "python3", "args": [big]});
    let config = json!({
        "servers": {"strict": server, "loose": server},
        "listing": "all",
        "timeouts": {"listMs": 20000, "callMs": 20000, "catalogTtlMs": 60000},
        "policy": {"readOnly": ["strict"]},
    });
    let mut mws = serve::start(&config, &[]);
    let mut listed = serve::names(&post_modern(&mws.url, 1, "tools/list", json!({})).await);
    listed.sort();
    assert_eq!(
        listed,
        [
            "loose__big_array",
            "loose__big_text",
            "loose__one_mb",
            "loose__small",
            "run_script"
        ]
    );
    let refused = call(&mws.url, "strict__small", json!({})).await;
    assert_eq!(
        text(&refused),
        "strict__small may not be called: the policy in mws's config excludes it (config \
         `policy.readOnly` names its server and the upstream does not annotate it readOnlyHint: \
         true), so mws neither lists, searches nor runs it"
    );
    let ok = call(&mws.url, "loose__small", json!({})).await;
    assert_eq!(text(&ok), "small answer", "{ok}");
    mws.stop();
}
