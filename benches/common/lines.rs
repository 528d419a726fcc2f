//! A raw stdio MCP client of one child process (one JSON line out, lines in until the reply with
//! its id; no SDK), for the benchmarks that time calls over `--stdio`. Loopback only: it talks
//! to a process it started.

use std::io::{BufRead, BufReader, Write};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

use super::Child;

/// A started process and its pipes, initialized as a 2025-11-25 client.
pub struct LineClient {
    pub name: String,
    pub child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl LineClient {
    /// Starts `cmd` (its stderr discarded), then `initialize` and `notifications/initialized`.
    pub fn spawn(name: &str, mut cmd: Command) -> LineClient {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{name}: cannot start: {e}"));
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let mut c = LineClient {
            name: name.to_string(),
            child: Child(child),
            stdin,
            stdout,
            next_id: 1,
        };
        let init = c.round(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "mws-bench", "version": "1"}}),
        );
        assert!(init.get("result").is_some(), "{name}: {init}");
        c.line(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        c
    }

    /// The process's id.
    pub fn pid(&self) -> u32 {
        self.child.0.id()
    }

    /// Writes one message as a line.
    pub fn line(&mut self, msg: &Value) {
        let mut text = msg.to_string();
        text.push('\n');
        self.stdin.write_all(text.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// One request and its reply (notifications before it are skipped).
    pub fn round(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.line(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut buf = String::new();
        loop {
            buf.clear();
            let n = self.stdout.read_line(&mut buf).unwrap();
            assert!(n > 0, "{}: the process closed its output", self.name);
            let v: Value = serde_json::from_str(&buf).unwrap();
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
        }
    }
}
