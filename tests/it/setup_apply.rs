//! `mws setup import --apply` then `mws setup undo`, on configs written by the real `claude` and
//! `codex` CLIs (which `--apply` also runs, found on PATH) and on Claude Desktop, Cursor, VS Code
//! and Gemini CLI files in their documented formats: servers move into mws's config, each client
//! registers mws instead, and undo leaves every file byte-identical. Bad input: a missing CLI and
//! a malformed file are named, and the rest is applied.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mws::setup::Client;
use mws::setup::entry::Syntax;
use serde_json::Value;

use crate::setup::{Homes, claude, codex, homes, run};
use crate::support::peer;
use crate::support::serve::mws;

/// `mws` in the project with the temp homes and `path` as PATH.
pub(crate) fn mws_with(h: &Homes, path: &str, args: &[&str]) -> Output {
    let mut c: Command = mws();
    c.env_clear()
        .current_dir(&h.project)
        .env("HOME", &h.home)
        .env("CODEX_HOME", &h.codex_home)
        .env("PATH", path)
        .env("TERM", "dumb")
        .env("NO_COLOR", "1")
        .args(args);
    run(c)
}

pub(crate) fn config_path(h: &Homes) -> PathBuf {
    h.home.join(".config/mcp-working-set/config.json")
}

/// Every file's bytes (`None`: absent).
fn snapshot(files: &[PathBuf]) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    files
        .iter()
        .map(|f| (f.clone(), std::fs::read(f).ok()))
        .collect()
}

