//! `mws doctor`: each problem a user can have, and the exact lines that tell them what to do.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::cli::mws;

/// A loopback port that nothing listens on (bound, then released).
pub fn closed_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// A temp home with a private state dir and a config; `extra` is spliced into the config object.
pub(crate) struct Setup {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) config: PathBuf,
    pub(crate) state: PathBuf,
}

pub(crate) fn setup(upstream_port: u16, listen_port: u16, extra: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o700)).unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"upstream": {{"url": "http://127.0.0.1:{upstream_port}/mcp"}},
                "listen": {{"port": {listen_port}}},
                "stateDir": "{}", "timeouts": {{"listMs": 300}}{extra}}}"#,
            state.display()
        ),
    )
    .unwrap();
    Setup { dir, config, state }
}

pub(crate) fn doctor(config: &Path, home: &Path, json: bool) -> Output {
    let mut cmd = mws();
    cmd.arg("--config").arg(config).arg("doctor");
    if json {
        cmd.arg("--json");
    }
    for var in [
        "MWS_CONFIG",
        "XDG_CONFIG_HOME",
        "XDG_STATE_HOME",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
    ] {
        cmd.env_remove(var);
    }
    cmd.env("HOME", home).output().unwrap()
}

/// The output's lines with runs of spaces collapsed (the name column's width depends on which
/// checks ran).
pub(crate) fn lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

/// Asserts that `want` appears as consecutive lines.
pub(crate) fn has(out: &Output, want: &[String]) {
    let got = lines(out);
    assert!(
        got.windows(want.len()).any(|w| w == want),
        "want\n{}\nin\n{}",
        want.join("\n"),
        got.join("\n")
    );
}

#[test]
fn missing_config_says_run_init() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("nope/config.json");
    let out = doctor(&missing, home.path(), false);
    let m = missing.display();
    has(
        &out,
        &[
            format!("warn config no config file at {m} (from --config): using the defaults"),
            format!(
                "fix: run `mws init` to write a commented config at {m}, then set \"upstream\" in it"
            ),
        ],
    );
    let state = home.path().join(".local/state/mcp-working-set");
    has(
        &out,
        &[
            format!("warn state dir {} does not exist yet", state.display()),
            "fix: run `mws init` (it creates the state dir and the database)".into(),
        ],
    );
}

#[test]
fn invalid_config_fails_and_names_the_field() {
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("config.json");
    std::fs::write(
        &path,
        r#"{"upstream": {"url": "http://127.0.0.1:1/mcp"}, "listen": {"prot": 1}}"#,
    )
    .unwrap();
    let out = doctor(&path, home.path(), false);
    assert_eq!(out.status.code(), Some(1));
    let p = path.display();
    has(
        &out,
        &[
            format!(
                "FAIL config {p}:1:65: not valid: `listen.prot`: unknown field, expected one of `host`, `port`"
            ),
            format!(
                "fix: edit {p} where the message points (`mws init --force` rewrites it with the defaults)"
            ),
        ],
    );
}

