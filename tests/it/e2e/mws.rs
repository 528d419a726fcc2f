//! `mws` as the end-to-end tests run it: `mws serve --config X` in front of server-everything on a
//! free loopback port with a temp stateDir, then `mws ingest` and `mws promote --json` over the
//! transcripts the clients wrote, and the answers read back from `state.db` (migrations/V1) and
//! `working-set.json` (docs/database.md). A command that is not built yet fails the test saying so.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::SERVER;
use super::peers::{Proc, clean_command, tail};
use crate::support::free_port;

/// Longest `mws ingest` / `mws promote` may take on a handful of small transcripts.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// A running `mws serve`; killed when dropped.
pub struct Mws {
    _proc: Proc,
    pub url: String,
    pub config: PathBuf,
    pub state_dir: PathBuf,
    home: PathBuf,
    logs: PathBuf,
}

fn mws_command(home: &Path) -> Command {
    let mut c = clean_command(Path::new(env!("CARGO_BIN_EXE_mws")));
    c.env("HOME", home).env("MWS_LOG", "info");
    c
}

/// Panics with the reason a mws command failed, naming an unbuilt command as such.
fn fail(what: &str, code: Option<i32>, stderr: &str) -> ! {
    if code == Some(2) && stderr.contains("not built yet") {
        panic!(
            "{what} not built yet: this end-to-end test waits for it (it runs once the proxy, \
             ingest and promote land on main).\nstderr:\n{}",
            tail(stderr)
        );
    }
    panic!("{what} failed (exit {code:?}).\nstderr:\n{}", tail(stderr));
}

impl Mws {
    /// Writes a config (upstream `upstream_url`, serverName `toolbox`, `pins`, the clients'
    /// transcript roots) and starts `mws serve --config` on a free port.
    pub fn start(dir: &Path, upstream_url: &str, pins: &[&str], roots: &[(&str, &Path)]) -> Mws {
        Mws::launch(dir, ("upstream", json!({"url": upstream_url})), pins, roots)
    }

    /// As [`Mws::start`], with code mode on (`codeMode.enabled`) and no transcript roots.
    pub fn start_code_mode(dir: &Path, upstream_url: &str) -> Mws {
        let config = json!({"url": upstream_url});
        Mws::launch_with(
            dir,
            ("upstream", config),
            &[],
            &[],
            json!({"enabled": true}),
        )
    }

    /// As [`Mws::start`], with `servers` (a map of name → server entry) instead of one upstream.
    pub fn start_servers(
        dir: &Path,
        servers: Value,
        pins: &[&str],
        roots: &[(&str, &Path)],
    ) -> Mws {
        Mws::launch(dir, ("servers", servers), pins, roots)
    }

    /// Writes the config with `behind` (`upstream` or `servers`) and starts `mws serve` on it.
    fn launch(dir: &Path, behind: (&str, Value), pins: &[&str], roots: &[(&str, &Path)]) -> Mws {
        Mws::launch_with(dir, behind, pins, roots, json!({}))
    }

