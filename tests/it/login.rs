//! OAuth end to end: the Python SDK's server-side auth (tests/peers/oauth_server.py: its own
//! authorization server approving at once, tokens expiring after 2 s, `/revoke-all`) behind the
//! real `mws login` (headless) and `mws serve`: calls succeed with the stored token, the token is
//! refreshed, a revoked token answers "the refresh token was refused; run `mws login`" while the
//! other server keeps answering, a scope the server demanded is asked for by the next `mws login`,
//! and the token is in no file but its own 0600 one, not in stderr, not in state.db.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::run::{config_in, http_and_time};
use crate::support::serve::{self, mws, post_modern};
use crate::support::{Child, clients, free_port, peers};

/// Seconds an access token of the fixture lives.
const EXPIRES: &str = "2";

async fn call(url: &str, id: i64, name: &str, args: Value) -> String {
    let reply = post_modern(
        url,
        id,
        "tools/call",
        json!({"name": "call_tool", "arguments": {"name": name, "arguments": args}}),
    )
    .await;
    match reply.get("error") {
        Some(e) => e["message"].as_str().unwrap_or_default().to_string(),
        None => clients::text(&reply["result"]),
    }
}

fn access_token(dir: &std::path::Path) -> String {
    let t: Value =
        serde_json::from_slice(&std::fs::read(dir.join("servers/prot/oauth.json")).unwrap())
            .unwrap();
    t["accessToken"].as_str().unwrap().to_string()
}

/// Every file under `dir` but the token file, as bytes.
fn other_files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(dir).into_iter().flatten() {
        if e.file_type().is_file() && e.file_name() != "oauth.json" {
            out.push((
                e.path().display().to_string(),
                std::fs::read(e.path()).unwrap(),
            ));
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_serve_refresh_and_revoke() {
    peers::ensure();
    let port = free_port();
    let fixture = Child(
        std::process::Command::new(peers::peer(".venv/bin/python"))
            .arg(peers::peer("tests/peers/oauth_server.py"))
            .args([&port.to_string(), EXPIRES])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let config = json!({
        "servers": http_and_time("prot", &url),
        "timeouts": {"listMs": 20000},
        "transcripts": [],
        "stateDir": state
    });
    let config_path = config_in(dir.path(), config.clone());

    let out = mws()
        .args([
            "--config",
            config_path.to_str().unwrap(),
            "login",
            "prot",
            "--timeout",
            "20",
        ])
        .env("MWS_OAUTH_HEADLESS", "1")
        .output()
        .unwrap();
    let login_err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{login_err}");
    assert!(
        login_err.starts_with("logged in to server \"prot\": scopes granted: mcp"),
        "{login_err}"
    );
    let token_file = state.join("servers/prot/oauth.json");
    let mode = std::fs::metadata(&token_file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let mut seen = vec![access_token(&state)];

    let mut served = serve::start_in(dir, &config, &[]);
    assert_eq!(
        call(&served.url, 1, "prot__echo", json!({"text": "hello"})).await,
        "hello"
    );
    // The 2 s token is past 80% of its life: the next call goes with a refreshed one.
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(
        call(&served.url, 2, "prot__echo", json!({"text": "again"})).await,
        "again"
    );
    let state = served.dir.path().join("state");
    let refreshed = access_token(&state);
    assert!(!seen.contains(&refreshed), "the token was not refreshed");
    seen.push(refreshed);

    reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/revoke-all"))
        .send()
        .await
        .unwrap();
    let said = call(&served.url, 3, "prot__echo", json!({"text": "x"})).await;
    assert!(
        said.contains(
            "server \"prot\" needs a login: the refresh token was refused; run `mws login prot`"
        ),
        "{said}"
    );
    // Not asked again: the refusal is remembered until a login.
    let again = call(&served.url, 6, "prot__echo", json!({"text": "x"})).await;
    assert_eq!(again, said);
    let discover = post_modern(&served.url, 5, "server/discover", json!({})).await;
    let instructions = discover["result"]["instructions"]
        .as_str()
        .unwrap_or_default();
    assert!(
        instructions.contains("prot (it needs a login: ask the user to run `mws login prot`)"),
        "{discover}"
    );
    let time = call(
        &served.url,
        4,
        "time__get_current_time",
        json!({"timezone": "UTC"}),
    )
    .await;
    assert!(time.contains("UTC"), "{time}");
    served.stop();

    // A step-up the proxy remembered (`demandedScope` beside the tokens): `mws login` says so and
    // asks for it with the scopes held.
    let mut t: Value = serde_json::from_slice(&std::fs::read(&token_file).unwrap()).unwrap();
    assert!(t["refreshRefused"].is_string(), "{t}");
    t["demandedScope"] = json!("admin");
    std::fs::write(&token_file, t.to_string()).unwrap();
    let out = mws()
        .args(["--config", config_path.to_str().unwrap(), "login", "prot"])
        .args(["--timeout", "20"])
        .env("MWS_OAUTH_HEADLESS", "1")
        .output()
        .unwrap();
    let relogin = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{relogin}");
    assert!(
        relogin.starts_with(
            "server \"prot\" asked for more scope (admin) since the last login: this login asks \
             for it too\nlogged in to server \"prot\": scopes granted: mcp admin"
        ),
        "{relogin}"
    );
    let t: Value = serde_json::from_slice(&std::fs::read(&token_file).unwrap()).unwrap();
    assert!(
        t.get("demandedScope").is_none() && t.get("refreshRefused").is_none(),
        "{t}"
    );
    drop(fixture);

    let stderr = served.stderr.lock().unwrap().join("\n");
    for token in &seen {
        assert!(!stderr.contains(token.as_str()) && !login_err.contains(token.as_str()));
        for (path, bytes) in other_files(&state) {
            let hit = bytes.windows(token.len()).any(|w| w == token.as_bytes());
            assert!(!hit, "the token is in {path}");
        }
    }
}
