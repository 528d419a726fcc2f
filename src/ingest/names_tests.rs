//! Tests of `names`: each client's sanitizer, the naming generations, direct calls of the servers
//! behind mws.
use super::*;

fn names() -> Names {
    Names::new(
        &[
            "toolbox",
            "chrome-devtools",
            "claude.ai Notion",
            "plugin:em:em",
        ],
        &["get-sum", "mail.send", "drive_search", "calendar_list"],
    )
}

#[test]
fn normalizers() {
    for (raw, claude, codex) in [
        ("chrome-devtools", "chrome-devtools", "chrome_devtools"),
        ("claude.ai Notion", "claude_ai_Notion", "claude_ai_Notion"),
        ("plugin:em:em", "plugin_em_em", "plugin_em_em"),
        ("mail.send", "mail_send", "mail_send"),
    ] {
        assert_eq!(claude_normalize(raw), claude, "{raw}");
        assert_eq!(codex_sanitize(raw), codex, "{raw}");
    }
}

#[test]
fn claude_names() {
    let n = names();
    let t = |s: &str| Resolved::Tool(s.into());
    for (name, want) in [
        ("mcp__toolbox__get-sum", Some(("toolbox", t("get-sum")))),
        ("mcp__toolbox__mail_send", Some(("toolbox", t("mail.send")))),
        ("mcp__toolbox__unknown_x", Some(("toolbox", t("unknown_x")))),
        (
            "mcp__toolbox__call_tool",
            Some(("toolbox", Resolved::CallTool)),
        ),
        (
            "mcp__toolbox__call_read_only_tool",
            Some(("toolbox", Resolved::CallTool)),
        ),
        (
            "mcp__toolbox__search_tools",
            Some(("toolbox", Resolved::NotACall)),
        ),
        (
            "mcp__toolbox__run_script",
            Some(("toolbox", Resolved::NotACall)),
        ),
        (
            "mcp__chrome-devtools__snap",
            Some(("chrome-devtools", t("snap"))),
        ),
        (
            "mcp__claude_ai_Notion__s",
            Some(("claude.ai Notion", t("s"))),
        ),
        (
            "mcp__plugin_em_em__search",
            Some(("plugin:em:em", t("search"))),
        ),
        ("mcp__github__search", None),
        ("mcp__toolbox__", None),
        ("Bash", None),
    ] {
        assert_eq!(n.claude_tool(name), want, "{name}");
    }
}

#[test]
fn codex_names_all_generations() {
    let n = names();
    let t = |s: &str| Resolved::Tool(s.into());
    for (ns, name, want) in [
        (
            Some("mcp__toolbox"),
            "get_sum",
            Some(("toolbox", t("get-sum"))),
        ),
        (
            Some("mcp__toolbox__"),
            "get_sum",
            Some(("toolbox", t("get-sum"))),
        ),
        (
            Some("mcp__chrome_devtools"),
            "snap",
            Some(("chrome-devtools", t("snap"))),
        ),
        (
            None,
            "mcp__toolbox__mail_send",
            Some(("toolbox", t("mail.send"))),
        ),
        (
            None,
            "toolbox__drive_search",
            Some(("toolbox", t("drive_search"))),
        ),
        (
            None,
            "chrome-devtools__snap",
            Some(("chrome-devtools", t("snap"))),
        ),
        (None, "web__run", None),
        (None, "exec_command", None),
        (Some("mcp__github"), "search", None),
    ] {
        assert_eq!(n.codex_tool(ns, name), want, "{ns:?} {name}");
    }
    assert_eq!(
        n.codex_server_raw("chrome_devtools"),
        Some("chrome-devtools")
    );
}

#[test]
fn call_tool_targets() {
    let n = names();
    for (name, want) in [
        ("get-sum", "get-sum"),
        ("mcp__toolbox__get-sum", "get-sum"),
        ("get_sum", "get-sum"),
        ("search", "drive_search"),
        ("list", "calendar_list"),
        ("nothing", "nothing"),
    ] {
        assert_eq!(n.call_tool_target(name, Client::Codex), want, "{name}");
    }
}

/// An upstream's own `call_tool`, which clients see as `upstream__call_tool`.
#[test]
fn meta_named_upstream_tools_are_recorded_by_their_upstream_names() {
    let n = Names::new(&["toolbox"], &["call_tool", "get-sum"]);
    let (_, r) = n.claude_tool("mcp__toolbox__call_tool").unwrap();
    assert_eq!(r, Resolved::CallTool);
    let (_, r) = n.claude_tool("mcp__toolbox__upstream__call_tool").unwrap();
    assert_eq!(r, Resolved::Tool("call_tool".into()));
    let target = n.call_tool_target("upstream__call_tool", Client::Codex);
    assert_eq!(target, "call_tool");
}

#[test]
fn colliding_normal_forms_stay_as_seen() {
    let n = Names::new(&["s"], &["a.b", "a-b"]);
    assert_eq!(n.upstream("a_b", Client::Codex), "a_b");
    assert_eq!(n.upstream("a_b", Client::Claude), "a.b");
    assert_eq!(n.upstream("a-b", Client::Claude), "a-b");
}

fn direct() -> Names {
    let alias = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let servers = Servers(
        [
            ("github", alias(&["gh", "github-old"])),
            ("time", alias(&[])),
            ("toolbox", alias(&[])),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
    );
    Names::new(
        &["toolbox"],
        &["github__create_issue", "time__get_current_time"],
    )
    .with_servers(&servers)
}

/// Calls made to the servers behind mws directly, before mws, under their names or aliases.
#[test]
fn direct_calls_count_under_the_prefixed_name() {
    let n = direct();
    let t = |s: &str| Resolved::Tool(s.into());
    for (name, want) in [
        (
            "mcp__github__create_issue",
            Some(("github", t("github__create_issue"))),
        ),
        (
            "mcp__gh__create_issue",
            Some(("github", t("github__create_issue"))),
        ),
        (
            "mcp__github-old__list_prs",
            Some(("github", t("github__list_prs"))),
        ),
        (
            "mcp__time__get_current_time",
            Some(("time", t("time__get_current_time"))),
        ),
        // Through mws: the proxy's own name wins over a server called the same.
        (
            "mcp__toolbox__time__get_current_time",
            Some(("toolbox", t("time__get_current_time"))),
        ),
        ("mcp__time__call_tool", Some(("time", t("time__call_tool")))),
        ("mcp__other__x", None),
    ] {
        assert_eq!(n.claude_tool(name), want, "{name}");
    }
    for (ns, name, want) in [
        (
            Some("mcp__gh"),
            "create_issue",
            Some(("github", t("github__create_issue"))),
        ),
        (
            Some("mcp__github_old"),
            "create_issue",
            Some(("github", t("github__create_issue"))),
        ),
        (
            None,
            "mcp__time__get_current_time",
            Some(("time", t("time__get_current_time"))),
        ),
        (
            None,
            "time__get_current_time",
            Some(("time", t("time__get_current_time"))),
        ),
    ] {
        assert_eq!(n.codex_tool(ns, name), want, "{ns:?} {name}");
    }
    assert_eq!(n.codex_server_raw("github_old"), Some("github"));
    assert_eq!(
        n.resolve_on("github", "create_issue", Client::Codex),
        t("github__create_issue")
    );
    assert_eq!(
        n.resolve_on("toolbox", "get-sum", Client::Codex),
        t("get-sum")
    );
    // A `call_tool` through mws naming a direct form is not unwrapped as if it were the proxy.
    assert_eq!(
        n.call_tool_target("mcp__toolbox__time__get_current_time", Client::Claude),
        "time__get_current_time"
    );
}
