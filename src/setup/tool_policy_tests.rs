//! Tests of carrying Codex's per-tool settings over to mws's `policy`: what each setting comes
//! to, what cannot be carried and why, and the additions of several moved servers.

use std::path::Path;

use serde_json::json;

use super::*;
use crate::setup::{Client, Origin, Scope};

fn source(client: Client, name: &str, flags: Vec<Flag>) -> Source {
    Source {
        origin: Origin::new(client, Path::new("/h/.codex/config.toml"), Scope::User),
        name: name.into(),
        flags,
    }
}

fn flags(entry: serde_json::Value) -> Vec<Flag> {
    codex_flags(entry.as_object().unwrap()).unwrap()
}

#[test]
fn codex_tool_settings_become_flags() {
    let f = flags(json!({
        "command": "x",
        "enabled_tools": ["read", "list"],
        "disabled_tools": ["list"],
        "default_tools_approval_mode": "approve",
        "tools": {"write": {"approval_mode": "prompt"}},
    }));
    assert_eq!(
        f,
        [
            Flag::EnabledTools(vec!["read".into(), "list".into()]),
            Flag::DisabledTools(vec!["list".into()]),
            Flag::Approvals(vec![
                "default_tools_approval_mode = \"approve\"".into(),
                "tools.write.approval_mode = \"prompt\"".into()
            ]),
        ]
    );
    assert_eq!(flags(json!({"command": "x", "disabled_tools": []})), []);
    let bad = codex_flags(json!({"disabled_tools": "all"}).as_object().unwrap());
    assert_eq!(
        bad.unwrap_err(),
        "`disabled_tools` is a string, not an array"
    );
}

#[test]
fn what_each_setting_comes_to() {
    let cases: Vec<(Vec<Vec<Flag>>, ToolPolicy)> = vec![
        (vec![vec![]], ToolPolicy::default()),
        (
            vec![vec![Flag::DisabledTools(vec![
                "delete_repo".into(),
                "a*b".into(),
            ])]],
            ToolPolicy {
                deny: vec!["gh__delete_repo".into(), "gh__a[*]b".into()],
                ..ToolPolicy::default()
            },
        ),
        (
            vec![vec![Flag::EnabledTools(vec!["search".into()])]],
            ToolPolicy {
                only: Some(vec!["gh__search".into()]),
                ..ToolPolicy::default()
            },
        ),
        (
            vec![vec![Flag::EnabledTools(vec![])]],
            ToolPolicy {
                deny: vec!["gh__*".into()],
                ..ToolPolicy::default()
            },
        ),
        // The same lists in both registrations: carried.
        (
            vec![
                vec![Flag::DisabledTools(vec!["x".into()])],
                vec![Flag::DisabledTools(vec!["x".into()])],
            ],
            ToolPolicy {
                deny: vec!["gh__x".into()],
                ..ToolPolicy::default()
            },
        ),
    ];
    for (per_source, want) in cases {
        let sources: Vec<Source> = per_source
            .into_iter()
            .map(|f| source(Client::Codex, "gh", f))
            .collect();
        assert_eq!(of("gh", &sources), want, "{sources:?}");
    }
}

#[test]
fn what_cannot_be_carried_is_named_with_why() {
    // Claude Code uses every tool of the server: one policy behind mws cannot keep both.
    let sources = [
        source(Client::ClaudeCode, "github", vec![]),
        source(
            Client::Codex,
            "gh",
            vec![
                Flag::DisabledTools(vec!["x".into()]),
                Flag::Approvals(vec!["default_tools_approval_mode = \"approve\"".into()]),
            ],
        ),
    ];
    let p = of("github", &sources);
    assert!(p.deny.is_empty() && p.only.is_none(), "{p:?}");
    assert_eq!(
        p.not_carried,
        [
            "the tool lists (`enabled_tools`, `disabled_tools`) of codex (`gh`): behind mws one \
             policy serves every client, and not every registration of it limits its tools alike",
            "default_tools_approval_mode = \"approve\" of codex (`gh`): Codex approves the tools \
             of mws's registration, not of each server behind it; `call_read_only_tool` runs its \
             read-only tools under any approval policy"
        ]
    );
}

#[test]
fn merged_additions_keep_the_other_servers_tools() {
    let gh = ToolPolicy {
        only: Some(vec!["gh__search".into()]),
        deny: vec!["gh__x".into()],
        ..ToolPolicy::default()
    };
    let fs = ToolPolicy {
        deny: vec!["fs__write".into()],
        ..ToolPolicy::default()
    };
    let servers = ["fs".to_string(), "gh".into(), "time".into()];
    let add = merged([("gh", &gh), ("fs", &fs)], &servers);
    assert_eq!(add.deny, ["gh__x", "fs__write"]);
    assert_eq!(add.only, ["gh__search"]);
    assert_eq!(add.others, ["fs__*", "time__*"]);
    let add = merged([("fs", &fs)], &servers);
    assert!(add.only.is_empty() && add.others.is_empty(), "{add:?}");
}
