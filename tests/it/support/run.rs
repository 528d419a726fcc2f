//! The built `mws` run as a user runs its commands: in a private home (`mws_in`), on a config
//! file (`mws_config`) written into the test's dir (`config_in`, `offline_config`), with several
//! servers in one config (`http_and_time`), and a `--json` command's output parsed (`json_run`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::{mcp_server_time, root};

/// The built `mws`, with the test's environment.
pub fn mws() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mws"))
}

/// `mws` run in `dir` with a private HOME and XDG dirs and none of mws's own variables, so
/// nothing outside `dir` is read.
pub fn mws_in(dir: &Path) -> Command {
    let mut c = mws();
    c.current_dir(dir)
        .env("HOME", dir)
        .env("XDG_CONFIG_HOME", dir.join("xdg-config"))
        .env("XDG_STATE_HOME", dir.join("xdg-state"))
        .env_remove("MWS_CONFIG")
        .env_remove("MWS_LOG")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("CODEX_HOME");
    c
}

/// `mws --config <config>`, for the command and its flags to follow.
pub fn mws_config(config: &Path) -> Command {
    let mut c = mws();
    c.arg("--config").arg(config);
    c
}

/// Runs `cmd` (a `--json` command) and parses what it printed. Panics, naming the command and
/// its stderr, if it fails to run, exits non-zero or prints something that is not JSON.
pub fn json_run(cmd: &mut Command) -> Value {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} did not run: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}); stderr:\n{stderr}",
        out.status
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{cmd:?} printed no JSON ({e}):\n{}\nstderr:\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// Writes `config` to `dir/config.json`, with `stateDir` set to `dir/state` unless `config`
/// names one; returns the file's path.
pub fn config_in(dir: &Path, mut config: Value) -> PathBuf {
    if config.get("stateDir").is_none() {
        config["stateDir"] = json!(dir.join("state"));
    }
    let path = dir.join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

/// A config in `dir` (see `config_in`) whose upstream is not there (a closed loopback port, a
/// 500 ms list timeout) and whose state dir holds `fixtures/<catalog>` as `catalog.json`, so that
/// every command falls back to that catalog; returns the config's path.
pub fn offline_config(dir: &Path, catalog: &str) -> PathBuf {
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::copy(
        root().join("fixtures").join(catalog),
        state.join("catalog.json"),
    )
    .unwrap();
    let port = super::dead_port();
    config_in(
        dir,
        json!({
            "upstream": {"url": format!("http://127.0.0.1:{port}/mcp")},
            "transcripts": [],
            "timeouts": {"listMs": 500},
        }),
    )
}

/// A `servers` map of two: `name` over HTTP at `url`, and `time`, mcp-server-time over stdio.
pub fn http_and_time(name: &str, url: &str) -> Value {
    json!({
        name: {"url": url},
        "time": {"command": mcp_server_time()},
    })
}
