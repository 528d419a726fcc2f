//! Shared helpers for the integration tests: real peers (installed on first use, `peers.rs`),
//! in-process upstream fixtures, configs pointing at them, and the built `mws` run on a config
//! (`run.rs`).

#![allow(dead_code)]

pub mod clients;
pub mod fake_http;
pub mod peers;
pub mod postgres;
pub mod rmcp_upstream;
pub mod run;
pub mod serve;
pub mod wire;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mws::config::{Config, HttpUpstream, StdioUpstream, Timeouts, Upstream};

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub use peers::{minilm_dir, peer};

pub fn server_everything() -> PathBuf {
    peer("tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

pub fn mcp_server_time() -> PathBuf {
    peer(".venv/bin/mcp-server-time")
}

/// The tools `mws serve --demo` pins, in order.
pub fn demo_pins() -> &'static [&'static str] {
    mws::demo::DEMO_PINS
}

pub fn crashy_script() -> PathBuf {
    root().join("tests/it/support/crashy_stdio.py")
}

pub fn config(upstream: Upstream, state_dir: &Path, timeouts: Timeouts) -> Config {
    Config {
        upstream,
        state_dir: state_dir.to_path_buf(),
        timeouts,
        ..Config::default()
    }
}

pub fn http(url: &str) -> Upstream {
    Upstream::Http(HttpUpstream {
        url: url.to_string(),
        headers: Default::default(),
        oauth: None,
    })
}

pub fn stdio(command: &str, args: &[&str]) -> Upstream {
    Upstream::Stdio(StdioUpstream {
        command: command.to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
        env: Default::default(),
        cwd: None,
    })
}

/// Timeouts whose first start gets `list_ms` too, as every listing does.
pub fn timeouts(list_ms: u64, call_ms: u64, ttl_ms: u64) -> Timeouts {
    Timeouts {
        list_ms,
        call_ms,
        first_start_ms: list_ms,
        catalog_ttl_ms: ttl_ms,
    }
}

/// A port nothing listens on (bound, then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A loopback port where nothing listens, for tests of an upstream that is down. Taken below
/// Linux's ephemeral range (32768 and up), which `free_port` and every other bind to port 0 draw
/// from: a port from there can be handed to another test's server while this test still expects
/// "connection refused".
pub fn dead_port() -> u16 {
    let start = 20_000 + (std::process::id() % 10_000) as u16;
    (start..32_000)
        .chain(20_000..start)
        .find(|&p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok())
        .expect("a free loopback port under 32000")
}

/// How long a dropped child may take to exit after SIGTERM before it gets SIGKILL.
const DROP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// A child stopped when dropped: SIGTERM first, so that `mws serve` stops its own stdio upstream
/// (a server with a timer running, like server-everything after `toggle-subscriber-updates`, does
/// not exit on stdin EOF alone and would outlive a SIGKILLed parent), then SIGKILL after
/// `DROP_GRACE`.
pub struct Child(pub std::process::Child);
impl Drop for Child {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let pid = self.0.id().to_string();
            let _ = std::process::Command::new("kill")
                .args(["-TERM", &pid])
                .status();
            let deadline = std::time::Instant::now() + DROP_GRACE;
            while std::time::Instant::now() < deadline {
                if let Ok(Some(_)) = self.0.try_wait() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts server-everything's Streamable HTTP transport on a free port and waits until it accepts.
pub async fn start_everything_http() -> (Child, String) {
    let port = free_port();
    let child = std::process::Command::new("node")
        .arg(server_everything())
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("node is needed for the server-everything peer");
    let child = Child(child);
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return (child, format!("http://127.0.0.1:{port}/mcp"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("server-everything did not start listening on port {port} within 10 s");
}
