//! Day one after `mws setup import --apply`, with nothing else run (issue 28): in one temp HOME,
//! server-everything and mcp-server-time are registered by the real `claude mcp add` and `codex
//! mcp add`; a copy of mws under `~/bin` runs the import as a user would. Then a fresh Claude
//! Code and a fresh `codex exec` (under `approval_policy = "never"`), each starting mws itself
//! over stdio, call a read-only tool and a tool of the second server through mws, and the calls
//! land in mws's `state.db`. Last, that copy of mws is removed: the client only says the server
//! failed, so `mws doctor` and the next `mws` command must say why.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::json;

use super::clients::{CODEX_UNKNOWN_MODEL, Claude, Codex};
use super::model::{self, FINAL_PREFIX, MockModel, Recorded};
use super::mws::calls_in;
use super::peers::{Proc, clean_command, peer, tail};
use super::{SERIAL, SERVER, Scratch, codex_mcp_calls, marker, script};

/// The read-only tool (server-everything marks `echo` readOnlyHint: true) and the second
/// server's tool, under mws's names.
const ECHO: &str = "everything__echo";
const TIME: &str = "time__get_current_time";
/// Longest one mws command may take (doctor starts both servers).
const MWS_TIMEOUT: Duration = Duration::from_secs(120);

/// One mws run: exit code, stdout, stderr.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs `program ARGS` as the user of `home` would, in `project`, with the test peers' `claude`
/// and `codex` first on PATH.
fn run_mws(program: &Path, home: &Path, project: &Path, label: &str, args: &[&str]) -> Ran {
    let bin = peer(".bin/claude");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut c: Command = clean_command(program);
    c.current_dir(project)
        .env("HOME", home)
        .env("PATH", path)
        .args(args);
    let logs = home.parent().unwrap();
    let mut p = Proc::spawn(label, c, logs);
    let status = p.wait(MWS_TIMEOUT);
    Ran {
        code: status.code(),
        stdout: p.stdout(),
        stderr: p.stderr(),
    }
}

/// The input of the last Responses request since `before`: what the model got back.
fn last_input(reqs: &[Recorded]) -> String {
    reqs.iter()
        .rfind(|r| r.path == "/v1/responses")
        .expect("no /v1/responses request")
        .body["input"]
        .to_string()
}

