//! The real `mws serve` binary as a user runs it, for tests that go through the whole proxy: a
//! temp config and state dir, a working set written into the state database before start, the URL
//! read from stderr, SIGTERM to stop (which flushes the call log), and the `calls` rows read back.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Child;

/// How long `mws serve` may take to print its URL before the test fails.
const START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long `mws serve` may take to exit after SIGTERM.
const STOP_TIMEOUT: Duration = Duration::from_secs(20);

pub use super::run::mws;

/// A running `mws serve`; killed on drop if not stopped.
pub struct Served {
    pub child: Child,
    pub url: String,
    pub dir: tempfile::TempDir,
    /// Every stderr line so far.
    pub stderr: Arc<Mutex<Vec<String>>>,
}

impl Served {
    pub fn db(&self) -> PathBuf {
        self.dir.path().join("state/state.db")
    }

    /// Sends SIGTERM and waits (bounded) for a clean exit.
    pub fn stop(&mut self) {
        let pid = self.child.0.id().to_string();
        let killed = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(killed.unwrap().success());
        let deadline = Instant::now() + STOP_TIMEOUT;
        let status = loop {
            if let Some(s) = self.child.0.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "mws serve ignored SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(status.success(), "mws serve exited with {status:?}");
    }

    /// `(tool, via, client, ok)` of every `calls` row, in insertion order.
    pub fn calls(&self) -> Vec<(String, String, String, bool)> {
        let store = mws::store::Store::open(&self.db()).unwrap();
        let mut stmt = store
            .conn()
            .prepare("SELECT tool, via, COALESCE(client, ''), ok FROM calls ORDER BY rowid")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }
}

/// Writes `config` and the working set, then starts `mws serve --port 0` on them.
pub fn start(config: &Value, working_set: &[&str]) -> Served {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    write_working_set(&state.join("state.db"), working_set);
    start_in(dir, config, &[])
}

/// Starts `mws serve` with `config` in `dir` (state in `dir/state`), with extra arguments.
pub fn start_in(dir: tempfile::TempDir, config: &Value, extra: &[&str]) -> Served {
    let path = dir.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let mut child = Child(
        mws()
            .args(["--config", path.to_str().unwrap(), "serve", "--port", "0"])
            .arg("--state-dir")
            .arg(dir.path().join("state"))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stderr = child.0.stderr.take().unwrap();
    let lines = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let seen = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("[mws] {line}");
            seen.lock().unwrap().push(line.clone());
            let _ = tx.send(line);
        }
    });
    let url = loop {
        let line = rx.recv_timeout(START_TIMEOUT).expect("no URL on stderr");
        if let Some(rest) = line.split("serving MCP at ").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    Served {
        child,
        url,
        dir,
        stderr: lines,
    }
}

/// Replaces the working set the way `mws promote` does: one transaction in the state database.
pub fn write_working_set(db: &Path, tools: &[&str]) {
    let store = mws::store::Store::open(db).unwrap();
    let conn = store.conn();
    conn.execute("DELETE FROM working_set", []).unwrap();
    for (i, t) in tools.iter().enumerate() {
        conn.execute(
            "INSERT INTO working_set (tool, position, reason, since) \
             VALUES (?1, ?2, 'promoted', '2026-11-29T00:00:00.000Z')",
            rusqlite::params![t, i as i64],
        )
        .unwrap();
    }
}

/// One 2026-07-28 request to `url` as a plain HTTP client; returns the JSON-RPC reply.
pub async fn post_modern(url: &str, id: i64, method: &str, params: Value) -> Value {
    post_modern_as("matrix-test", url, id, method, params).await
}

/// `post_modern` as the client named `client` (a stateless client's session is its name).
pub async fn post_modern_as(
    client: &str,
    url: &str,
    id: i64,
    method: &str,
    mut params: Value,
) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": client, "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let (_, text) = super::wire::post_modern_body(url, &body).await;
    serde_json::from_str(&text).unwrap()
}

