//! Hostile and careless upstreams through the real binary: credentials in the upstream URL, answers
//! over the buffering cap (HTTP body, SSE event, stdio line), SIGTERM with a call in flight, tools
//! a client would reject, a malformed `tools/list`, and a stdio child that dies or floods stderr.
//! The stdio faults come from tests/it/support/hostile_stdio.py.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{Serve, ok_text, outage_text};
use mws::upstream::MAX_MESSAGE_BYTES;

fn script() -> String {
    crate::support::root()
        .join("tests/it/support/hostile_stdio.py")
        .display()
        .to_string()
}

fn stdio_config(dir: &Path, mode: &str, call_ms: u64) -> Value {
    json!({
        "upstream": {"command": "python3", "args": [script(), mode]},
        "stateDir": dir.join("state"),
        "timeouts": {"listMs": 10000, "callMs": call_ms, "catalogTtlMs": 60000},
        "listing": "working-set",
    })
}

/// `mws doctor` on the config `Serve::start` wrote in `dir`: stdout and stderr together.
fn doctor(dir: &Path) -> String {
    command(dir, "doctor")
}

/// `mws <cmd>` on the config `Serve::start` wrote in `dir`: stdout and stderr together.
pub(super) fn command(dir: &Path, cmd: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_mws"))
        .arg("--config")
        .arg(dir.join("config.json"))
        .arg(cmd)
        .env("HOME", dir)
        .env_remove("MWS_CONFIG")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("XDG_STATE_HOME")
        .output()
        .unwrap();
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn all_stderr(mws: &Serve) -> String {
    mws.stderr.lock().unwrap().join("\n")
}

/// The text of a tool result that is an error (panics, showing it, otherwise).
fn error_text(r: &Value) -> String {
    assert_eq!(r["result"]["isError"], true, "{r}");
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_string()
}

/// Credentials in the upstream URL (userinfo, a token in the query) reach neither the client's
/// error text, nor serve's stderr, nor `mws doctor`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_in_the_upstream_url_are_never_shown() {
    let dir = tempfile::tempdir().unwrap();
    let port = crate::doctor::closed_port();
    let url = format!("http://user:hunter2@127.0.0.1:{port}/mcp?token=sekrit&page=2");
    let config = json!({
        "upstream": {"url": url},
        "stateDir": dir.path().join("state"),
        "timeouts": {"listMs": 2000, "callMs": 2000, "catalogTtlMs": 60000},
    });
    let mws = Serve::start(dir.path(), &config);
    let msg = outage_text(&mws.call("anything", json!({})).await);
    let search = mws
        .rpc(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "x"}}),
        )
        .await;
    mws.wait_stderr("listing the upstream", Duration::from_secs(10));
    let doctor = doctor(dir.path());
    let report = command(dir.path(), "report");
    let stderr = all_stderr(&mws);
    for (what, text) in [
        ("error", msg.as_str()),
        ("search", &search.to_string()),
        ("stderr", &stderr),
        ("doctor", &doctor),
        ("report", &report),
    ] {
        assert!(
            !text.contains("hunter2") && !text.contains("sekrit"),
            "{what} shows a secret: {text}"
        );
    }
    let shown = format!("http://***@127.0.0.1:{port}/mcp?token=***&page=2");
    assert!(msg.contains(&shown), "{msg}");
    assert!(doctor.contains(&shown), "{doctor}");
    assert!(report.contains(&shown), "{report}");
}

/// An HTTP answer (plain body or one SSE event) over the cap fails that call with an error naming
/// the cap; the next call works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http_answer_over_the_cap_fails_that_call_and_the_next_works() {
    let up = super::faulty::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &super::http_config(dir.path(), &up.url, 20_000));
    for tool in ["big", "bigsse"] {
        let msg = outage_text(&mws.call(tool, json!({})).await);
        assert!(
            msg.contains("larger than 32 MiB, the cap on one upstream message"),
            "{tool}: {msg}"
        );
        assert_eq!(ok_text(&mws.call("ok", json!({})).await), "fine");
    }
}

/// A stdio line over the cap fails that call with an error naming the cap; the child is restarted
/// and the next call works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_line_over_the_cap_fails_that_call_and_the_child_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &stdio_config(dir.path(), "big", 20_000));
    assert_eq!(ok_text(&mws.call("echo", json!({})).await), "echoed");
    let r = mws
        .call("big", json!({"bytes": MAX_MESSAGE_BYTES + 1024}))
        .await;
    let msg = outage_text(&r);
    assert!(
        msg.contains("larger than 32 MiB, the cap on one upstream message"),
        "{msg}"
    );
    assert_eq!(ok_text(&mws.call("echo", json!({})).await), "echoed");
}

