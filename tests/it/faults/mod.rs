//! Faults through the real `mws` binary, each showing what the user sees: an upstream answering
//! garbage, an SSE stream cut mid-event, a byte-by-byte slow upstream, a stdio child printing
//! non-JSON, a state dir that cannot be written, the database deleted under the proxy, and
//! `mws ingest` killed mid-run. The layer-level faults (dead, hanging, crashing, expired session)
//! are in tests/it/upstream.rs and tests/it/server/.

mod bounded;
mod faulty;
mod hostile;
mod hostile_names;
mod ingest_kill;
mod live_db;
mod orphan;
mod private_files;
mod state;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::server::{V, modern};
use crate::support::Child;

/// A running `mws serve`, its URL and every stderr line so far.
pub struct Serve {
    /// Killed (and reaped) when the `Serve` is dropped.
    child: Mutex<Child>,
    pub url: String,
    pub stderr: Arc<Mutex<Vec<String>>>,
    http: reqwest::Client,
    next_id: std::sync::atomic::AtomicI64,
}

impl Serve {
    /// `mws --config <dir>/config.json serve --port 0` with `config`; waits for the URL.
    pub fn start(dir: &Path, config: &Value) -> Serve {
        Serve::start_with(dir, config, &[])
    }

    /// As `start`, run through `wrapper` (a program and its arguments that sets limits, then
    /// executes the rest of its command line).
    pub fn start_with(dir: &Path, config: &Value, wrapper: &[&str]) -> Serve {
        let path = dir.join("config.json");
        std::fs::write(&path, config.to_string()).unwrap();
        let mws = env!("CARGO_BIN_EXE_mws");
        let mut cmd = match wrapper.split_first() {
            Some((program, args)) => {
                let mut c = Command::new(program);
                c.args(args).arg(mws);
                c
            }
            None => Command::new(mws),
        };
        cmd.args(["--config", path.to_str().unwrap(), "serve", "--port", "0"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = Child(cmd.spawn().unwrap());
        let out = child.0.stderr.take().unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let lines = stderr.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                eprintln!("[mws] {line}");
                lines.lock().unwrap().push(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        let url = loop {
            let found = stderr.lock().unwrap().iter().find_map(|l| {
                let rest = l.split("serving MCP at ").nth(1)?;
                rest.split_whitespace().next().map(String::from)
            });
            if let Some(u) = found {
                break u;
            }
            assert!(
                Instant::now() < deadline,
                "no URL on stderr: {:?}",
                stderr.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        Serve {
            child: Mutex::new(child),
            url,
            stderr,
            http: reqwest::Client::new(),
            next_id: 1.into(),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.lock().unwrap().0.id()
    }

    /// Waits (bounded) for the process to exit; its status.
    pub fn wait_exit(&self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(s) = self.child.lock().unwrap().0.try_wait().unwrap() {
                return s;
            }
            assert!(Instant::now() < deadline, "mws serve did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// One modern JSON-RPC request; the whole response.
    pub async fn rpc(&self, method: &str, params: Value) -> Value {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body = modern(id, method, params);
        let mut r = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", V)
            .header("mcp-method", method);
        if let Some(n) = body["params"]["name"].as_str() {
            r = r.header("mcp-name", n);
        }
        r.body(body.to_string())
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap()
    }

    /// `call_tool` for `name` with `arguments`: the whole response.
    pub async fn call(&self, name: &str, arguments: Value) -> Value {
        self.rpc(
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": name, "arguments": arguments}}),
        )
        .await
    }

    /// Waits (bounded) until a stderr line contains `needle`; returns it.
    pub fn wait_stderr(&self, needle: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            if let Some(l) = self
                .stderr
                .lock()
                .unwrap()
                .iter()
                .find(|l| l.contains(needle))
            {
                return l.clone();
            }
            assert!(
                Instant::now() < deadline,
                "stderr never said {needle:?}: {:?}",
                self.stderr.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// The JSON-RPC error message of a response (panics, showing it, when it has none).
pub fn error_message(r: &Value) -> String {
    r["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("expected a JSON-RPC error: {r}"))
        .to_string()
}

/// The text of a `tools/call` the upstream could not answer: an `isError` result the model can
/// read (panics, showing the reply, on a JSON-RPC error or a success).
pub fn outage_text(r: &Value) -> String {
    assert!(
        r.get("error").is_none(),
        "an outage is a tool result, not a JSON-RPC error: {r}"
    );
    assert_eq!(r["result"]["isError"], true, "{r}");
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("expected a text result: {r}"))
        .to_string()
}

/// The text of a successful tool result (panics, showing it, otherwise).
pub fn ok_text(r: &Value) -> String {
    assert_ne!(r["result"]["isError"], true, "{r}");
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("expected a text result: {r}"))
        .to_string()
}

fn http_config(dir: &Path, url: &str, call_ms: u64) -> Value {
    json!({
        "upstream": {"url": url},
        "stateDir": dir.join("state"),
        "timeouts": {"listMs": 5000, "callMs": call_ms, "catalogTtlMs": 60000},
    })
}

/// A call on a garbage answer fails with an error naming what came back; the next good call works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_from_the_upstream_is_an_error_naming_what_came_back() {
    let up = faulty::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &http_config(dir.path(), &up.url, 10_000));
    let r = mws.call("html", json!({})).await;
    assert_eq!(
        outage_text(&r),
        "mws could not complete the call to 'html': upstream unavailable: HTTP 200: \
         <html><body>502 Bad Gateway (nginx)</body></html>"
    );
    let r = mws.call("shape", json!({})).await;
    let msg = outage_text(&r);
    assert!(
        msg.starts_with(
            "mws could not complete the call to 'shape': upstream unavailable: HTTP 200: {"
        ) && msg.contains(r#""answer":42"#),
        "{msg}"
    );
    assert_eq!(ok_text(&mws.call("ok", json!({})).await), "fine");
}

/// An SSE answer cut in the middle of its event: an error saying the stream ended early.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sse_answer_cut_mid_event_is_an_error_and_the_next_call_works() {
    let up = faulty::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &http_config(dir.path(), &up.url, 10_000));
    let r = mws.call("cut", json!({})).await;
    assert_eq!(
        outage_text(&r),
        format!(
            "mws could not complete the call to 'cut': upstream protocol error: tools/call {}: \
             the event stream ended before the response",
            up.url
        )
    );
    assert_eq!(ok_text(&mws.call("ok", json!({})).await), "fine");
}

/// A byte-by-byte answer within `callMs` arrives whole; one slower than `callMs` is a timeout
/// error naming the budget, and the proxy keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_byte_by_byte_answer_succeeds_within_call_ms_and_times_out_beyond() {
    let up = faulty::start().await;
    let dir = tempfile::tempdir().unwrap();
    let mws = Serve::start(dir.path(), &http_config(dir.path(), &up.url, 2_500));
    // About 70 bytes at 5 ms: ~0.4 s of dribble.
    assert_eq!(
        ok_text(&mws.call("slow", json!({"msPerByte": 5})).await),
        "fine"
    );
    // At 100 ms a byte the answer would take ~7 s.
    let t = Instant::now();
    let r = mws.call("slow", json!({"msPerByte": 100})).await;
    assert_eq!(
        outage_text(&r),
        "mws could not complete the call to 'slow': upstream did not answer within 2.5s; it may \
         still have run there"
    );
    assert!(t.elapsed() < Duration::from_secs(6), "{:?}", t.elapsed());
    assert_eq!(ok_text(&mws.call("ok", json!({})).await), "fine");
}

/// A stdio child that prints banners and half lines on stdout: each such line is skipped with a
/// warning on stderr, and the answers around them still arrive.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_child_writing_non_json_is_skipped_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let script = crate::support::root().join("tests/it/support/noisy_stdio.py");
    let config = json!({
        "upstream": {"command": "python3", "args": [script]},
        "stateDir": dir.path().join("state"),
        "timeouts": {"listMs": 10000, "callMs": 10000, "catalogTtlMs": 60000},
    });
    let mws = Serve::start(dir.path(), &config);
    for i in 0..3 {
        assert_eq!(
            ok_text(&mws.call("echo", json!({"n": i})).await),
            format!("echo {i}")
        );
    }
    let warning = mws.wait_stderr("not JSON-RPC", Duration::from_secs(5));
    assert!(
        warning.contains(&format!(
            "upstream `python3 {}` wrote a line that is not JSON-RPC; skipped",
            script.display()
        )),
        "{warning}"
    );
}
