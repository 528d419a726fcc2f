//! Tests of `apply` on a temp HOME without client CLIs: a file changed after the plan was made is
//! left alone with nothing backed up, and a second `--apply` finds mws registered and does nothing.

use std::path::Path;

use super::*;
use crate::setup::plan;

fn target(dir: &Path) -> Target {
    Target {
        config_path: dir.join("c.json"),
        state_dir: dir.join("state"),
        server_name: "toolbox".into(),
        url: "http://127.0.0.1:4484/mcp".into(),
        stdio: vec!["mws".into(), "serve".into(), "--stdio".into()],
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
    assert!(!t.state_dir.join(backup::DIR).exists());
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
    )
    .unwrap();
    assert!(t.contains("// mine"), "{t}");
    assert_eq!(
        parse(&t),
        json!({"servers": {"github": {"url": "https://api.example.com/mcp"}}})
    );
    // The same server a client had: that entry adopts the history.
    let t = config_text(
        "{\"upstream\": {\"url\": \"https://api.example.com/mcp\"}}",
        &github,
    )
    .unwrap();
    assert_eq!(
        parse(&t)["servers"]["github"]["adoptsUpstreamHistory"],
        json!(true)
    );
    assert!(parse(&t).get("upstream").is_none(), "{t}");
    // Another server: kept as `main`, adopting the history.
    let t = config_text(
        "{\"upstream\": {\"command\": \"uvx\", \"args\": [\"mcp-server-time\"]}}",
        &github,
    )
    .unwrap();
    assert_eq!(
        parse(&t)["servers"][UPSTREAM_SERVER_NAME],
        json!({"command": "uvx", "args": ["mcp-server-time"], "adoptsUpstreamHistory": true})
    );
    crate::config::parse(&t).expect("the written config loads");
}
