//! Codex's per-tool settings of the servers `mws setup import --apply` moves, carried over to
//! mws's `policy`: `disabled_tools` into `policy.deny`, `enabled_tools` into `policy.allow` (with
//! every other server's tools kept), approval modes named as not carried; the plan says each.
//! Undo takes the additions back, keeping what the config held before and what was added since.
//! The servers are registered with the real `codex mcp add`; the lists are then written by hand,
//! as the CLI cannot set them.

use serde_json::json;

use crate::setup::{codex, homes};
use crate::setup_apply::{config_path, json_file, mws_with, path_with_clis, text};

#[test]
fn codex_tool_lists_become_policy_and_approvals_are_named() {
    let h = homes();
    codex(&h, &["gh", "--", "gh-mcp"]);
    codex(&h, &["fs", "--", "fs-mcp"]);
    codex(&h, &["time", "--", "time-mcp"]);
    let user_toml = h.codex_home.join("config.toml");
    let mut doc: toml_edit::DocumentMut = std::fs::read_to_string(&user_toml)
        .unwrap()
        .parse()
        .unwrap();
    let servers = doc["mcp_servers"].as_table_mut().unwrap();
    servers["gh"]["disabled_tools"] =
        toml_edit::value(toml_edit::Array::from_iter(["delete_repo"]));
    servers["gh"]["default_tools_approval_mode"] = toml_edit::value("approve");
    servers["fs"]["enabled_tools"] =
        toml_edit::value(toml_edit::Array::from_iter(["read_file", "list_dir"]));
    std::fs::write(&user_toml, doc.to_string()).unwrap();
    // The user's own deny list stays, with the moved server's added.
    let config = config_path(&h);
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let before = "{\n  \"policy\": {\"deny\": [\"*_admin\"]}\n}\n";
    std::fs::write(&config, before).unwrap();
    let path = path_with_clis();

    let plan = mws_with(&h, &path, &["setup", "import"]);
    assert_eq!(plan.status.code(), Some(0), "{}", text(&plan));
    let shown = String::from_utf8_lossy(&plan.stdout).replace('\n', " ");
    for want in [
        "tools switched off → `policy.deny`: gh__delete_repo",
        "only these tools used → `policy.allow`: fs__read_file, fs__list_dir",
        "not carried over: default_tools_approval_mode = \"approve\" of codex (`gh`)",
    ] {
        let words: Vec<&str> = want.split(' ').collect();
        // The plan's table wraps long cells: compare word by word, in order.
        let mut rest = shown.as_str();
        for w in words {
            let at = rest
                .find(w)
                .unwrap_or_else(|| panic!("{want:?}: no {w:?} in the plan:\n{}", text(&plan)));
            rest = &rest[at + w.len()..];
        }
    }

    let out = mws_with(&h, &path, &["setup", "import", "--apply"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "{}: `policy.deny` now also has gh__delete_repo (the clients' tool settings of the \
             servers moved)",
            config.display()
        )),
        "{stdout}"
    );
    let c = json_file(&config);
    assert_eq!(c["policy"]["deny"], json!(["*_admin", "gh__delete_repo"]));
    assert_eq!(
        c["policy"]["allow"],
        json!(["fs__read_file", "fs__list_dir", "gh__*", "time__*"])
    );
    // The config mws serves with loads, and its policy keeps what Codex kept.
    let loaded = mws::config::load(Some(&config)).unwrap().config;
    assert_eq!(loaded.policy.deny, ["*_admin", "gh__delete_repo"]);

    // Edited since --apply: undo goes entry by entry, the user's own entries stay.
    let edited = std::fs::read_to_string(&config).unwrap().replacen(
        '{',
        "{\n  \"pins\": [\"fs__read_file\"],",
        1,
    );
    std::fs::write(&config, edited).unwrap();
    let undo = mws_with(&h, &path, &["setup", "undo"]);
    assert_eq!(undo.status.code(), Some(0), "{}", text(&undo));
    let c = json_file(&config);
    assert_eq!(c["policy"], json!({"deny": ["*_admin"]}), "{c:#}");
    assert_eq!(c["pins"], json!(["fs__read_file"]));
    assert!(c.get("servers").is_none(), "{c:#}");
}
