//! Shared by the benchmarks: a deterministic generator, a generated catalog, a
//! fast loopback Streamable HTTP upstream (2026-07-28, plain JSON replies, nothing recorded), the
//! real `mws serve` binary as a child process (killed on drop), a raw stdio client (`lines.rs`),
//! its RSS, and percentiles.
//! Loopback only.

#![allow(dead_code)]

pub mod lines;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// A small deterministic generator (xorshift64*), so every run benchmarks the same history.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Protocol version the benchmark clients speak.
pub const V: &str = "2026-07-28";

/// A gateway-shaped catalog of `n` tools over 25 backends, with schemas of realistic size.
pub fn catalog(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            json!({
                "name": format!("backend{}_tool_{i}", i % 25),
                "description": format!("Does thing number {i} on the backend; a sentence or two of description text as real servers write them."),
                "inputSchema": {"type": "object", "properties": {
                    "id": {"type": "string", "description": "The id"},
                    "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                    "filter": {"type": "object", "properties": {"q": {"type": "string"}}}
                }, "required": ["id"]},
                "annotations": {"readOnlyHint": i % 2 == 0}
            })
        })
        .collect()
}

/// A running loopback upstream; stops on drop.
pub struct FastUpstream {
    pub url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for FastUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves `tools` (one page) and answers every `tools/call` at once with a short text result.
/// `delay` holds every answer back (the "slow upstream" of the startup benchmark).
pub async fn start_upstream(tools: Vec<Value>, delay: Duration) -> FastUpstream {
    let list = Arc::new(json!({ "tools": tools }));
    let app = axum::Router::new().route(
        "/mcp",
        axum::routing::post(move |body: String| {
            let list = list.clone();
            async move {
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
                answer(&list, &body)
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    FastUpstream { url, task }
}

fn answer(list: &Value, body: &str) -> Response {
    let Ok(msg) = serde_json::from_str::<Value>(body) else {
        return StatusCode::BAD_REQUEST.into_response();
    };
    let Some(id) = msg.get("id").cloned() else {
        return StatusCode::ACCEPTED.into_response();
    };
    let result = match msg["method"].as_str().unwrap_or("") {
        "server/discover" => json!({"resultType": "complete", "supportedVersions": [V],
            "capabilities": {"tools": {}},
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "bench-upstream", "version": "0.1"}},
            "ttlMs": 0, "cacheScope": "private"}),
        "tools/list" => list.clone(),
        "tools/call" => {
            let name = msg
                .pointer("/params/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            json!({"content": [{"type": "text", "text": format!("called {name}")}], "isError": false})
        }
        _ => {
            let e = json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "Method not found"}});
            return (
                StatusCode::NOT_FOUND,
                [("content-type", "application/json")],
                e.to_string(),
            )
                .into_response();
        }
    };
    let reply = json!({"jsonrpc": "2.0", "id": id, "result": result});
    ([("content-type", "application/json")], reply.to_string()).into_response()
}

/// A 2026-07-28 request as a client sends it: the envelope in `_meta`.
pub fn request(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientInfo": {"name": "mws-bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The `mws` binary cargo built beside this benchmark.
pub fn mws_bin() -> &'static str {
    env!("CARGO_BIN_EXE_mws")
}

/// A child process killed (and reaped) on drop.
pub struct Child(pub std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Writes `config` to `<dir>/config.json` and starts
/// `mws --config … serve --port <port> --state-dir <dir>/state`. Output is discarded.
pub fn spawn_serve(dir: &Path, config: Value, port: u16) -> Child {
    spawn_serve_bin(mws_bin(), dir, config, port)
}

/// `spawn_serve` with another `mws` binary (the proxy benchmark's baseline build).
pub fn spawn_serve_bin(bin: &str, dir: &Path, config: Value, port: u16) -> Child {
    let path = dir.join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let config = path;
    Child(
        Command::new(bin)
            .args(["--config", config.to_str().unwrap(), "serve", "--port"])
            .arg(port.to_string())
            .arg("--state-dir")
            .arg(dir.join("state"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mws serve"),
    )
}

/// A port free on loopback right now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `VmRSS` and `VmHWM` (peak) of a process, in MB, from /proc.
pub fn rss_mb(pid: u32) -> (f64, f64) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |k: &str| {
        text.lines()
            .find(|l| l.starts_with(k))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Waits until a `mws serve` with nothing to do has gone quiet and given memory back
/// (`server::give_back`): two of its ticks and a margin.
pub async fn wait_until_quiet() {
    tokio::time::sleep(mws::server::give_back::TICK * 2 + Duration::from_millis(500)).await;
}

/// CPU time (user + system, all threads) a process has used so far, from /proc.
pub fn cpu_secs(pid: u32) -> f64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name (which may hold spaces) start at state; utime and stime are
    // fields 14 and 15 of the whole line, in clock ticks (100 per second on Linux).
    let rest = text.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<f64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    if f.len() < 13 {
        return f64::NAN;
    }
    (f[11] + f[12]) / 100.0
}

/// The `q`-quantile (0..=1) of sorted samples.
pub fn quantile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() - 1) as f64 * q).round() as usize;
    sorted[i]
}

pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}
