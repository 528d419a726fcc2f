//! `mws serve` as a user runs it: `--demo` on a free port (URL on stderr), a call through it lands
//! in the state dir's database, SIGTERM stops it cleanly; a non-loopback host is refused.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::{V, modern};
use crate::support::run::mws;

pub struct Child(std::process::Child);
impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running `mws serve` and its URL.
pub struct Served {
    pub child: Child,
    pub url: String,
}

/// Starts `mws --config <dir>/config.json serve --port 0 --state-dir <dir>/state <extra>` with
/// `config` as the config file; waits for the URL on stderr.
pub fn spawn_serve(dir: &std::path::Path, config: &str, extra: &[&str]) -> Served {
    let path = dir.join("config.json");
    std::fs::write(&path, config).unwrap();
    let mut child = Child(
        mws()
            .args(["--config", path.to_str().unwrap(), "serve", "--port", "0"])
            .arg("--state-dir")
            .arg(dir.join("state"))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stderr = child.0.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("[mws] {line}");
            let _ = tx.send(line);
        }
    });
    let url = loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("no URL on stderr");
        if let Some(u) = line.split_whitespace().find(|w| w.starts_with("http://")) {
            break u.to_string();
        }
    };
    Served { child, url }
}

/// Sends SIGTERM and waits (bounded) for a clean exit.
pub fn stop(served: &mut Served) {
    let pid = served.child.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(s) = served.child.0.try_wait().unwrap() {
            break s;
        }
        assert!(
            Instant::now() < deadline,
            "mws serve did not stop on SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "{status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_demo_answers_logs_and_stops_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut served = spawn_serve(dir.path(), "{}", &["--demo"]);
    let url = served.url.clone();
    let http = reqwest::Client::new();
    let post = |body: Value| {
        let method = body["method"].as_str().unwrap().to_string();
        let mut r = http
            .post(&url)
            .header("content-type", "application/json")
            .header("mcp-protocol-version", V)
            .header("mcp-method", method);
        if let Some(n) = body["params"]["name"].as_str() {
            r = r.header("mcp-name", n);
        }
        r.body(body.to_string()).send()
    };
    // The demo's pins are listed once its catalog is in.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let r: Value = post(modern(1, "tools/list", json!({})))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let names: Vec<&str> = r["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        if names.len() > 4 {
            assert_eq!(
                &names[..5],
                [
                    "search_tools",
                    "call_tool",
                    "call_read_only_tool",
                    "run_script",
                    "mail_send_message"
                ]
            );
            break;
        }
        assert!(
            Instant::now() < deadline,
            "demo catalog never arrived: {names:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let call = modern(
        2,
        "tools/call",
        json!({"name": "call_tool", "arguments": {"name": "calendar_list_events", "arguments": {}}}),
    );
    let r: Value = post(call).await.unwrap().json().await.unwrap();
    assert_ne!(r["result"]["isError"], true, "{r}");
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("events"),
        "{r}"
    );

    stop(&mut served);
    let store = mws::store::Store::open(&dir.path().join("state/state.db")).unwrap();
    let row: (String, String, i64) = store
        .conn()
        .query_row("SELECT tool, via, ok FROM calls", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .unwrap();
    assert_eq!(row, ("calendar_list_events".into(), "call_tool".into(), 1));
}

#[test]
fn non_loopback_host_is_refused_at_startup() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(&config, r#"{"listen": {"host": "0.0.0.0"}}"#).unwrap();
    let out = mws()
        .args(["--config", config.to_str().unwrap(), "serve", "--port", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(
            "`listen.host`: \"0.0.0.0\" is not a loopback address; mws listens on loopback only"
        ),
        "{err}"
    );
}
