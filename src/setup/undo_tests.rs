//! Tests of `undo` on sets written by hand the way `--apply` writes them: byte-identical
//! restores, entry-by-entry undo of files changed since (later additions kept, changed entries
//! left with the reason), `--force`'s announcement, links kept.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::*;
use crate::setup::backup::Set;

const STAMP: &str = "20261201T100000Z";

/// `apply` in miniature: saves `file` as it is, writes `after`, records the changes, finishes.
fn applied(state: &Path, file: &Path, after: &str, changes: &[(&[&str], &str, Action)]) {
    let mut set = Set::create(state, STAMP).unwrap();
    let before = std::fs::read(file).ok();
    set.save(file, before.as_deref()).unwrap();
    super::super::write::keeping_mode(file, after.as_bytes()).unwrap();
    for (at, name, action) in changes {
        set.record(file, at, name, *action);
    }
    set.finish().unwrap();
}

fn json(p: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn quiet() -> impl FnMut(&str) {
    |_: &str| {}
}

#[test]
fn unchanged_files_come_back_byte_for_byte_and_new_ones_go() {
    let dir = tempfile::tempdir().unwrap();
    let (state, a, b) = (
        dir.path().join("state"),
        dir.path().join("a.json"),
        dir.path().join("new.json"),
    );
    std::fs::write(&a, b"{\"x\": 1}").unwrap();
    std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut set = Set::create(&state, STAMP).unwrap();
    set.save(&a, Some(b"{\"x\": 1}")).unwrap();
    set.save(&b, None).unwrap();
    std::fs::write(&a, b"changed").unwrap();
    std::fs::write(&b, b"made").unwrap();
    set.finish().unwrap();

    let out = undo(&state, false, &mut quiet()).unwrap();
    assert_eq!(
        out.done,
        [Done::Restored(a.clone()), Done::Removed(b.clone())]
    );
    assert!(out.left.is_empty(), "{:?}", out.left);
    assert_eq!(std::fs::read(&a).unwrap(), b"{\"x\": 1}");
    let mode = std::fs::metadata(&a).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o644);
    assert!(!b.exists());
    let again = undo(&state, false, &mut quiet()).unwrap_err().to_string();
    assert!(again.starts_with("nothing to undo"), "{again}");
}

/// Claude Code rewrote the file and the user added a server since: undo takes back only what
/// `--apply` did.
#[test]
fn a_file_changed_since_is_undone_entry_by_entry_keeping_later_additions() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let file = dir.path().join(".claude.json");
    std::fs::write(
        &file,
        r#"{"mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}}, "numStartups": 1}"#,
    )
    .unwrap();
    let servers: &[&str] = &["mcpServers"];
    applied(
        &state,
        &file,
        r#"{"mcpServers": {"toolbox": {"command": "mws", "args": ["serve", "--stdio"]}}, "numStartups": 1}"#,
        &[
            (servers, "time", Action::Removed),
            (servers, "toolbox", Action::Added),
        ],
    );
    // Later: the app rewrites its state, the user adds a server with `claude mcp add`.
    std::fs::write(
        &file,
        r#"{"numStartups": 7, "mcpServers": {"toolbox": {"args": ["serve", "--stdio"], "command": "mws"}, "added-later": {"command": "x"}}}"#,
    )
    .unwrap();
    let out = undo(&state, false, &mut quiet()).unwrap();
    assert!(out.left.is_empty(), "{:?}", out.left);
    assert_eq!(
        out.done,
        [Done::Edited {
            path: file.clone(),
            put_back: vec!["time".into()],
            taken_out: vec!["toolbox".into()],
        }]
    );
    assert_eq!(
        json(&file),
        serde_json::json!({
            "numStartups": 7,
            "mcpServers": {
                "added-later": {"command": "x"},
                "time": {"command": "uvx", "args": ["mcp-server-time"]}
            }
        })
    );
}

