//! Tests of `apply` on a temp HOME without client CLIs: a file changed after the plan was made is
//! left alone with nothing backed up, and a second `--apply` finds mws registered and does nothing.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::json;

use super::config::{UPSTREAM_SERVER_NAME, config_text};
use super::*;
use crate::setup::plan;

fn target(dir: &Path) -> Target {
    Target {
        config_path: dir.join("c.json"),
        state_dir: dir.join("state"),
        server_name: "toolbox".into(),
        url: "http://127.0.0.1:4484/mcp".into(),
        stdio: vec!["mws".into(), "serve".into(), "--stdio".into()],
        via: Via::Http,
    }
}

fn env(home: &Path) -> sources::Env {
    sources::Env {
        home: home.into(),
        cwd: home.into(),
        ..sources::Env::default()
    }
}

#[test]
fn a_file_changed_since_the_plan_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let file = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, r#"{"mcpServers": {"a": {"command": "x"}}}"#).unwrap();
    let env = env(&home);
    let plan = plan::plan(sources::scan(&env));
    let edited = r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}"#;
    std::fs::write(&file, edited).unwrap();
    let t = target(dir.path());
    let report = apply(&plan, &env, &t, &Programs::default(), "20261201T000000Z").unwrap();
    assert_eq!(
        report.errors,
        [format!(
            "{}: changed since it was read; a stay with cursor; run `mws setup import --apply` again",
            file.display()
        )]
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), edited);
    assert!(!t.config_path.exists());
    assert!(!t.state_dir.join(crate::setup::backup::DIR).exists());
}

#[test]
fn a_second_apply_finds_mws_and_does_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let file = home.join(".gemini/settings.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "{\n  // mine\n  \"mcpServers\": {\"a\": {\"command\": \"x\"}}\n}\n",
    )
    .unwrap();
    let env = env(&home);
    let t = target(dir.path());
    let first = plan::plan_for(sources::scan(&env), Some(&t.url));
    let report = apply(&first, &env, &t, &Programs::default(), "20261201T000000Z").unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "{\n  // mine\n  \"mcpServers\": {\n    \"toolbox\": {\n      \"httpUrl\": \"http://127.0.0.1:4484/mcp\"\n    }\n  }\n}\n"
    );
    let second = plan::plan_for(sources::scan(&env), Some(&t.url));
    assert_eq!(second.stays[0].reason, "this is mws itself");
    let report = apply(&second, &env, &t, &Programs::default(), "20261201T000001Z").unwrap();
    assert_eq!(
        report.done,
        ["nothing to apply: no server to put behind mws"]
    );
}

/// A config has `upstream` or `servers`: `--apply` folds a single `upstream` into `servers`.
#[test]
fn the_single_upstream_goes_into_servers() {
    let github = BTreeMap::from([(
        "github".to_string(),
        json!({"url": "https://api.example.com/mcp"}),
    )]);
    let parse =
        |t: &str| -> Value { serde_json::from_str(&crate::config::jsonc::strip(t)).unwrap() };
    // mws init's placeholder: dropped.
    let t = config_text(
        "{\n  // mine\n  \"upstream\": {\"url\": \"http://127.0.0.1:4483/mcp\"}\n}\n",
        &github,
        &[],
    )
    .unwrap()
    .0;
    assert!(t.contains("// mine"), "{t}");
    assert_eq!(
        parse(&t),
        json!({"servers": {"github": {"url": "https://api.example.com/mcp"}}})
    );
    // The same server a client had: that entry adopts the history.
    let t = config_text(
        "{\"upstream\": {\"url\": \"https://api.example.com/mcp\"}}",
        &github,
        &[],
    )
    .unwrap()
    .0;
    assert_eq!(
        parse(&t)["servers"]["github"]["adoptsUpstreamHistory"],
        json!(true)
    );
    assert!(parse(&t).get("upstream").is_none(), "{t}");
    // Another server: kept as `main`, adopting the history.
    let t = config_text(
        "{\"upstream\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}}",
        &github,
        &[],
    )
    .unwrap()
    .0;
    assert_eq!(
        parse(&t)["servers"][UPSTREAM_SERVER_NAME],
        json!({"command": "uvx", "args": ["mcp-server-time"], "adoptsUpstreamHistory": true})
    );
    crate::config::parse(&t).expect("the written config loads");
}

