//! The real peers of the end-to-end tests: server-everything over Streamable HTTP, the Claude Code
//! CLI and the Codex CLI, each from tests/peers/node_modules (installed on first use), each in its
//! own process group with a clean environment and an isolated HOME / CODEX_HOME, each run under a
//! timeout and killed when its handle drops. Must not reach anything but loopback.

use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::free_port;

/// Longest a CLI run may take before it is killed and the test fails. Raising it only helps on a
/// machine much slower than two cores shared with the rest of the suite.
pub const CLI_TIMEOUT: Duration = Duration::from_secs(180);
/// Longest a server may take to accept connections after it is spawned.
pub const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How often a waiting loop looks again.
const POLL: Duration = Duration::from_millis(50);

/// tests/peers/node_modules/<rel>, installing the peers first when needed.
pub fn peer(rel: &str) -> PathBuf {
    crate::support::peer(&format!("tests/peers/node_modules/{rel}"))
}

/// tests/peers/<file>: support files kept beside the peers.
fn peers_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/peers")
        .join(name)
}

/// A command with an empty environment but PATH, so that nothing of the developer's (API keys,
/// the coding client's variables, a real HOME) leaks into a peer.
pub fn clean_command(program: &Path) -> Command {
    let mut c = Command::new(program);
    c.env_clear();
    for var in ["PATH", "LANG", "TMPDIR"] {
        if let Some(v) = std::env::var_os(var) {
            c.env(var, v);
        }
    }
    c.env("TERM", "dumb").env("NO_COLOR", "1");
    c
}

/// A spawned process (in its own process group) whose output goes to files; killed, group and
/// all, when dropped.
pub struct Proc {
    pub name: String,
    child: Child,
    out: PathBuf,
    err: PathBuf,
}

impl Proc {
    pub fn spawn(name: &str, mut cmd: Command, logs: &Path) -> Proc {
        let out = logs.join(format!("{name}.stdout"));
        let err = logs.join(format!("{name}.stderr"));
        cmd.stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(std::fs::File::create(&err).unwrap())
            .process_group(0);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {name} ({cmd:?}): {e}"));
        Proc {
            name: name.to_string(),
            child,
            out,
            err,
        }
    }

    pub fn stdout(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    pub fn stderr(&self) -> String {
        std::fs::read_to_string(&self.err).unwrap_or_default()
    }

    /// Waits for exit; past `timeout` kills the group and panics with the output so far.
    pub fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() >= deadline {
                self.kill();
                panic!(
                    "{} did not finish within {timeout:?}; killed.\nstdout:\n{}\nstderr:\n{}",
                    self.name,
                    tail(&self.stdout()),
                    tail(&self.stderr())
                );
            }
            std::thread::sleep(POLL);
        }
    }

    /// Runs to completion and panics unless it exits 0.
    pub fn expect_success(&mut self, timeout: Duration) {
        let status = self.wait(timeout);
        assert!(
            status.success(),
            "{} failed ({status}).\nstdout:\n{}\nstderr:\n{}",
            self.name,
            tail(&self.stdout()),
            tail(&self.stderr())
        );
    }

    /// Waits until `port` accepts connections. `Err` (with the output) if the process exits first.
    pub fn wait_listening(&mut self, port: u16) -> Result<(), String> {
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return Err(format!(
                    "{} exited ({status}) before listening on port {port}.\nstderr:\n{}",
                    self.name,
                    tail(&self.stderr())
                ));
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return Ok(());
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "{} not listening on port {port} after {READY_TIMEOUT:?}",
                    self.name
                ));
            }
            std::thread::sleep(POLL);
        }
    }

    fn kill(&mut self) {
        // The whole group: the Codex launcher (node) runs the native binary as a child.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The last few KB of a log, for failure messages.
pub fn tail(s: &str) -> &str {
    const KEEP: usize = 6000;
    let mut start = s.len().saturating_sub(KEEP);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

fn node() -> PathBuf {
    PathBuf::from("node")
}

/// `@modelcontextprotocol/server-everything` in its Streamable HTTP mode on a free loopback port
/// (tests/peers/loopback.cjs keeps its listener on 127.0.0.1). Returns the process and its URL.
pub fn server_everything(logs: &Path) -> (Proc, String) {
    let entry = peer("@modelcontextprotocol/server-everything/dist/index.js");
    let port = free_port();
    let mut cmd = clean_command(&node());
    cmd.arg("--require")
        .arg(peers_file("loopback.cjs"))
        .arg(entry)
        .arg("streamableHttp")
        .env("PORT", port.to_string());
    let mut p = Proc::spawn("server-everything", cmd, logs);
    p.wait_listening(port).unwrap();
    (p, format!("http://127.0.0.1:{port}/mcp"))
}

/// Walks `root` for a file whose name satisfies `pred`.
pub fn find_file(root: &Path, pred: &dyn Fn(&str) -> bool) -> Option<PathBuf> {
    let entries = std::fs::read_dir(root).ok()?;
    for e in entries.flatten() {
        let path = e.path();
        if path.is_dir() {
            if let Some(found) = find_file(&path, pred) {
                return Some(found);
            }
        } else if path.file_name().and_then(|n| n.to_str()).is_some_and(pred) {
            return Some(path);
        }
    }
    None
}

/// The JSON lines of a file.
pub fn json_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