/// The names a `tools/list` reply lists.
pub fn names(reply: &Value) -> Vec<String> {
    reply["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("not a tools/list result: {reply}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// How long a `--stdio` test waits for the next line before it fails.
const STDIO_WAIT: Duration = Duration::from_secs(30);

/// `mws serve --stdio` as its one client: a config written into `dir`, the state in `dir/state`,
/// JSON-RPC lines written to its stdin and read from its stdout. Killed on drop.
pub struct StdioServed {
    child: tokio::process::Child,
    stdin: Option<tokio::process::ChildStdin>,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
}

impl StdioServed {
    pub fn start(dir: &Path, config: &Value) -> StdioServed {
        StdioServed::start_in_folder(dir, config, dir)
    }

    /// `start`, with mws started in `folder` (as a client starts it in its project folder).
    pub fn start_in_folder(dir: &Path, config: &Value, folder: &Path) -> StdioServed {
        use tokio::io::AsyncBufReadExt;
        let path = dir.join("config.json");
        std::fs::write(&path, config.to_string()).unwrap();
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mws"))
            .args(["--config", path.to_str().unwrap(), "serve", "--stdio"])
            .arg("--state-dir")
            .arg(dir.join("state"))
            .current_dir(folder)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
        StdioServed {
            child,
            stdin,
            lines,
        }
    }

    pub async fn send(&mut self, msg: &Value) {
        self.send_text(&msg.to_string()).await;
    }

    /// Writes `line` as it is, and a newline (for what a `Value` cannot hold, such as an id too
    /// big for a JSON number).
    pub async fn send_text(&mut self, line: &str) {
        use tokio::io::AsyncWriteExt;
        let stdin = self.stdin.as_mut().expect("stdin already closed");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
    }

    /// The next message on stdout before `deadline`; `None` when none came or stdout closed.
    pub async fn next_before(&mut self, deadline: tokio::time::Instant) -> Option<Value> {
        match tokio::time::timeout_at(deadline, self.lines.next_line()).await {
            Ok(Ok(Some(line))) => Some(serde_json::from_str(&line).unwrap()),
            _ => None,
        }
    }

    /// The next line on stdout as written; fails the test after `STDIO_WAIT`.
    pub async fn next_line(&mut self) -> String {
        match tokio::time::timeout(STDIO_WAIT, self.lines.next_line()).await {
            Ok(Ok(Some(line))) => line,
            _ => panic!("mws --stdio wrote nothing more within 30 s"),
        }
    }

    /// The 2025-11-25 handshake as `client`: `initialize` (id 0), its response (which must come
    /// first), and `notifications/initialized`. Returns the response.
    pub async fn initialize(&mut self, client: &str) -> Value {
        self.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": client, "version": "1"}}}),
        )
        .await;
        let init = self.next().await;
        assert_eq!(init["id"], 0, "{init}");
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        init
    }

    /// The line that answers request `id`, as written; the lines before it are skipped.
    pub async fn reply_line(&mut self, id: i64) -> String {
        loop {
            let line = self.next_line().await;
            let msg: Value = serde_json::from_str(&line).unwrap();
            if msg["id"] == id && msg.get("method").is_none() {
                return line;
            }
        }
    }

    /// The response to request `id`; the messages before it are skipped.
    pub async fn reply(&mut self, id: i64) -> Value {
        serde_json::from_str(&self.reply_line(id).await).unwrap()
    }

    /// The next message on stdout; fails the test after `STDIO_WAIT`.
    pub async fn next(&mut self) -> Value {
        let deadline = tokio::time::Instant::now() + STDIO_WAIT;
        self.next_before(deadline)
            .await
            .expect("mws --stdio wrote nothing more within 30 s")
    }

    /// Closes stdin (the end of the session) and waits, bounded, for mws to exit.
    pub async fn close(mut self) {
        self.stdin = None;
        let _ = tokio::time::timeout(Duration::from_secs(10), self.child.wait()).await;
    }
}