/// Writes `text` at `home/.cursor/mcp.json` and returns the path.
fn cursor_file(home: &Path, text: &str) -> std::path::PathBuf {
    let file = home.join(".cursor/mcp.json");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, text).unwrap();
    file
}

#[test]
fn a_read_only_client_file_is_refused_and_keeps_its_servers() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let text = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
    let file = cursor_file(&home, text);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o444)).unwrap();
    let env = env(&home);
    let t = target(dir.path());
    let plan = plan::plan_for(sources::scan(&env), Some(&t.url));
    let report = apply(&plan, &env, &t, &Programs::default(), "20261201T000000Z").unwrap();
    assert_eq!(
        report.errors,
        [format!(
            "cursor: {f}: it is read-only (mode 444): mws does not change a file you made \
             read-only; run `chmod u+w {f}` to let it; a stay with cursor",
            f = file.display()
        )]
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert!(!t.config_path.exists(), "nothing moved, nothing written");
}

/// Another server already called `toolbox` that stays (switched off): the client is stopped,
/// none of its servers leave.
#[test]
fn a_client_with_another_server_under_mws_name_keeps_all_its_servers() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let text = r#"{"mcpServers": {"a": {"command": "x"}, "toolbox": {"command": "mine", "disabled": true}}}"#;
    let file = cursor_file(&home, text);
    let env = env(&home);
    let t = target(dir.path());
    let plan = plan::plan_for(sources::scan(&env), Some(&t.url));
    let report = apply(&plan, &env, &t, &Programs::default(), "20261201T000000Z").unwrap();
    assert_eq!(
        report.errors,
        [format!(
            "cursor: {} already has a server named `toolbox` that is not mws; set `serverName` \
             in {} to a name cursor does not use (or rename that server), then run `mws setup \
             import --apply` again; a stay with cursor",
            file.display(),
            t.config_path.display()
        )]
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

/// The config mws would write is loaded before any client is touched.
#[test]
fn a_config_that_would_not_load_changes_no_client() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let text = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
    let file = cursor_file(&home, text);
    let env = env(&home);
    let t = target(dir.path());
    std::fs::write(&t.config_path, r#"{"listen": {"host": "0.0.0.0"}}"#).unwrap();
    let plan = plan::plan_for(sources::scan(&env), Some(&t.url));
    let err = apply(&plan, &env, &t, &Programs::default(), "20261201T000000Z").unwrap_err();
    assert!(
        err.starts_with(&format!(
            "{}: the config with these servers would not load (`listen.host`",
            t.config_path.display()
        )),
        "{err}"
    );
    assert!(err.ends_with("so no client is changed"), "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn a_second_apply_while_one_runs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    cursor_file(&home, r#"{"mcpServers": {"a": {"command": "x"}}}"#);
    let env = env(&home);
    let t = target(dir.path());
    let plan = plan::plan_for(sources::scan(&env), Some(&t.url));
    let _running = crate::setup::lock::hold(&t.state_dir).unwrap();
    let err = apply(&plan, &env, &t, &Programs::default(), "20261201T000000Z").unwrap_err();
    assert!(
        err.starts_with("another `mws setup import --apply`"),
        "{err}"
    );
    assert!(!t.config_path.exists());
}

/// By default a client starts mws itself; a linked file is written through its link.
#[test]
fn stdio_registration_through_a_linked_file() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let real = dir.path().join("dotfiles/mcp.json");
    std::fs::create_dir_all(real.parent().unwrap()).unwrap();
    std::fs::write(&real, r#"{"mcpServers": {"a": {"command": "x"}}}"#).unwrap();
    std::fs::create_dir_all(home.join(".cursor")).unwrap();
    let link = home.join(".cursor/mcp.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let env = env(&home);
    let t = Target {
        via: Via::Stdio,
        ..target(dir.path())
    };
    let plan = plan::plan_for(sources::scan(&env), Some(&t.url));
    let report = apply(&plan, &env, &t, &Programs::default(), "20261201T000000Z").unwrap();
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&real).unwrap()).unwrap();
    assert_eq!(
        v["mcpServers"],
        json!({"toolbox": {"command": "mws", "args": ["serve", "--stdio"]}})
    );
    assert!(
        report
            .done
            .last()
            .unwrap()
            .contains("each starts `mws serve --stdio` itself"),
        "{:?}",
        report.done
    );
}
