//! Code mode through a real `/mcp` listener in front of the fake upstream: `run_script` listed
//! unless `codeMode.enabled` is false, within its token budget; a script's tool calls go through
//! the policy, the schema check and the call log (`via = 'script'`), its run is one `script_runs`
//! row, each bad script is answered with the message the model reads, and a script whose caller
//! went away stops calling tools. Reaches only loopback.

use mws::config::{CodeMode, Config};
use mws::report::tokens::{Tokenizer, TokenizerKind, tool_size};
use serde_json::{Value, json};

use super::http::post_modern;
use super::{Harness, modern};

/// What `run_script` may add to every request, in o200k tokens (issue 32).
const MAX_META_TOKENS: usize = 150;

/// Code mode turned off in the config (it is on by default).
fn disabled(c: &mut Config) {
    c.code_mode.enabled = false;
}

fn enabled(c: &mut Config) {
    c.code_mode = CodeMode {
        enabled: true,
        timeout_ms: 2_000,
        max_calls: 20,
        max_output_bytes: 20_000,
        ..CodeMode::default()
    };
}

async fn listed(h: &Harness) -> Vec<Value> {
    let (status, body) = post_modern(h, &modern(1, "tools/list", json!({}))).await;
    assert_eq!(status, 200, "{body}");
    body["result"]["tools"].as_array().unwrap().clone()
}