pub(crate) fn text(o: &Output) -> String {
    format!(
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A JSON-with-comments file, parsed.
fn jsonc_file(p: &Path) -> Value {
    let t = std::fs::read_to_string(p).unwrap();
    mws::setup::entry::parse_doc(&t, Syntax::Jsonc, Client::VsCode, p)
        .unwrap_or_else(|e| panic!("{e}\n{t}"))
}

pub(crate) fn json_file(p: &Path) -> Value {
    let t = std::fs::read_to_string(p).unwrap();
    serde_json::from_str(&t).unwrap_or_else(|e| panic!("{}: {e}\n{t}", p.display()))
}

/// PATH with the test peers' `claude` and `codex` first.
pub(crate) fn path_with_clis() -> String {
    let bin = peer("tests/peers/node_modules/.bin/claude");
    let dir = bin.parent().unwrap().display().to_string();
    format!("{dir}:{}", std::env::var("PATH").unwrap_or_default())
}

/// Undo puts back every file as in `before`, naming each file `--apply` changed.
fn undo_restores(h: &Homes, path: &str, before: &BTreeMap<PathBuf, Option<Vec<u8>>>) {
    let applied = snapshot(&before.keys().cloned().collect::<Vec<_>>());
    let out = mws_with(h, path, &["setup", "undo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let after = snapshot(&before.keys().cloned().collect::<Vec<_>>());
    for (f, bytes) in before {
        assert!(
            after[f] == *bytes,
            "{} differs after undo:\n{}",
            f.display(),
            String::from_utf8_lossy(after[f].as_deref().unwrap_or(b"<absent>"))
        );
        if applied[f] != *bytes {
            assert!(stdout.contains(&f.display().to_string()), "{stdout}");
        }
    }
    let again = mws_with(h, path, &["setup", "undo"]);
    assert_eq!(again.status.code(), Some(1), "{}", text(&again));
    assert!(
        String::from_utf8_lossy(&again.stderr).starts_with("mws: setup undo: nothing to undo"),
        "{}",
        text(&again)
    );
}

#[test]
fn apply_then_undo_with_the_real_clis() {
    let h = homes();
    claude(
        &h,
        &[
            "-s",
            "user",
            "stdio-user",
            "-e",
            "TOKEN=t1",
            "--",
            "npx",
            "-y",
            "pkg",
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
            "X-Api-Key: k2",
        ],
    );
    claude(
        &h,
        &["-s", "project", "time", "--", "uvx", "mcp-server-time"],
    );
    codex(
        &h,
        &[
            "cx-stdio",
            "--env",
            "API_KEY=k3",
            "--",
            "node",
            "./server.js",
        ],
    );
    codex(
        &h,
        &[
            "gh",
            "--url",
            "https://example.com/c",
            "--bearer-token-env-var",
            "MY_TOKEN",
        ],
    );
    // The same server under another name in Codex: one server behind mws, with an alias.
    codex(&h, &["clock", "--", "uvx", "mcp-server-time"]);
    // A trusted project's own Codex file, which the Codex CLI cannot change: edited in place.
    let user_toml = h.codex_home.join("config.toml");
    let mut trust = std::fs::read_to_string(&user_toml).unwrap();
    trust.push_str(&format!(
        "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        h.project.display()
    ));
    std::fs::write(&user_toml, trust).unwrap();
    let project_toml = h.project.join(".codex/config.toml");
    std::fs::create_dir_all(project_toml.parent().unwrap()).unwrap();
    std::fs::write(
        &project_toml,
        "# the project's Codex settings\nmodel = \"o3\"\n\n[mcp_servers.docs]\n\
         command = \"docs-mcp\" # local docs\n\n[mcp_servers.docs.env]\nDOCS_DIR = \"./docs\"\n",
    )
    .unwrap();
    // The user approved the project's `.mcp.json` server in Claude Code.
    let claude_json = h.home.join(".claude.json");
    let mut doc = json_file(&claude_json);
    let entry = &mut doc["projects"][h.project.to_str().unwrap()];
    entry["hasTrustDialogAccepted"] = true.into();
    entry["enabledMcpjsonServers"] = serde_json::json!(["time"]);
    std::fs::write(&claude_json, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let files = [
        h.home.join(".claude.json"),
        h.project.join(".mcp.json"),
        user_toml.clone(),
        project_toml.clone(),
        config_path(&h),
    ];
    let before = snapshot(&files);
    let path = path_with_clis();

    let out = mws_with(&h, &path, &["setup", "import", "--apply"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("backed up 5 file(s) to "), "{stdout}");
    for secret in ["t1", "k2", "k3"] {
        assert!(
            !stdout.contains(&format!("{secret}\"")),
            "{secret}: {stdout}"
        );
    }

    let config = json_file(&config_path(&h));
    let servers = config["servers"].as_object().unwrap();
    let names: Vec<&str> = servers.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        ["cx-stdio", "docs", "gh", "http-local", "stdio-user", "time"]
    );
    assert_eq!(
        std::fs::read_to_string(&project_toml).unwrap(),
        "# the project's Codex settings\nmodel = \"o3\"\n",
        "only the moved server leaves the project file"
    );
    assert_eq!(servers["time"]["aliases"], serde_json::json!(["clock"]));
    assert_eq!(
        servers["gh"]["headers"]["Authorization"],
        "Bearer ${MY_TOKEN}"
    );
    assert_eq!(servers["stdio-user"]["env"]["TOKEN"], "t1");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(config_path(&h))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);

    let claude_json = json_file(&h.home.join(".claude.json"));
    let user: Vec<&String> = claude_json["mcpServers"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(user, ["toolbox"], "{claude_json:#}");
    // Claude Code starts mws itself: nothing else has to be running.
    let toolbox = &claude_json["mcpServers"]["toolbox"];
    assert_eq!(toolbox["alwaysLoad"], true);
    assert_eq!(toolbox["type"], "stdio", "{toolbox:#}");
    assert!(
        toolbox["command"].as_str().unwrap().ends_with("/mws"),
        "{toolbox:#}"
    );
    assert_eq!(
        toolbox["args"],
        serde_json::json!(["--config", config_path(&h), "serve", "--stdio"])
    );
    let project = h.project.to_str().unwrap();
    let local = &claude_json["projects"][project]["mcpServers"];
    assert_eq!(local, &serde_json::json!({}), "{claude_json:#}");
    let mcp = json_file(&h.project.join(".mcp.json"));
    assert_eq!(mcp["mcpServers"], serde_json::json!({}));
    let codex_toml: toml::Table =
        toml::from_str(&std::fs::read_to_string(h.codex_home.join("config.toml")).unwrap())
            .unwrap();
    let codex_servers: Vec<&String> = codex_toml["mcp_servers"]
        .as_table()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(codex_servers, ["toolbox"], "{codex_toml:#?}");
    assert_eq!(
        codex_toml["mcp_servers"]["toolbox"]["args"][3].as_str(),
        Some("--stdio"),
        "{codex_toml:#?}"
    );

    // Servers added after --apply, with the clients' own CLIs, survive undo.
    claude(&h, &["-s", "user", "later", "--", "later-mcp"]);
    codex(&h, &["later2", "--", "later2-mcp"]);
    let out = mws_with(&h, &path, &["setup", "undo"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "{}: put back `stdio-user`, `http-local`, took out `toolbox`; what was changed there \
             since stays",
            h.home.join(".claude.json").display()
        )),
        "{stdout}"
    );
    let claude_json = json_file(&h.home.join(".claude.json"));
    let user: Vec<&String> = claude_json["mcpServers"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(user, ["later", "stdio-user"], "{claude_json:#}");
    assert_eq!(
        claude_json["mcpServers"]["stdio-user"]["env"]["TOKEN"],
        "t1"
    );
    let local = &claude_json["projects"][project]["mcpServers"];
    assert_eq!(
        local["http-local"]["headers"]["X-Api-Key"], "k2",
        "{claude_json:#}"
    );
    let codex_toml: toml::Table =
        toml::from_str(&std::fs::read_to_string(h.codex_home.join("config.toml")).unwrap())
            .unwrap();
    let mut codex_servers: Vec<&String> = codex_toml["mcp_servers"]
        .as_table()
        .unwrap()
        .keys()
        .collect();
    codex_servers.sort();
    assert_eq!(
        codex_servers,
        ["clock", "cx-stdio", "gh", "later2"],
        "{codex_toml:#?}"
    );
    // Files nobody touched since come back byte for byte.
    let after = snapshot(&files);
    for f in [h.project.join(".mcp.json"), project_toml, config_path(&h)] {
        assert!(
            after[&f] == before[&f],
            "{} differs after undo",
            f.display()
        );
    }
}

/// Writes `fixture` (fixtures/client-configs) at `to`.
fn place(fixture: &str, to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/client-configs")
        .join(fixture);
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    std::fs::copy(from, to).unwrap();
}

#[test]
fn apply_then_undo_on_documented_files_without_the_clis() {
    let h = homes();
    let desktop = h.home.join(".config/Claude/claude_desktop_config.json");
    let cursor = h.home.join(".cursor/mcp.json");
    let vscode = h.project.join(".vscode/mcp.json");
    let gemini = h.home.join(".gemini/settings.json");
    place("claude_desktop_config.json", &desktop);
    place("cursor-mcp.json", &cursor);
    place("vscode-mcp.json", &vscode);
    place("gemini-settings.json", &gemini);
    // Claude Code has a server, but its CLI is not on PATH.
    std::fs::write(
        h.home.join(".claude.json"),
        r#"{"mcpServers": {"cc-only": {"type": "stdio", "command": "x", "args": [], "env": {}}}}"#,
    )
    .unwrap();
    // A malformed Cursor project file: named, and the rest is applied.
    let bad = h.project.join(".cursor/mcp.json");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    std::fs::write(&bad, "{\n  \"mcpServers\": {\n    oops\n").unwrap();
    let files = [
        desktop.clone(),
        cursor.clone(),
        vscode.clone(),
        gemini.clone(),
        bad.clone(),
        h.home.join(".claude.json"),
        config_path(&h),
    ];
    let before = snapshot(&files);
    let path = "/nonexistent-bin";

    let out = mws_with(
        &h,
        path,
        &["setup", "import", "--apply", "--include-project-files"],
    );
    // The plan already keeps Claude Code's server (its CLI is missing): nothing failed.
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{}:3:", bad.display())),
        "{stderr}"
    );
    assert!(!text(&out).contains("cc-only"), "{}", text(&out));

    let config = json_file(&config_path(&h));
    let names: Vec<&String> = config["servers"].as_object().unwrap().keys().collect();
    assert_eq!(
        names,
        [
            "fetch",
            "filesystem",
            "github",
            "googleCloud",
            "httpServer",
            "local-tool",
            "pythonTools",
            "remote",
            "remote-bridge",
            "typedHttp",
            "with-auth"
        ],
        "{config:#}"
    );
    let keys =
        |v: &Value, k: &str| -> Vec<String> { v[k].as_object().unwrap().keys().cloned().collect() };
    let d = json_file(&desktop);
    assert_eq!(keys(&d, "mcpServers"), ["toolbox"]);
    assert_eq!(d["mcpServers"]["toolbox"]["args"][2], "serve");
    assert_eq!(d["preferences"]["quickEntryShortcut"], "off");
    let vs_text = std::fs::read_to_string(&vscode).unwrap();
    assert!(
        vs_text.starts_with("// .vscode/mcp.json: JSON with comments"),
        "{vs_text}"
    );
    let vs = jsonc_file(&vscode);
    assert_eq!(
        keys(&vs, "servers"),
        ["perplexity", "legacy-sse", "odd", "toolbox"]
    );
    assert_eq!(vs["servers"]["toolbox"]["type"], "stdio");
    assert_eq!(vs["servers"]["toolbox"]["args"][3], "--stdio");
    let g = jsonc_file(&gemini);
    assert_eq!(keys(&g, "mcpServers"), ["sseServer", "toolbox"]);
    assert_eq!(g["mcpServers"]["toolbox"]["args"][2], "serve");
    assert_eq!(g["theme"], "GitHub");
    let c = jsonc_file(&cursor);
    // Servers that sign in with OAuth move too, without the client's login.
    assert_eq!(keys(&c, "mcpServers"), ["toolbox"]);
    assert_eq!(
        before[&bad],
        std::fs::read(&bad).ok(),
        "the malformed file was touched"
    );
    assert_eq!(
        before[&h.home.join(".claude.json")],
        std::fs::read(h.home.join(".claude.json")).ok()
    );

    undo_restores(&h, path, &before);
}

/// Copies a directory tree.
/// `--apply --json`: one JSON object on stdout saying where the backups are, what was done and what
/// failed; undo reads those backups.
#[test]
fn apply_json_names_the_backups_and_what_was_done() {
    let h = homes();
    let cursor = h.home.join(".cursor/mcp.json");
    place("cursor-mcp.json", &cursor);
    let before = snapshot(&[cursor.clone(), config_path(&h)]);
    let out = mws_with(
        &h,
        "/nonexistent-bin",
        &["setup", "import", "--apply", "--json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let v: Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    let dir = PathBuf::from(v["backupDir"].as_str().expect("backupDir"));
    assert!(dir.is_dir(), "{v:#}");
    assert!(dir.starts_with(&h.home), "{v:#}");
    let done: Vec<&str> = v["done"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(done.iter().any(|l| l.starts_with("cursor: ")), "{v:#}");
    assert_eq!(v["errors"], serde_json::json!([]), "{v:#}");
    assert_ne!(
        std::fs::read(&cursor).ok(),
        before[&cursor],
        "cursor's file was not changed"
    );
    undo_restores(&h, "/nonexistent-bin", &before);
}

fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from).into_iter().map(Result::unwrap) {
        let dest = to.join(e.path().strip_prefix(from).unwrap());
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).unwrap();
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// The whole day-one story: `github` and `time` registered in Claude Code and Codex (Codex calls
/// github `gh`) and used directly in one session of each; `mws setup import --apply` then
/// `mws promote` lists their tools under mws's names. The config's other fields survive.
#[test]
fn setup_then_promote_lists_the_tools_used_before_mws() {
    let h = homes();
    claude(
        &h,
        &[
            "-s",
            "user",
            "-t",
            "http",
            "github",
            "http://127.0.0.1:9/mcp",
        ],
    );
    claude(
        &h,
        &["-s", "user", "time", "--", "/nonexistent/mcp-server-time"],
    );
    codex(&h, &["gh", "--url", "http://127.0.0.1:9/mcp"]);
    codex(&h, &["time", "--", "/nonexistent/mcp-server-time"]);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/transcripts/direct");
    copy_tree(
        &fixtures.join("claude/projects"),
        &h.home.join(".claude/projects"),
    );
    copy_tree(
        &fixtures.join("codex/sessions"),
        &h.codex_home.join("sessions"),
    );
    let config = config_path(&h);
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let before = "{\n  // nothing listens there: no catalog, nothing dropped\n  \"upstream\": {\"url\": \"http://127.0.0.1:9/mcp\"},\n  \"timeouts\": {\"listMs\": 200},\n  // the fixtures' dates stay in the window\n  \"promote\": {\"windowDays\": 36500, \"keepDays\": 36500}\n}\n";
    std::fs::write(&config, before).unwrap();
    let path = path_with_clis();

    let out = mws_with(&h, &path, &["setup", "import", "--apply"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let written = std::fs::read_to_string(&config).unwrap();
    assert!(
        written.starts_with("{\n  // nothing listens there"),
        "{written}"
    );
    // Day one: --apply itself ingested and promoted; the first session lists these tools.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("day one: ")
            && stdout.contains("2 tool(s) listed from the first session on"),
        "{stdout}"
    );
    let state = h.home.join(".local/state/mcp-working-set");
    let export = json_file(&state.join("working-set.json"));
    let mut day_one: Vec<&str> = export["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    day_one.sort();
    assert_eq!(day_one, ["github__create_issue", "time__get_current_time"]);
    let out = mws_with(&h, &path, &["promote", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let export = json_file(&state.join("working-set.json"));
    let mut tools: Vec<&str> = export["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    tools.sort();
    assert_eq!(
        tools,
        ["github__create_issue", "time__get_current_time"],
        "{written}\n{}",
        text(&out)
    );
}