#[test]
fn an_entry_changed_since_is_left_and_said_the_rest_is_undone() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let file = dir.path().join("mcp.json");
    std::fs::write(
        &file,
        r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}"#,
    )
    .unwrap();
    let servers: &[&str] = &["mcpServers"];
    applied(
        &state,
        &file,
        r#"{"mcpServers": {"toolbox": {"command": "mws"}}}"#,
        &[
            (servers, "a", Action::Removed),
            (servers, "b", Action::Removed),
            (servers, "toolbox", Action::Added),
        ],
    );
    // The user re-registered `a` with other settings and edited mws's entry.
    std::fs::write(
        &file,
        r#"{"mcpServers": {"toolbox": {"command": "mws", "env": {"K": "v"}}, "a": {"command": "z"}}}"#,
    )
    .unwrap();
    let out = undo(&state, false, &mut quiet()).unwrap();
    let shown = file.display();
    assert_eq!(
        out.left,
        [
            format!(
                "{shown}: `toolbox` in `mcpServers`: changed since `--apply` put it there; left \
                 as it is"
            ),
            format!(
                "{shown}: `a` in `mcpServers`: registered again since, with other settings; left \
                 as it is"
            ),
        ]
    );
    assert_eq!(
        json(&file)["mcpServers"],
        serde_json::json!({
            "toolbox": {"command": "mws", "env": {"K": "v"}},
            "a": {"command": "z"},
            "b": {"command": "y"}
        })
    );
}

#[test]
fn force_says_what_it_discards_before_putting_the_copy_back() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let file = dir.path().join("mcp.json");
    let before = r#"{"mcpServers": {"a": {"command": "x"}}}"#;
    std::fs::write(&file, before).unwrap();
    let servers: &[&str] = &["mcpServers"];
    applied(
        &state,
        &file,
        r#"{"mcpServers": {"toolbox": {"command": "mws"}}}"#,
        &[
            (servers, "a", Action::Removed),
            (servers, "toolbox", Action::Added),
        ],
    );
    std::fs::write(
        &file,
        r#"{"mcpServers": {"toolbox": {"command": "mws"}, "later": {"command": "l"}}}"#,
    )
    .unwrap();
    let mut said = Vec::new();
    let out = undo(&state, true, &mut |l: &str| said.push(l.to_string())).unwrap();
    assert_eq!(
        said,
        [format!(
            "{}: --force discards the registrations added since: `later`, and every other edit \
             made to it since `--apply` ({STAMP})",
            file.display()
        )]
    );
    assert_eq!(out.done, [Done::Restored(file.clone())]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), before);
}

/// mws's own config: the servers `--apply` wrote come out and the single `upstream` goes back.
#[test]
fn mws_config_gets_its_upstream_back_and_loses_the_servers() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let file = dir.path().join("config.json");
    std::fs::write(
        &file,
        "{\n  // mine\n  \"upstream\": {\"url\": \"http://127.0.0.1:9/mcp\"}\n}\n",
    )
    .unwrap();
    applied(
        &state,
        &file,
        "{\n  // mine\n  \"servers\": {\"gh\": {\"url\": \"https://x.test/mcp\"}}\n}\n",
        &[
            (&["servers"], "gh", Action::Added),
            (&[], "upstream", Action::Removed),
        ],
    );
    std::fs::write(
        &file,
        "{\n  // mine\n  \"servers\": {\"gh\": {\"url\": \"https://x.test/mcp\"}},\n  \"serverName\": \"tb\"\n}\n",
    )
    .unwrap();
    let out = undo(&state, false, &mut quiet()).unwrap();
    assert!(out.left.is_empty(), "{:?}", out.left);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("// mine"), "{text}");
    let v: serde_json::Value = serde_json::from_str(&crate::config::jsonc::strip(&text)).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"serverName": "tb", "upstream": {"url": "http://127.0.0.1:9/mcp"}})
    );
}

#[test]
fn a_linked_file_stays_a_link() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let real: PathBuf = dir.path().join("dotfiles-mcp.json");
    std::fs::write(&real, r#"{"mcpServers": {"a": {"command": "x"}}}"#).unwrap();
    let link = dir.path().join("mcp.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    applied(
        &state,
        &link,
        r#"{"mcpServers": {}}"#,
        &[(&["mcpServers"], "a", Action::Removed)],
    );
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    undo(&state, false, &mut quiet()).unwrap();
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(json(&real)["mcpServers"]["a"]["command"], "x");
}

#[test]
fn a_set_without_entries_leaves_a_changed_file_and_says_how_to_force() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let file = dir.path().join("mcp.json");
    std::fs::write(&file, "{}").unwrap();
    applied(&state, &file, r#"{"mcpServers": {}}"#, &[]);
    std::fs::write(&file, r#"{"edited": true}"#).unwrap();
    let out = undo(&state, false, &mut quiet()).unwrap();
    assert_eq!(
        out.left,
        [format!(
            "{}: changed since `mws setup import --apply`, and the set records none of its \
             entries; left as it is (`mws setup undo --force` puts the copy back whole)",
            file.display()
        )]
    );
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        r#"{"edited": true}"#
    );
}