/// `run_script` with `code`: the tool result the model reads.
async fn run(h: &Harness, code: &str) -> Value {
    let call = modern(
        2,
        "tools/call",
        json!({"name": "run_script", "arguments": {"code": code}}),
    );
    let (status, body) = post_modern(h, &call).await;
    assert_eq!(status, 200, "{body}");
    body["result"].clone()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

/// The model reads `message`, as an error.
fn check_error(result: &Value, message: &str) {
    assert_eq!(result["isError"], json!(true), "{result}");
    assert_eq!(text(result), message, "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_script_is_listed_unless_turned_off_and_costs_under_150_tokens() {
    let off = Harness::start_configured(&[], disabled).await;
    let names: Vec<Value> = listed(&off)
        .await
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert!(!names.contains(&json!("run_script")), "{names:?}");
    check_error(
        &run(&off, "return 1").await,
        "run_script is off in mws's config (`codeMode.enabled`); call tools one by one",
    );

    let on = Harness::start(&[]).await;
    let tools = listed(&on).await;
    let meta = tools.iter().find(|t| t["name"] == "run_script").unwrap();
    let tokens = tool_size(&Tokenizer::load(TokenizerKind::O200k), meta).tokens;
    assert!(
        tokens <= MAX_META_TOKENS,
        "run_script costs {tokens} tokens"
    );
}

/// The first result of `search_tools` for `query`.
async fn found(h: &Harness, query: &str) -> Value {
    let call = modern(
        3,
        "tools/call",
        json!({"name": "search_tools", "arguments": {"query": query}}),
    );
    let (status, body) = post_modern(h, &call).await;
    assert_eq!(status, 200, "{body}");
    let reply: Value = serde_json::from_str(text(&body["result"])).unwrap();
    reply["results"][0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_results_show_a_typed_call_for_scripts_in_code_mode_only() {
    let on = Harness::start_configured(&[], enabled).await;
    let hit = found(&on, "mail_send_message").await;
    assert_eq!(
        hit["script"],
        "await tools.mail_send_message(args: {to: string; cc?: string | null}): Promise<any>"
    );
    let ranked = found(&on, "create a calendar event").await;
    assert_eq!(
        ranked["script"],
        "await tools.calendar_create_event(args: {title?: string}): Promise<any>"
    );
    let off = Harness::start_configured(&[], disabled).await;
    let hit = found(&off, "mail_send_message").await;
    assert_eq!(hit["name"], "mail_send_message");
    assert_eq!(hit.get("script"), None, "{hit}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_chains_calls_and_only_its_answer_reaches_the_model() {
    let h = Harness::start_configured(&[], enabled).await;
    let code = "// marker-7f3a: never stored\n\
                const seen = [];\n\
                for (const title of ['standup', 'review', 'retro']) {\n\
                  const r = await tools.calendar_create_event({title});\n\
                  if (r.includes(title)) seen.push(title);\n\
                }\n\
                const labels = await tools.mail_list_labels();\n\
                return {created: seen.length, labels: labels.startsWith('mail_list_labels ran')};";
    let result = run(&h, code).await;
    assert_eq!(result.get("isError"), None, "{result}");
    assert_eq!(text(&result), r#"{"created":3,"labels":true}"#);
    h.flush();
    assert_eq!(
        h.query("SELECT tool, via, ok, error_kind FROM calls ORDER BY id"),
        vec![
            vec![
                json!("calendar_create_event"),
                json!("script"),
                json!(1),
                Value::Null
            ],
            vec![
                json!("calendar_create_event"),
                json!("script"),
                json!(1),
                Value::Null
            ],
            vec![
                json!("calendar_create_event"),
                json!("script"),
                json!(1),
                Value::Null
            ],
            vec![
                json!("mail_list_labels"),
                json!("script"),
                json!(1),
                Value::Null
            ],
        ]
    );
    let runs = h.query("SELECT outcome, calls, output_bytes, client FROM script_runs");
    assert_eq!(
        runs,
        vec![vec![json!("ok"), json!(4), json!(27), json!("test-client")]]
    );
    let memory = h.query("SELECT memory_bytes FROM script_runs")[0][0]
        .as_i64()
        .unwrap();
    assert!(memory > 0);
    // The script's text (and so its arguments) is in no file of the state dir.
    for entry in std::fs::read_dir(h.db.parent().unwrap()).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap_or_default();
        assert!(
            !bytes.windows(11).any(|w| w == b"marker-7f3a"),
            "the script's text was stored"
        );
        assert!(
            !bytes.windows(7).any(|w| w == b"standup"),
            "an argument was stored"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_denied_tool_is_refused_inside_a_script_and_logged_so() {
    let h = Harness::start_configured(&[], |c| {
        enabled(c);
        c.policy.deny = vec!["mail_send_*".into()];
    })
    .await;
    let result = run(
        &h,
        "await tools.mail_list_labels();\nreturn await tools.mail_send_message({to: 'a@b.c'});",
    )
    .await;
    check_error(
        &result,
        "the script threw at line 2: Error: mail_send_message may not be called: the policy in \
         mws's config excludes it (config `policy.deny` has \"mail_send_*\"), so mws neither \
         lists, searches nor runs it\n(it had made 2 tool calls)",
    );
    assert!(
        !h.fake
            .seen()
            .iter()
            .any(|s| s.params["name"] == "mail_send_message"),
        "a denied call reached the upstream"
    );
    h.flush();
    assert_eq!(
        h.query("SELECT tool, via, error_kind FROM calls ORDER BY id"),
        vec![
            vec![json!("mail_list_labels"), json!("script"), Value::Null],
            vec![
                json!("mail_send_message"),
                json!("script"),
                json!("denied_by_policy")
            ],
        ]
    );
    assert_eq!(
        h.query("SELECT outcome, calls FROM script_runs"),
        vec![vec![json!("error"), json!(2)]]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_scripts_are_answered_with_what_went_wrong() {
    let h = Harness::start_configured(&[], enabled).await;
    let wrong_args = run(&h, "return await tools.mail_send_message({to: 5})").await;
    let t = text(&wrong_args);
    assert!(
        t.starts_with(
            "the script threw at line 1: Error: invalid arguments for mail_send_message: "
        ),
        "{t}"
    );
    assert!(t.contains("- at /to: the value is not of type \"string\" (found integer 5)"));
    assert!(t.ends_with("\n(it had made 1 tool call)"), "{t}");
    check_error(
        &run(&h, "return await tools.calendar_create_evnt({})").await,
        "the script threw at line 1: Error: unknown tool 'calendar_create_evnt'. Did you mean: \
         calendar_create_event, calendar_list_events, mail_send_message? Use \
         search_tools(\"calendar create evnt\") to find the right tool name.\n(it had made 1 \
         tool call)",
    );
    check_error(
        &run(
            &h,
            "await tools.mail_list_labels();\nawait tools.drive_fail_upload({});\nreturn 1",
        )
        .await,
        "the script threw at line 2: Error: drive_fail_upload ran with {}\n(it had made 2 tool \
         calls)",
    );
    let syntax = run(&h, "const a = 1;\nreturn a +;").await;
    assert_eq!(syntax["isError"], json!(true));
    assert!(
        text(&syntax).starts_with("the script does not parse at line 2: SyntaxError: "),
        "{syntax}"
    );
    check_error(
        &run(&h, "while (true) {}").await,
        "the script was stopped: it ran longer than codeMode.timeoutMs (2000 ms).",
    );
    check_error(
        &run(
            &h,
            "const a = []; for (;;) a.push(new Array(1000).fill(a.length));",
        )
        .await,
        "the script was stopped: it used more memory than codeMode.memoryMb (32 MB).",
    );
    check_error(
        &run(&h, "const f = (n) => f(n + 1) + 1;\nreturn f(0);").await,
        "the script was stopped: it recursed deeper than the sandbox's 512 KB stack allows.",
    );
    check_error(
        &run(&h, "for (;;) await tools.mail_list_labels();").await,
        "the script was stopped: it made more tool calls than codeMode.maxCalls (20).\n(it had \
         made 20 tool calls)",
    );
    check_error(
        &run(&h, "return 'x'.repeat(20_001);").await,
        "the script was stopped: it returned more than codeMode.maxOutputBytes (20000 bytes); \
         return a smaller summary.",
    );
    check_error(
        &run(&h, "return require('child_process')").await,
        "the script threw at line 1: ReferenceError: require is not defined",
    );
    check_error(
        &run(
            &h,
            "const t = await fetch('http://127.0.0.1:1/'); return eval(t)",
        )
        .await,
        "the script threw at line 1: ReferenceError: fetch is not defined",
    );
    check_error(
        &run(
            &h,
            "return tools.constructor.constructor('return process')()",
        )
        .await,
        "the script threw at line 1: ReferenceError: process is not defined",
    );
    check_error(
        &run(&h, "return await import('fs')").await,
        "the script threw: ReferenceError: could not load module 'fs'",
    );
    check_error(
        &run(&h, "return await tools.search_tools({query: 'mail'})").await,
        "the script threw at line 1: Error: tools.search_tools: search_tools cannot be called \
         from a script; search first, then write the script\n(it had made 1 tool call)",
    );
    check_error(
        &json!({"isError": true, "content": [{"type": "text", "text": text(&run(&h, " ").await)}]}),
        "run_script needs 'code': the body of an async JavaScript function, such as `const r = \
         await tools.<name>({...}); return r;`",
    );
    h.flush();
    let outcomes: Vec<Value> = h
        .query("SELECT outcome FROM script_runs ORDER BY id")
        .into_iter()
        .map(|r| r[0].clone())
        .collect();
    assert_eq!(
        outcomes,
        [
            "error", "error", "error", "syntax", "time", "memory", "stack", "calls", "output",
            "error", "error", "error", "error", "error"
        ]
        .map(Value::from)
        .to_vec()
    );
    assert_eq!(
        h.query("SELECT error_kind FROM calls WHERE tool = 'mail_send_message'"),
        vec![vec![json!("invalid_args")]]
    );
}

/// A script whose caller went away (its `run_script` dropped mid-run) makes no further tool call:
/// the next one throws, so the script ends long before its own limits would stop it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_script_whose_caller_went_away_makes_no_more_calls() {
    let h = Harness::start_configured(&[], |c| {
        c.code_mode = CodeMode {
            enabled: true,
            timeout_ms: 60_000,
            max_calls: 100_000,
            ..CodeMode::default()
        };
    })
    .await;
    let call = modern(
        7,
        "tools/call",
        json!({"name": "run_script", "arguments": {"code":
            "for (let i = 0; i < 100000; i++) await tools.mail_list_labels(); return 'all'"}}),
    );
    let Value::Object(msg) = call else {
        unreachable!()
    };
    let caller = mws::mcp::Caller {
        era: mws::mcp::Era::Modern,
        client: Some("test-client".into()),
        session: None,
        input: None,
        project: None,
    };
    let cut = tokio::time::timeout(
        std::time::Duration::from_millis(300),
        h.proxy.handle(msg, &caller),
    )
    .await;
    assert!(cut.is_err(), "the script ended within 300 ms: {cut:?}");
    let count = || {
        h.query("SELECT COUNT(*) FROM calls")[0][0]
            .as_i64()
            .unwrap()
    };
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    h.flush();
    let made = count();
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    h.flush();
    assert_eq!(count(), made, "calls went on after the caller went away");
    assert!(made > 0 && made < 100_000, "{made} calls");
}
