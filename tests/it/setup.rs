//! `mws setup import` on configs written by the real `claude mcp add` and `codex mcp add` CLIs
//! (tests/peers, installed on first use) in a temp HOME and CODEX_HOME with a clean environment:
//! every server is found with its client, scope and transport, and no secret is printed. The CLIs
//! only write config files here; nothing reaches the network.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::peer;
use crate::support::serve::mws;

/// Longest one CLI run may take before it is killed and the test fails (each takes about a
/// second; raising it only helps on a much slower machine).
const CLI_TIMEOUT: Duration = Duration::from_secs(120);
/// How often a waiting loop looks again.
const POLL: Duration = Duration::from_millis(50);

/// Every value below that must never appear in the printed plan.
const SECRETS: [&str; 5] = [
    "secret-env-1",
    "secret-hdr-1",
    "secret-hdr-2",
    "secret-env-2",
    "secret-env-3",
];

pub(crate) struct Homes {
    _dir: tempfile::TempDir,
    pub home: PathBuf,
    pub codex_home: PathBuf,
    pub project: PathBuf,
}

pub(crate) fn homes() -> Homes {
    let dir = tempfile::tempdir().unwrap();
    // The real path: Claude Code keys local scope by the resolved working directory.
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let codex_home = root.join("codex-home");
    let project = home.join("proj");
    for d in [&home, &codex_home, &project] {
        std::fs::create_dir_all(d).unwrap();
    }
    Homes {
        _dir: dir,
        home,
        codex_home,
        project,
    }
}

/// A command with nothing of the developer's environment but PATH, run in the project with the
/// temp homes.
pub(crate) fn clean(program: &Path, h: &Homes) -> Command {
    let mut c = Command::new(program);
    c.env_clear();
    for var in ["PATH", "LANG", "TMPDIR"] {
        if let Some(v) = std::env::var_os(var) {
            c.env(var, v);
        }
    }
    c.current_dir(&h.project)
        .env("HOME", &h.home)
        .env("CODEX_HOME", &h.codex_home)
        .env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .env("DISABLE_TELEMETRY", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("DISABLE_ERROR_REPORTING", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
    c
}

/// Runs to completion within `CLI_TIMEOUT`, output captured.
pub(crate) fn run(mut c: Command) -> Output {
    let mut child = c
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {c:?}: {e}"));
    let deadline = Instant::now() + CLI_TIMEOUT;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("{c:?} did not finish within {CLI_TIMEOUT:?}");
        }
        std::thread::sleep(POLL);
    }
    child.wait_with_output().unwrap()
}

pub(crate) fn ok(c: Command) -> Output {
    let what = format!("{c:?}");
    let out = run(c);
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub(crate) fn claude(h: &Homes, args: &[&str]) {
    let mut c = clean(&peer("tests/peers/node_modules/.bin/claude"), h);
    c.arg("mcp").arg("add").args(args);
    ok(c);
}

pub(crate) fn codex(h: &Homes, args: &[&str]) {
    let mut c = clean(&peer("tests/peers/node_modules/.bin/codex"), h);
    c.arg("mcp").arg("add").args(args);
    ok(c);
}

fn import(h: &Homes, json: bool) -> Output {
    // The CLIs on PATH: without them, their clients' servers stay (apply changes them through it).
    let bin = peer("tests/peers/node_modules/.bin/claude");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c = mws();
    c.env_clear()
        .current_dir(&h.project)
        .env("HOME", &h.home)
        .env("CODEX_HOME", &h.codex_home)
        .env("PATH", path)
        .args(["setup", "import"]);
    if json {
        c.arg("--json");
    }
    ok(c)
}

/// The `found` element named `name`.
fn found<'a>(plan: &'a Value, name: &str) -> &'a Value {
    plan["found"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["name"] == name)
        .unwrap_or_else(|| panic!("{name} not found in {plan:#}"))
}