    /// `launch` with `codeMode` set to `code_mode`.
    fn launch_with(
        dir: &Path,
        behind: (&str, Value),
        pins: &[&str],
        roots: &[(&str, &Path)],
        code_mode: Value,
    ) -> Mws {
        let home = dir.join("mws-home");
        let state_dir = dir.join("mws-state");
        std::fs::create_dir_all(&home).unwrap();
        let port = free_port();
        let transcripts: Vec<Value> = roots
            .iter()
            .map(|(kind, root)| json!({"type": kind, "root": root}))
            .collect();
        let mut config = json!({
            "listen": {"host": "127.0.0.1", "port": port},
            "stateDir": state_dir,
            "serverName": SERVER,
            "pins": pins,
            "transcripts": transcripts,
            "codeMode": code_mode,
        });
        config[behind.0] = behind.1;
        let config_path = dir.join("mws-config.json");
        std::fs::write(&config_path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
        let mut c = mws_command(&home);
        c.arg("serve").arg("--config").arg(&config_path);
        let mut proc = Proc::spawn("mws-serve", c, dir);
        if let Err(e) = proc.wait_listening(port) {
            let stderr = proc.stderr();
            if stderr.contains("not built yet") {
                fail("mws serve", Some(2), &stderr);
            }
            panic!("mws serve did not start: {e}");
        }
        Mws {
            _proc: proc,
            url: format!("http://127.0.0.1:{port}/mcp"),
            config: config_path,
            state_dir,
            home,
            logs: dir.to_path_buf(),
        }
    }

    /// Runs `mws <args> --config X` to completion; returns stdout, panics on failure.
    pub fn run(&self, label: &str, args: &[&str]) -> String {
        let mut c = mws_command(&self.home);
        c.args(args).arg("--config").arg(&self.config);
        let mut p = Proc::spawn(label, c, &self.logs);
        let status = p.wait(COMMAND_TIMEOUT);
        if !status.success() {
            fail(
                &format!("mws {}", args.join(" ")),
                status.code(),
                &p.stderr(),
            );
        }
        p.stdout()
    }

    /// `mws ingest --json`.
    pub fn ingest(&self, label: &str) -> Value {
        let out = self.run(label, &["ingest", "--json"]);
        serde_json::from_str(out.trim())
            .unwrap_or_else(|e| panic!("mws ingest --json printed no JSON ({e}):\n{out}"))
    }

    /// `mws promote --json`, then the listed tools of `working-set.json` it wrote.
    pub fn promote(&self, label: &str) -> (Value, Vec<String>) {
        let out = self.run(label, &["promote", "--json"]);
        let decisions: Value = serde_json::from_str(out.trim())
            .unwrap_or_else(|e| panic!("mws promote --json printed no JSON ({e}):\n{out}"));
        let path = self.state_dir.join("working-set.json");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("promote wrote no {}: {e}", path.display()));
        let ws: Value = serde_json::from_str(&text).unwrap();
        let tools = ws["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("working-set.json has no tools array: {ws}"))
            .iter()
            .filter_map(|t| t.as_str().map(str::to_string))
            .collect();
        (decisions, tools)
    }

    /// Waits (300 tries, 100 ms apart) until the running proxy lists `tool` to a new session
    /// (each try is another client): it picks up a promotion within about half a second, and a
    /// server's tools once it has started; a client started before that keeps the old listing.
    pub fn wait_listed(&self, tool: &str) {
        let rt = tokio::runtime::Runtime::new().unwrap();
        let listed = rt.block_on(async {
            let http = reqwest::Client::new();
            for i in 0..300 {
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                    "io.modelcontextprotocol/clientInfo": {"name": format!("e2e-test-{i}"), "version": "1"},
                    "io.modelcontextprotocol/clientCapabilities": {}}}});
                let reply = http
                    .post(&self.url)
                    .header("content-type", "application/json")
                    .header("accept", "application/json, text/event-stream")
                    .header("mcp-protocol-version", "2026-07-28")
                    .header("mcp-method", "tools/list")
                    .body(body.to_string())
                    .send()
                    .await;
                if let Ok(r) = reply
                    && let Ok(v) = r.json::<Value>().await
                    && v["result"]["tools"]
                        .as_array()
                        .is_some_and(|ts| ts.iter().any(|t| t["name"] == tool))
                {
                    return true;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            false
        });
        assert!(listed, "mws serve did not list {tool} in 300 tries");
    }

    /// The `calls` rows for `tool`: `(session_id, via, ok, client_call_id)`, in id order.
    pub fn calls(&self, tool: &str) -> Vec<CallRow> {
        calls_in(&self.state_dir, tool)
    }
}

/// The `calls` rows for `tool` in the `state.db` of `state_dir`, in id order.
pub fn calls_in(state_dir: &Path, tool: &str) -> Vec<CallRow> {
    let db = rusqlite::Connection::open_with_flags(
        state_dir.join("state.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut stmt = db
        .prepare(
            "SELECT session_id, via, ok, client_call_id FROM calls WHERE tool = ?1 ORDER BY id",
        )
        .unwrap();
    stmt.query_map([tool], |r| {
        Ok(CallRow {
            session_id: r.get(0)?,
            via: r.get(1)?,
            ok: r.get::<_, i64>(2)? == 1,
            client_call_id: r.get(3)?,
        })
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

/// One row of `calls`, as the tests check it.
#[derive(Debug, Clone, PartialEq)]
pub struct CallRow {
    pub session_id: String,
    pub via: String,
    pub ok: bool,
    pub client_call_id: Option<String>,
}