#[test]
fn after_apply_both_clients_call_two_servers_through_mws_and_a_missing_mws_is_named() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("after-apply");
    let root = dir.path().canonicalize().unwrap();
    let home = root.join("home");
    let project = home.join("proj");
    let mock = MockModel::start(script("call_tool", json!({})), &model::log_path(&root));
    let claude = Claude::in_home(&home, &project, &root, &mock.url());
    let codex = Codex::in_home(&home, &project, &root, CODEX_UNKNOWN_MODEL, &mock.url());
    let everything = crate::support::server_everything();
    let everything = everything.to_str().unwrap();
    let time = crate::support::mcp_server_time();
    let time = time.to_str().unwrap();
    let time_args = ["--local-timezone", "UTC"];
    claude.mcp(
        "claude-add-everything",
        &[
            "add",
            "-s",
            "user",
            "everything",
            "--",
            "node",
            everything,
            "stdio",
        ],
    );
    claude.mcp(
        "claude-add-time",
        &[
            "add",
            "-s",
            "user",
            "time",
            "--",
            time,
            time_args[0],
            time_args[1],
        ],
    );
    codex.mcp(
        "codex-add-everything",
        &["add", "everything", "--", "node", everything, "stdio"],
    );
    codex.mcp(
        "codex-add-time",
        &["add", "time", "--", time, time_args[0], time_args[1]],
    );

    // The user's own mws: the registration names the program that ran the import.
    let mws = home.join("bin/mws");
    std::fs::create_dir_all(mws.parent().unwrap()).unwrap();
    // A hard link where it can be (the same file system): a copy is some 200 MB.
    if std::fs::hard_link(env!("CARGO_BIN_EXE_mws"), &mws).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_mws"), &mws).unwrap();
    }
    let apply = run_mws(
        &mws,
        &home,
        &project,
        "mws-apply",
        &["setup", "import", "--apply"],
    );
    assert_eq!(
        apply.code,
        Some(0),
        "{}\n{}",
        apply.stdout,
        tail(&apply.stderr)
    );
    for line in [
        "claude-code: mws registered as `toolbox` (user scope)",
        "codex: mws registered as `toolbox` (user scope)",
        "day one: ",
    ] {
        assert!(apply.stdout.contains(line), "{line}: {}", apply.stdout);
    }
    let state_dir = home.join(".local/state/mcp-working-set");

    // Claude Code: the read-only tool through call_read_only_tool, the second server's through
    // call_tool (each allowed by name, as a user allows them).
    let mark = marker("after-apply-claude");
    let claude_runs = [
        (
            "call_read_only_tool",
            ECHO,
            json!({"message": mark}),
            format!("Echo: {mark}"),
        ),
        (
            "call_tool",
            TIME,
            json!({"timezone": "UTC"}),
            "datetime".into(),
        ),
    ];
    for (n, (meta, tool, arguments, want)) in claude_runs.into_iter().enumerate() {
        mock.set_script(script(meta, json!({"name": tool, "arguments": arguments})));
        let allowed = format!("mcp__{SERVER}__{meta}");
        let run = claude.print(&format!("claude-after-apply-{n}"), "use the tool", &allowed);
        let answer = run.result["result"].as_str().unwrap_or_default();
        assert!(
            answer.starts_with(FINAL_PREFIX)
                && answer.contains(&want)
                && answer.contains("[is_error=false]"),
            "claude, {meta} {tool}: the answer lacks the server's result ({want}): {}",
            run.result
        );
    }

    // Codex under approval_policy = "never", nothing approved: both through the read-only path.
    let mark = marker("after-apply-codex");
    let codex_runs = [
        (ECHO, json!({"message": mark}), format!("Echo: {mark}")),
        (TIME, json!({"timezone": "UTC"}), "datetime".into()),
    ];
    for (n, (tool, arguments, want)) in codex_runs.into_iter().enumerate() {
        mock.set_script(script(
            "call_read_only_tool",
            json!({"name": tool, "arguments": arguments}),
        ));
        let before = mock.requests().len();
        let run = codex.exec(&format!("codex-after-apply-{n}"), "use the tool");
        let reqs = mock.requests().split_off(before);
        assert!(
            last_input(&reqs).contains(&want),
            "codex, {tool}: the model never got the server's result ({want})"
        );
        let items = codex_mcp_calls(&run.rollout);
        assert!(
            items
                .iter()
                .any(|i| i["tool"] == "call_read_only_tool" && i["status"] == "completed"),
            "codex, {tool}: {items:?}"
        );
    }

    // mws recorded each call under the tool it ran: one from each client.
    for tool in [ECHO, TIME] {
        let rows = calls_in(&state_dir, tool);
        assert_eq!(rows.len(), 2, "{tool}: {rows:?}");
        assert!(rows.iter().all(|r| r.ok), "{tool}: {rows:?}");
    }

    // mws is not startable any more (removed; an upgrade moved it): the clients only say so.
    std::fs::remove_file(&mws).unwrap();
    let (listed, _) = claude.mcp("claude-mcp-list-broken", &["list"]);
    let line = listed
        .lines()
        .find(|l| l.starts_with(&format!("{SERVER}:")))
        .unwrap_or_else(|| panic!("no {SERVER} in `claude mcp list`:\n{listed}"));
    assert!(
        line.contains("Failed to connect") && line.contains("ENOENT"),
        "{listed}"
    );
    // Codex starts the session without the server and says nothing of it; the model only
    // finds the tool missing.
    let exec = codex.exec_proc("codex-broken", "use the tool");
    assert!(
        exec.stdout().contains("unsupported call: mcp__toolbox"),
        "{}",
        exec.stdout()
    );

    // `mws doctor` and the next mws command say why, naming the file and the program.
    let real = PathBuf::from(env!("CARGO_BIN_EXE_mws"));
    let why = format!(
        "`{SERVER}` there starts {}, which does not exist",
        mws.display()
    );
    let doctor = run_mws(&real, &home, &project, "mws-doctor-broken", &["doctor"]);
    assert_eq!(doctor.code, Some(1), "{}", doctor.stdout);
    assert!(
        doctor
            .stdout
            .contains("FAIL  registration  2 client registration(s) of mws cannot start"),
        "{}",
        doctor.stdout
    );
    for file in [home.join(".claude.json"), home.join(".codex/config.toml")] {
        let detail = format!("{}: {why}", file.display());
        assert!(
            doctor.stdout.contains(&detail),
            "{detail}:\n{}",
            doctor.stdout
        );
    }
    assert!(
        doctor
            .stdout
            .contains("fix: put mws back where the registration says"),
        "{}",
        doctor.stdout
    );
    let report = run_mws(&real, &home, &project, "mws-report-broken", &["report"]);
    let warning = format!(
        "mws: warning: {}: {why}: that client cannot start mws and has no mws tools (`mws doctor` \
         says how to fix it)",
        home.join(".claude.json").display()
    );
    assert!(report.stderr.contains(&warning), "{}", report.stderr);

    // mws back, its config broken: Claude Code shows the server failed; doctor and every
    // command name the file and the place.
    if std::fs::hard_link(env!("CARGO_BIN_EXE_mws"), &mws).is_err() {
        std::fs::copy(env!("CARGO_BIN_EXE_mws"), &mws).unwrap();
    }
    let config = home.join(".config/mcp-working-set/config.json");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(&config, text.replacen('{', "{\n  \"serverName\": 7,", 1)).unwrap();
    let (listed, _) = claude.mcp("claude-mcp-list-bad-config", &["list"]);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with(&format!("{SERVER}:")) && l.contains("Failed")),
        "{listed}"
    );
    let doctor = run_mws(&real, &home, &project, "mws-doctor-bad-config", &["doctor"]);
    assert_eq!(doctor.code, Some(1), "{}", doctor.stdout);
    let bad = format!(
        "FAIL  config        {}:2:17: not valid: `serverName`: expected a string",
        config.display()
    );
    assert!(doctor.stdout.contains(&bad), "{}", doctor.stdout);
    // Not `mws init --force`, which would drop the servers the import moved there.
    assert!(
        doctor
            .stdout
            .contains("(not `mws init --force`: it would drop the config's `servers`"),
        "{}",
        doctor.stdout
    );
    let report = run_mws(&real, &home, &project, "mws-report-bad-config", &["report"]);
    assert_eq!(report.code, Some(2), "{}", report.stderr);
    assert!(
        report
            .stderr
            .starts_with(&format!("mws: {}:2:", config.display())),
        "{}",
        report.stderr
    );
}