#[test]
fn setup_import_finds_what_the_real_clis_registered() {
    let h = homes();
    // User, local (the default, keyed by the project) and project (.mcp.json) scopes.
    claude(
        &h,
        &[
            "-s",
            "user",
            "stdio-user",
            "-e",
            "TOKEN=secret-env-1",
            "--",
            "npx",
            "-y",
            "pkg",
        ],
    );
    claude(
        &h,
        &[
            "-s",
            "user",
            "-t",
            "http",
            "http-user",
            "https://example.com/u",
            "-H",
            "Authorization: Bearer secret-hdr-1",
        ],
    );
    claude(
        &h,
        &[
            "-t",
            "http",
            "http-local",
            "https://example.com/l",
            "-H",
            "X-Api-Key: secret-hdr-2",
        ],
    );
    claude(
        &h,
        &[
            "-s",
            "local",
            "stdio-local",
            "-e",
            "K=secret-env-2",
            "--",
            "node",
            "srv.js",
        ],
    );
    claude(
        &h,
        &["-s", "project", "proj-time", "--", "uvx", "mcp-server-time"],
    );
    codex(
        &h,
        &[
            "cx-stdio",
            "--env",
            "API_KEY=secret-env-3",
            "--",
            "node",
            "./server.js",
            "--flag",
        ],
    );
    codex(
        &h,
        &[
            "cx-http",
            "--url",
            "https://example.com/c",
            "--bearer-token-env-var",
            "MY_TOKEN",
        ],
    );
    // A malformed config of another client is named and does not stop the import.
    std::fs::create_dir_all(h.home.join(".cursor")).unwrap();
    std::fs::write(
        h.home.join(".cursor/mcp.json"),
        "{\n  \"mcpServers\": {\n    oops\n",
    )
    .unwrap();

    let out = import(&h, true);
    let plan: Value = serde_json::from_slice(&out.stdout).unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(".cursor/mcp.json:3:"), "{stderr}");

    let project = h.project.to_str().unwrap();
    let cases = [
        ("stdio-user", "claude-code", "user", "stdio", "npx"),
        (
            "http-user",
            "claude-code",
            "user",
            "http",
            "https://example.com/u",
        ),
        (
            "http-local",
            "claude-code",
            "local",
            "http",
            "https://example.com/l",
        ),
        ("stdio-local", "claude-code", "local", "stdio", "node"),
        ("cx-stdio", "codex", "user", "stdio", "node"),
        ("cx-http", "codex", "user", "http", "https://example.com/c"),
    ];
    for (name, client, scope, ty, target) in cases {
        let f = found(&plan, name);
        assert_eq!(
            (
                f["client"].as_str(),
                f["scope"].as_str(),
                f["transport"]["type"].as_str()
            ),
            (Some(client), Some(scope), Some(ty)),
            "{name}: {f:#}"
        );
        let key = if ty == "stdio" { "command" } else { "url" };
        assert_eq!(f["transport"][key], target, "{name}: {f:#}");
        if scope == "local" {
            assert_eq!(f["project"], project, "{name}: {f:#}");
        }
        assert!(
            plan["servers"].get(name).is_some(),
            "{name} not behind mws: {plan:#}"
        );
    }
    assert_eq!(
        plan["servers"].as_object().unwrap().len(),
        cases.len(),
        "{plan:#}"
    );
    // A project server Claude Code never approved stays with it, and says why.
    let time = found(&plan, "proj-time");
    assert_eq!(
        (
            time["scope"].as_str(),
            time["transport"]["command"].as_str()
        ),
        (Some("project"), Some("uvx"))
    );
    let stays = plan["stays"].as_array().unwrap();
    let stay = stays
        .iter()
        .find(|s| s["name"] == "proj-time")
        .expect("proj-time stays");
    assert_eq!(
        stay["reason"],
        format!(
            "not approved in Claude Code for {project}: the folder's trust dialog was never \
             accepted (`hasTrustDialogAccepted`)"
        )
    );
    assert_eq!(
        found(&plan, "cx-stdio")["transport"]["args"],
        serde_json::json!(["./server.js", "--flag"])
    );
    assert_eq!(
        plan["servers"]["cx-http"]["headers"]["Authorization"], "***",
        "the bearer variable becomes a masked header: {plan:#}"
    );
    assert_eq!(plan["errors"].as_array().unwrap().len(), 1, "{plan:#}");

    let json = String::from_utf8_lossy(&out.stdout);
    let text = import(&h, false);
    let printed = [
        json.to_string(),
        String::from_utf8_lossy(&text.stdout).to_string(),
        String::from_utf8_lossy(&text.stderr).to_string(),
    ]
    .concat();
    for secret in SECRETS {
        assert!(
            !printed.contains(secret),
            "{secret} was printed:\n{printed}"
        );
    }
    let table = String::from_utf8_lossy(&text.stdout);
    for name in cases.iter().map(|c| c.0).chain(["proj-time"]) {
        assert!(
            table.contains(name),
            "{name} missing from the table:\n{table}"
        );
    }
    assert!(table.contains("dry run: nothing was written"), "{table}");
}