#[test]
fn broken_database_says_move_it_aside() {
    let s = setup(closed_port(), closed_port(), r#", "transcripts": []"#);
    let db = s.state.join("state.db");
    std::fs::write(&db, b"not a database at all\n".repeat(100)).unwrap();
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = doctor(&s.config, s.dir.path(), false);
    assert_eq!(out.status.code(), Some(1));
    let d = db.display();
    has(
        &out,
        &[
            format!("FAIL database {d} is not a readable SQLite database: file is not a database"),
            format!(
                "fix: move it aside and start a fresh one: `mv {d} {d}.broken && mws init` (the call \
                 history in it is lost; `sqlite3 {d}.broken .recover` may save some of it)"
            ),
        ],
    );
    has(
        &out,
        &["ok permissions 1 state file(s), all 0600".to_string()],
    );
}

#[test]
fn unreachable_upstream_says_start_it() {
    let port = closed_port();
    let s = setup(port, closed_port(), r#", "transcripts": []"#);
    let out = doctor(&s.config, s.dir.path(), false);
    assert_eq!(out.status.code(), Some(1));
    let got = lines(&out);
    let at = got
        .iter()
        .position(|l| l.starts_with("FAIL upstream"))
        .unwrap_or_else(|| panic!("no upstream failure in\n{}", got.join("\n")));
    assert_eq!(
        got[at],
        format!("FAIL upstream http://127.0.0.1:{port}/mcp: not reachable")
    );
    // The next lines: the client's own error (its wording is the upstream module's), what the
    // proxy does meanwhile, and the fix.
    has(
        &out,
        &[
            "with no catalog.json either, clients see only search_tools and call_tool".into(),
            format!(
                "fix: start the upstream MCP server, or set \"upstream\": {{\"url\": ...}} in {} to \
                 where it listens",
                s.config.display()
            ),
        ],
    );

    // With a catalog.json the detail says what the proxy serves instead.
    let catalog = s.state.join("catalog.json");
    std::fs::copy(crate::report::fixture("catalogs/time.json"), &catalog).unwrap();
    std::fs::set_permissions(&catalog, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = doctor(&s.config, s.dir.path(), false);
    has(
        &out,
        &["meanwhile the proxy serves the last good catalog from catalog.json (2 tools)".into()],
    );
}

/// Serves `answer` to each of up to `n` connections, then stops (after 10 s at the latest).
pub(crate) fn fake_server(answer: &'static str, n: usize) -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.set_nonblocking(true).unwrap();
    let port = l.local_addr().unwrap().port();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let t = std::thread::spawn(move || {
        let mut served = 0;
        while served < n && std::time::Instant::now() < deadline {
            let Ok((mut c, _)) = l.accept() else {
                std::thread::sleep(std::time::Duration::from_millis(10));
                continue;
            };
            served += 1;
            c.set_nonblocking(false).unwrap();
            c.set_read_timeout(Some(std::time::Duration::from_secs(2)))
                .unwrap();
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            let _ = c.write_all(answer.as_bytes());
        }
    });
    (port, t)
}

#[test]
fn port_in_use_by_another_program_says_pick_another() {
    // Two requests reach it (discover, then initialize); it answers 404 to both.
    let (port, t) = fake_server("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 2);
    let s = setup(closed_port(), port, r#", "transcripts": []"#);
    let out = doctor(&s.config, s.dir.path(), false);
    assert_eq!(out.status.code(), Some(1));
    has(
        &out,
        &[
            format!(
                "FAIL port 127.0.0.1:{port} is in use by another program (it answered: HTTP/1.1 404 Not Found)"
            ),
            format!(
                "fix: stop that program, or set \"listen\": {{\"port\": ...}} in {} to a free port \
                 (and register that port with your clients)",
                s.config.display()
            ),
        ],
    );
    t.join().unwrap();
}

#[test]
fn port_held_by_mws_is_fine_and_hints_use_the_config() {
    let (port, t) = fake_server(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n\
         {\"jsonrpc\":\"2.0\",\"id\":\"mws-doctor\",\"result\":{\"_meta\":{\"io.modelcontextprotocol/serverInfo\":{\"name\":\"mcp-working-set\",\"version\":\"0.1.0\"}}}}",
        1,
    );
    let s = setup(
        closed_port(),
        port,
        r#", "serverName": "tools2", "transcripts": []"#,
    );
    let out = doctor(&s.config, s.dir.path(), true);
    t.join().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let port_check = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "port")
        .unwrap();
    assert_eq!(port_check["status"], "ok");
    assert_eq!(
        port_check["summary"],
        format!("127.0.0.1:{port}: mws is already serving there")
    );
    assert_eq!(
        v["hints"]["claudeCode"],
        format!("claude mcp add --transport http tools2 http://127.0.0.1:{port}/mcp")
    );
    assert_eq!(
        v["hints"]["codex"],
        format!("[mcp_servers.tools2]\nurl = \"http://127.0.0.1:{port}/mcp\"")
    );
    // The upstream is not there: the run fails, and the JSON says so.
    assert_eq!(v["ok"], false);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn healthy_state_and_transcripts_are_reported() {
    let s = setup(
        closed_port(),
        closed_port(),
        "", // transcripts filled in below
    );
    let root = s.dir.path().join("claude/projects/-home-dev-app");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("a.jsonl"), "{}\n").unwrap();
    std::fs::write(root.join("notes.txt"), "not a transcript\n").unwrap();
    let text = std::fs::read_to_string(&s.config).unwrap().replace(
        r#""listMs": 300}"#,
        &format!(
            r#""listMs": 300}}, "transcripts": [{{"type": "claude-code", "root": "{}"}}, {{"type": "codex", "root": "{}"}}]"#,
            s.dir.path().join("claude/projects").display(),
            s.dir.path().join("codex/sessions").display()
        ),
    );
    std::fs::write(&s.config, text).unwrap();
    drop(mws::store::Store::open(&s.state.join("state.db")).unwrap());
    let out = doctor(&s.config, s.dir.path(), false);
    let got = lines(&out);
    let db = s.state.join("state.db");
    let version = mws::store::doctor::latest_schema_version();
    has(
        &out,
        &[format!(
            "ok database {}: integrity ok, schema version {version}",
            db.display()
        )],
    );
    let claude = s.dir.path().join("claude/projects");
    let line = got
        .iter()
        .find(|l| l.starts_with("ok transcripts claude-code"))
        .unwrap_or_else(|| panic!("{}", got.join("\n")));
    assert!(
        line.starts_with(&format!(
            "ok transcripts claude-code: {}: 1 file(s), newest ",
            claude.display()
        )),
        "{line}"
    );
    assert!(line.ends_with("(within the hour)"), "{line}");
    has(
        &out,
        &[format!(
            "warn transcripts codex: {} not found",
            s.dir.path().join("codex/sessions").display()
        )],
    );
    has(&out, &[format!("ok state dir {}", s.state.display())]);
}

/// Kills the child when dropped, so a failing assertion does not leave `mws serve` running.
struct Child(std::process::Child);
impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn port_held_by_a_running_mws_serve_is_recognised() {
    let port = closed_port();
    let s = setup(closed_port(), port, r#", "transcripts": []"#);
    let _serve = Child(
        mws()
            .arg("--config")
            .arg(&s.config)
            .arg("serve")
            .env("HOME", s.dir.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "mws serve did not listen on {port}"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let out = doctor(&s.config, s.dir.path(), false);
    has(
        &out,
        &[format!(
            "ok port 127.0.0.1:{port}: mws is already serving there"
        )],
    );
}

#[test]
fn reachable_upstream_shows_its_era() {
    let s = setup(closed_port(), closed_port(), r#", "transcripts": []"#);
    // The built-in demo upstream, a stdio child, answers on the modern era.
    std::fs::write(
        &s.config,
        format!(
            r#"{{"upstream": {{"command": "{}", "args": ["demo-upstream"]}}, "stateDir": "{}", "listen": {{"port": {}}}, "transcripts": []}}"#,
            env!("CARGO_BIN_EXE_mws"),
            s.state.display(),
            closed_port()
        ),
    )
    .unwrap();
    let out = doctor(&s.config, s.dir.path(), false);
    let got = lines(&out);
    let line = got
        .iter()
        .find(|l| l.starts_with("ok upstream"))
        .unwrap_or_else(|| panic!("{}", got.join("\n")));
    let want = format!(
        "ok upstream {} demo-upstream: reachable, 2026-07-28 (stateless), server ",
        env!("CARGO_BIN_EXE_mws")
    );
    assert!(line.starts_with(&want), "{line}");
    assert!(line.ends_with(" tools"), "{line}");
}
