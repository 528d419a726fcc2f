//! Tests of where the clients' files are and of the one pass that reads them.

use super::*;

fn env(home: &Path, cwd: &Path) -> Env {
    Env {
        home: home.into(),
        cwd: cwd.into(),
        ..Env::default()
    }
}

#[test]
fn project_files_stop_short_of_home() {
    let files = locate(&env(Path::new("/h"), Path::new("/h/src/p")));
    let cursor: Vec<_> = files
        .iter()
        .filter(|(k, _)| matches!(k, Kind::Cursor(_)))
        .map(|(_, p)| p.to_str().unwrap())
        .collect();
    assert_eq!(
        cursor,
        [
            "/h/.cursor/mcp.json",
            "/h/src/p/.cursor/mcp.json",
            "/h/src/.cursor/mcp.json",
            "/.cursor/mcp.json"
        ]
    );
    assert!(files.contains(&(Kind::ClaudeMcpJson, "/h/.mcp.json".into())));
    assert!(files.contains(&(Kind::Codex(Scope::User), "/h/.codex/config.toml".into())));
}

#[test]
fn a_codex_project_file_counts_only_when_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("h");
    let (trusted, other) = (dir.path().join("t"), dir.path().join("o"));
    for d in [
        home.join(".codex"),
        trusted.join(".codex"),
        other.join(".codex"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    let user = format!(
        "[projects.{:?}]\ntrust_level = \"trusted\"\n",
        trusted.to_str().unwrap()
    );
    std::fs::write(home.join(".codex/config.toml"), user).unwrap();
    for d in [&trusted, &other] {
        std::fs::write(
            d.join(".codex/config.toml"),
            "[mcp_servers.p]\ncommand = \"x\"\n",
        )
        .unwrap();
    }
    let found = |cwd: &Path| scan(&env(&home, cwd)).found;
    assert_eq!(found(&trusted).len(), 1);
    assert_eq!(found(&trusted)[0].origin.scope, Scope::Project);
    let untrusted = scan(&env(&home, &other));
    assert!(untrusted.found.is_empty());
    assert!(untrusted.files.iter().any(|f| f.status == "untrusted"));
}

#[test]
fn a_claude_project_server_switched_off_in_claude_json_is_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let (home, proj) = (dir.path().join("h"), dir.path().join("p"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&proj).unwrap();
    let user = serde_json::json!({"projects": {proj.to_str().unwrap(): {"disabledMcpjsonServers": ["a"]}}});
    std::fs::write(home.join(".claude.json"), user.to_string()).unwrap();
    let mcp = r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}"#;
    std::fs::write(proj.join(".mcp.json"), mcp).unwrap();
    let out = scan(&env(&home, &proj));
    let flags: Vec<_> = out
        .found
        .iter()
        .map(|f| (f.name.as_str(), f.flags.clone()))
        .collect();
    let unapproved = Flag::Unapproved(
        "the folder's trust dialog was never accepted (`hasTrustDialogAccepted`)".into(),
    );
    assert_eq!(
        flags,
        [("a", vec![Flag::Disabled]), ("b", vec![unapproved])]
    );
}

#[test]
fn variables_move_the_user_files() {
    let mut e = env(Path::new("/h"), Path::new("/w"));
    e.codex_home = Some("/ch".into());
    e.claude_config_dir = Some("/cc".into());
    let files = locate(&e);
    assert_eq!(files[0], (Kind::ClaudeUser, "/cc/.claude.json".into()));
    assert!(files.contains(&(Kind::Codex(Scope::User), "/ch/config.toml".into())));
}

#[test]
fn missing_files_are_fine_and_bad_ones_do_not_stop_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path();
    std::fs::write(
        home.join(".claude.json"),
        "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}",
    )
    .unwrap();
    std::fs::create_dir_all(home.join(".codex")).unwrap();
    std::fs::write(home.join(".codex/config.toml"), "[mcp_servers.b\n").unwrap();
    let out = scan(&env(home, home));
    assert_eq!(out.found.len(), 1);
    assert_eq!(out.errors.len(), 1);
    assert_eq!(out.errors[0].line, Some(1));
    let statuses: Vec<_> = out.files.iter().map(|f| f.status).collect();
    assert_eq!(statuses, ["read", "error"]);
}

#[test]
fn a_project_file_git_tracks_is_flagged_with_its_repository() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (home, repo) = (root.join("h"), root.join("repo"));
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(repo.join(".cursor")).unwrap();
    let git = |args: &[&str]| {
        let ok = std::process::Command::new("git")
            .arg("-C")
            .arg(&repo)
            .args(args)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(ok.success(), "git {args:?}");
    };
    git(&["init", "-q"]);
    let file = repo.join(".cursor/mcp.json");
    std::fs::write(&file, r#"{"mcpServers": {"c": {"command": "x"}}}"#).unwrap();
    assert_eq!(tracked_in(&file), None, "not added yet");
    git(&["add", ".cursor/mcp.json"]);
    assert_eq!(tracked_in(&file), Some(repo.clone()));
    let out = scan(&env(&home, &repo));
    assert_eq!(out.found[0].flags, [Flag::Tracked(repo)]);
}
