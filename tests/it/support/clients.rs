//! Real downstream clients driven against a running proxy: the Python `mcp` SDK client (through
//! tests/peers/mcp_client.py) and the MCP Inspector CLI (`@modelcontextprotocol/inspector --cli`,
//! run on the Node 22 that tests/peers/package.json installs). Both are installed on first use
//! (support/peers.rs).

use std::time::Duration;

use serde_json::Value;

use super::peer;

/// How long one client process may run before the test fails instead of hanging.
const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// The Python SDK client's connect modes and the protocol version each must end up on against
/// mws (which serves both eras, so `auto` picks the modern one).
pub const PYTHON_MODES: [(&str, &str); 3] = [
    ("auto", "2026-07-28"),
    ("legacy", "2025-11-25"),
    ("2026-07-28", "2026-07-28"),
];

/// What the Python client saw in one run: list, direct listed call, direct unlisted call,
/// `call_tool` of the unlisted one, `search_tools` (see tests/peers/mcp_client.py).
pub async fn python(url: &str, mode: &str, calls: [(&str, &Value); 2], query: &str) -> Value {
    let [(listed, la), (unlisted, ua)] = calls;
    let out = tokio::process::Command::new(peer(".venv/bin/python"))
        .arg(peer("tests/peers/mcp_client.py"))
        .args([
            url,
            mode,
            listed,
            &la.to_string(),
            unlisted,
            &ua.to_string(),
        ])
        .arg(query)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(CLIENT_TIMEOUT, out)
        .await
        .expect("python client timed out")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python client, mode {mode}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// One Inspector CLI run (`--cli --transport http --format json -q`) with `args` after the era;
/// returns its exit code and the JSON it printed (stdout, else the error envelope on stderr).
pub async fn inspector(url: &str, era: &str, args: &[&str]) -> (i32, Value) {
    let home = tempfile::tempdir().unwrap();
    let out = tokio::process::Command::new(peer("tests/peers/node_modules/.bin/node"))
        .arg(peer("tests/peers/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"))
        .args(["--cli", "--server-url", url, "--transport", "http"])
        .args(["--protocol-era", era, "--format", "json", "-q"])
        .args(args)
        // Its catalog and auth store go to a throwaway home, never the user's.
        .env("HOME", home.path())
        .env("MCP_CATALOG_PATH", home.path().join("mcp.json"))
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(CLIENT_TIMEOUT, out)
        .await
        .expect("inspector timed out")
        .unwrap();
    let text = if out.stdout.is_empty() {
        &out.stderr
    } else {
        &out.stdout
    };
    let v = serde_json::from_slice(text).unwrap_or_else(|e| {
        panic!(
            "inspector ({era} {args:?}) printed no JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code().unwrap_or(-1), v)
}

/// Inspector `tools/call` of `tool` with `args`: the result, asserting the run succeeded.
pub async fn inspector_call(url: &str, era: &str, tool: &str, args: &Value) -> Value {
    let a = args.to_string();
    let cli = [
        "--method",
        "tools/call",
        "--tool-name",
        tool,
        "--tool-args-json",
        &a,
    ];
    let (code, v) = inspector(url, era, &cli).await;
    assert_eq!(code, 0, "inspector {era} call {tool}: {v}");
    v["result"].clone()
}

/// The text of a `tools/call` result's content.
pub fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}