/// SIGTERM with a call hanging upstream (callMs 120 s): mws tells the child the call is cancelled,
/// exits within seconds, and the call's row is in `calls` as failed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_with_a_call_in_flight_exits_promptly_and_logs_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("cancelled.log");
    let mut config = stdio_config(dir.path(), "hang", 120_000);
    config["upstream"]["env"] = json!({"CANCEL_LOG": log});
    let mws = std::sync::Arc::new(Serve::start(dir.path(), &config));
    assert_eq!(ok_text(&mws.call("echo", json!({})).await), "echoed");
    let hanging = {
        let mws = mws.clone();
        tokio::spawn(async move { mws.call("hang", json!({})).await })
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&log).is_ok_and(|l| l.contains("hang called")) {
        assert!(
            Instant::now() < deadline,
            "the hang call never reached the child"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let start = Instant::now();
    let pid = mws.pid().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = mws.wait_exit(Duration::from_secs(30));
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "exit took {:?}",
        start.elapsed()
    );
    assert!(status.success(), "{status:?}");
    let r = tokio::time::timeout(Duration::from_secs(5), hanging).await;
    if let Ok(Ok(r)) = r {
        let msg = outage_text(&r);
        assert!(msg.contains("shutting down"), "{msg}");
    }
    let store = mws::store::Store::open(&dir.path().join("state/state.db")).unwrap();
    let rows: Vec<(String, bool)> = store
        .conn()
        .prepare("SELECT tool, ok FROM calls ORDER BY rowid")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows, [("echo".into(), true), ("hang".into(), false)]);
    // The child may still be writing its log as mws exits (a loaded machine): bounded wait.
    let mut cancelled = String::new();
    for _ in 0..50 {
        cancelled = std::fs::read_to_string(&log).unwrap_or_default();
        if cancelled.contains("requestId") {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        cancelled.contains("requestId"),
        "no cancel sent: {cancelled:?}"
    );
}

/// Tools a client would reject (bad inputSchema, bad name, bad outputSchema) are left out, so the
/// Python SDK client still lists the rest and the meta-tools; stderr and doctor say why.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_a_client_would_reject_is_not_listed_and_the_rest_are() {
    let dir = tempfile::tempdir().unwrap();
    let bad = [
        "bad_string",
        "bad_type",
        "no_schema",
        "bad name",
        "bad_output",
    ];
    let mut pins = vec!["echo", "also_good"];
    pins.extend(bad);
    let mut config = stdio_config(dir.path(), "badschema", 10_000);
    config["pins"] = json!(pins);
    let mws = Serve::start(dir.path(), &config);
    let (a, b) = (json!({}), json!({}));
    let out = crate::support::clients::python(
        &mws.url,
        "auto",
        [("echo", &a), ("also_good", &b)],
        "echo",
    )
    .await;
    let tools: Vec<&str> = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for want in [
        "search_tools",
        "call_tool",
        "run_script",
        "echo",
        "also_good",
    ] {
        assert!(tools.contains(&want), "{want} missing from {tools:?}");
    }
    for b in bad {
        assert!(!tools.contains(&b), "{b} listed: {tools:?}");
    }
    assert_eq!(out["direct_listed"]["text"], "echoed", "{out}");
    let line = mws.wait_stderr("bad_type", Duration::from_secs(5));
    assert!(
        line.contains("upstream tool \"bad_type\" is left out: its inputSchema"),
        "{line}"
    );
    let stderr = all_stderr(&mws);
    for b in bad {
        let n = stderr.matches(&format!("tool {b:?} is left out")).count();
        assert_eq!(n, 1, "{b}: {stderr}");
    }
    let doctor = doctor(dir.path());
    for b in bad {
        assert!(doctor.contains(&format!("{b:?}: ")), "{b}: {doctor}");
    }
}

/// A `tools/list` whose `tools` is not an array: search_tools, stderr and doctor say what came
/// back and what was expected, while calls keep working.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_tools_list_is_named_in_the_error_stderr_and_doctor() {
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &stdio_config(dir.path(), "badlist", 10_000));
    assert_eq!(ok_text(&mws.call("echo", json!({})).await), "echoed");
    let search = mws
        .rpc(
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "echo"}}),
        )
        .await;
    let text = error_text(&search);
    let want = "answered tools/list with \"tools\" a string: expected an array of tool objects";
    assert!(text.contains(want), "{text}");
    assert!(!text.contains("down or has not answered"), "{text}");
    mws.wait_stderr(want, Duration::from_secs(5));
    let doctor = doctor(dir.path());
    assert!(doctor.contains(want), "{doctor}");
}

/// A stdio child that prints why and exits at once: its last stderr lines are on serve's stderr
/// (at the default log level), in the error the client gets, and in doctor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dying_stdio_childs_last_lines_are_shown() {
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &stdio_config(dir.path(), "die", 10_000));
    let msg = outage_text(&mws.call("echo", json!({})).await);
    assert!(msg.contains("dying immediately"), "{msg}");
    let line = mws.wait_stderr("dying immediately", Duration::from_secs(5));
    assert!(line.contains("WARN"), "{line}");
    let doctor = doctor(dir.path());
    assert!(doctor.contains("config: missing API key"), "{doctor}");
}

/// A child flooding stderr at `MWS_LOG=info` is copied at a bounded rate, with a summary of what
/// was left out; its calls still work.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flooding_stdio_childs_stderr_is_rate_limited() {
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start_with(
        dir.path(),
        &stdio_config(dir.path(), "spam", 10_000),
        &["env", "MWS_LOG=info", "SPAM_LINES=20000"],
    );
    assert_eq!(ok_text(&mws.call("echo", json!({})).await), "echoed");
    let line = mws.wait_stderr("lines suppressed", Duration::from_secs(10));
    assert!(line.contains("stderr lines suppressed"), "{line}");
    let copied = all_stderr(&mws).matches("spam line").count();
    assert!(copied < 2_000, "{copied} lines copied");
}