/// A project `.mcp.json` the user never approved in Claude Code stays in the plan, and nothing
/// mws does afterwards (the dry run, `mws doctor`) runs its command.
#[test]
fn an_unapproved_project_server_stays_and_never_runs() {
    let h = homes();
    let marker = h.project.join("ran");
    let script = h.project.join("evil.sh");
    std::fs::write(&script, format!("#!/bin/sh\ntouch {}\n", marker.display())).unwrap();
    let mcp =
        serde_json::json!({"mcpServers": {"evil": {"command": script, "args": ["./server.js"]}}});
    std::fs::write(h.project.join(".mcp.json"), mcp.to_string()).unwrap();
    let plan: Value = serde_json::from_slice(&import(&h, true).stdout).unwrap();
    assert!(plan["servers"].get("evil").is_none(), "{plan:#}");
    let stays = plan["stays"].as_array().unwrap();
    assert!(
        stays.iter().any(|s| s["name"] == "evil"
            && s["reason"]
                .as_str()
                .unwrap()
                .starts_with("not approved in Claude Code for ")),
        "{plan:#}"
    );
    let mut doctor = mws();
    doctor
        .env_clear()
        .current_dir(&h.project)
        .env("HOME", &h.home)
        .env("CODEX_HOME", &h.codex_home)
        .arg("doctor");
    run(doctor);
    assert!(!marker.exists(), "the unapproved server's command ran");
}

/// The dry run makes --apply's checks: a read-only client file and a client that has another
/// server under mws's name are named, and nothing is written.
#[test]
fn the_dry_run_says_what_apply_would_refuse() {
    use std::os::unix::fs::PermissionsExt;
    let h = homes();
    let cursor = h.home.join(".cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(&cursor, r#"{"mcpServers": {"a": {"command": "x"}}}"#).unwrap();
    std::fs::set_permissions(&cursor, std::fs::Permissions::from_mode(0o444)).unwrap();
    let gemini = h.home.join(".gemini/settings.json");
    std::fs::create_dir_all(gemini.parent().unwrap()).unwrap();
    std::fs::write(
        &gemini,
        r#"{"mcpServers": {"b": {"command": "y"}, "toolbox": {"url": "ws://x"}}}"#,
    )
    .unwrap();
    let out = import(&h, false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\n`--apply` would stop at:\n"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "  cursor: {}: it is read-only (mode 444): mws does not change a file you made \
             read-only; run `chmod u+w {}` to let it; a stay with cursor\n",
            cursor.display(),
            cursor.display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "  gemini-cli: {} already has a server named `toolbox` that is not mws;",
            gemini.display()
        )),
        "{stdout}"
    );
    let json: serde_json::Value = serde_json::from_slice(&import(&h, true).stdout).unwrap();
    assert_eq!(
        json["applyWouldRefuse"].as_array().unwrap().len(),
        2,
        "{json:#}"
    );
    assert!(!h.home.join(".config/mcp-working-set").exists());
    assert!(!h.home.join(".local/state/mcp-working-set").exists());
}
