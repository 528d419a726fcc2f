//! Tests for meta_tools.rs: annotations, exact name resolution and did-you-mean, arguments, the
//! read-only check, and what the meta-tools cost in tokens.

use super::*;

fn catalog() -> Catalog {
    Catalog::new(
        [
            "mail_send_message",
            "mail_list_labels",
            "calendar_create_event",
            "get-sum",
            "echo",
            "drive_list_labels",
        ]
        .iter()
        .map(|n| json!({"name": n}))
        .collect(),
    )
}

#[test]
fn annotations_are_honest() {
    let defs = definitions(&catalog(), &Config::default());
    assert_eq!(defs[0]["name"], SEARCH_TOOLS);
    assert_eq!(defs[0]["annotations"]["readOnlyHint"], true);
    assert_eq!(defs[0]["annotations"]["openWorldHint"], false);
    assert_eq!(defs[1]["name"], CALL_TOOL);
    assert_eq!(defs[1]["annotations"]["readOnlyHint"], false);
    for d in &defs {
        assert_eq!(d["_meta"]["anthropic/alwaysLoad"], true);
    }
    assert!(
        defs[0]["description"]
            .as_str()
            .unwrap()
            .contains("mail (2)")
    );
}

#[test]
fn resolution_cases() {
    let c = catalog();
    for (given, want) in [
        ("mail_send_message", Ok("mail_send_message")),
        ("mcp__toolbox__mail_send_message", Ok("mail_send_message")),
        ("mcp__other__echo", Ok("echo")),
        (" echo ", Ok("echo")),
        // Only exact names run: no backend prefix added, no `-`/`_` or case undone.
        ("send_message", Err("send_message")),
        ("get_sum", Err("get_sum")),
        ("Mail_Send_Message", Err("Mail_Send_Message")),
        ("list_labels", Err("list_labels")),
        ("send_mail", Err("send_mail")),
    ] {
        let got = resolve(&c, given, false);
        match want {
            Ok(w) => assert_eq!(got, Ok(Resolved::Tool(w.into())), "{given}"),
            Err(w) => assert_eq!(got.unwrap_err().name, w, "{given}"),
        }
    }
    // An empty catalog passes names on (the upstream decides).
    assert_eq!(
        resolve(&Catalog::default(), "mcp__toolbox__x", false),
        Ok(Resolved::Tool("x".into()))
    );
}

/// `delete_repo` and `Delete_Repo` are two tools: a name runs the one it names exactly, never
/// its case twin; an inexact one runs nothing and the error names both.
#[test]
fn a_case_twin_is_never_run_in_its_place() {
    let c = Catalog::new(vec![
        json!({"name": "gh__Delete_Repo"}),
        json!({"name": "gh__list_repos"}),
    ]);
    let e = resolve(&c, "gh__delete_repo", true).unwrap_err();
    assert_eq!(e.suggestions[0], "gh__Delete_Repo");
    assert_eq!(
        e.message(),
        "unknown tool 'gh__delete_repo'. Did you mean: gh__Delete_Repo, gh__list_repos? Use \
         search_tools(\"gh  delete repo\") to find the right tool name."
    );
    assert_eq!(
        resolve(&c, "gh__Delete_Repo", true),
        Ok(Resolved::Tool("gh__Delete_Repo".into()))
    );
    assert!(resolve(&c, "delete_repo", true).is_err());
}

/// With `servers`: a server's own tool name runs when one server has it; the full
/// `<server>__<tool>` of a shortened name runs the shortened tool.
#[test]
fn bare_and_full_names_with_servers() {
    let long = "a_tool_with_a_name_long_enough_to_pass_the_clients_limit";
    let gh = Catalog::new(vec![json!({"name": "create_issue"}), json!({"name": long})]);
    let gl = Catalog::new(vec![
        json!({"name": "create_issue"}),
        json!({"name": "merge"}),
    ]);
    let (naming, tools) = crate::catalog::exposed::Naming::build(&[("gh", &gh), ("gl", &gl)], 40);
    let c = Catalog::new(tools).with_real_names(naming.real_names());
    let short = c.by_real_name(&format!("gh__{long}")).unwrap().to_string();
    let tool = |n: &str| Ok(Resolved::Tool(n.into()));
    assert_eq!(resolve(&c, "merge", true), tool("gl__merge"));
    assert_eq!(resolve(&c, &format!("gh__{long}"), true), tool(&short));
    assert_eq!(resolve(&c, long, true), tool(&short));
    assert_eq!(resolve(&c, &short, true), tool(&short));
    // Two servers have it: which one is not guessed.
    let e = resolve(&c, "create_issue", true).unwrap_err();
    assert_eq!(e.suggestions[..2], ["gh__create_issue", "gl__create_issue"]);
    // Without `servers` a `__` is part of the name, not a server's prefix.
    assert!(resolve(&c, "merge", false).is_err());
}

#[test]
fn the_read_only_meta_tool_is_listed_when_a_tool_is_read_only() {
    let config = Config::default();
    let defs = definitions(&catalog(), &config);
    let names: Vec<&str> = defs.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [SEARCH_TOOLS, CALL_TOOL, RUN_SCRIPT],
        "no read-only tool, no call_read_only_tool"
    );
    let c = Catalog::new(vec![
        json!({"name": "files_read", "annotations": {"readOnlyHint": true}}),
        json!({"name": "files_write"}),
    ]);
    let defs = definitions(&c, &config);
    let names: Vec<&str> = defs.iter().map(|d| d["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [SEARCH_TOOLS, CALL_TOOL, CALL_READ_ONLY_TOOL, RUN_SCRIPT]
    );
    assert_eq!(defs[2]["annotations"]["readOnlyHint"], true);
    assert_eq!(defs[2]["_meta"]["anthropic/alwaysLoad"], true);
    assert_eq!(defs[2]["inputSchema"]["required"], json!(["name"]));

    assert_eq!(not_read_only("files_read", c.get("files_read")), None);
    assert_eq!(
        not_read_only("files_write", c.get("files_write")).unwrap(),
        "call_read_only_tool did not run files_write: its server does not mark it read-only \
         (readOnlyHint: true), and call_read_only_tool runs only tools that are. Run it with \
         call_tool instead, with the same name and arguments."
    );
    let false_hint = json!({"name": "x", "annotations": {"readOnlyHint": false}});
    assert!(not_read_only("x", Some(&false_hint)).is_some());
    assert!(
        not_read_only("x", None).is_some(),
        "a tool not in the catalog"
    );
    assert_eq!(
        resolve(&c, CALL_READ_ONLY_TOOL, false),
        Ok(Resolved::Runner(CALL_READ_ONLY_TOOL))
    );
}

/// The most the search and call meta-tools may cost in o200k tokens with ten servers behind mws.
/// Raising it spends more of every session's context before any work.
const META_TOKEN_BUDGET: usize = 400;

/// The most `run_script` may add to every listing, in o200k tokens (issue 32's bound).
const SCRIPT_TOKEN_BUDGET: usize = 150;

/// Ten servers of ten tools each, some read-only: the three search and call meta-tools as listed
/// (backends named in `search_tools`' description) stay within `META_TOKEN_BUDGET`, and
/// `run_script` within `SCRIPT_TOKEN_BUDGET`.
#[test]
fn the_meta_tools_stay_within_budget_with_ten_servers() {
    use crate::report::tokens::{Tokenizer, TokenizerKind, list_size};
    let servers = [
        "github",
        "filesystem",
        "slack",
        "postgres",
        "playwright",
        "memory",
        "fetch",
        "sentry",
        "linear",
        "notion",
    ];
    let tools = servers
        .iter()
        .flat_map(|s| {
            (0..10).map(move |i| {
                json!({"name": format!("{s}__tool_{i}"), "annotations": {"readOnlyHint": i % 2 == 0}})
            })
        })
        .collect();
    let defs = definitions(&Catalog::new(tools), &Config::default());
    assert_eq!(defs.len(), 4);
    assert_eq!(defs[3]["name"], RUN_SCRIPT);
    let o200k = Tokenizer::load(TokenizerKind::O200k);
    let tokens = list_size(&o200k, &defs[..3]).tokens;
    eprintln!("the search and call meta-tools: {tokens} o200k tokens");
    assert!(
        tokens <= META_TOKEN_BUDGET,
        "the meta-tools cost {tokens} o200k tokens with ten servers (budget {META_TOKEN_BUDGET})"
    );
    let script = list_size(&o200k, &defs[3..]).tokens;
    assert!(
        script <= SCRIPT_TOKEN_BUDGET,
        "run_script costs {script} o200k tokens (budget {SCRIPT_TOKEN_BUDGET})"
    );
}

#[test]
fn did_you_mean_names_close_tools_and_search() {
    let e = resolve(&catalog(), "mail_send_mesage", false).unwrap_err();
    assert_eq!(e.suggestions[0], "mail_send_message");
    let m = e.message();
    assert!(m.contains("Did you mean: mail_send_message"), "{m}");
    assert!(m.contains("search_tools(\"mail send mesage\")"), "{m}");
    let e = resolve(&catalog(), "list_labels", false).unwrap_err();
    assert!(e.suggestions.contains(&"mail_list_labels".to_string()));
    assert!(e.suggestions.contains(&"drive_list_labels".to_string()));
}

#[test]
fn arguments_object_or_string() {
    let parse = |v: Option<&Value>| parse_arguments(CALL_TOOL, v);
    assert_eq!(parse(None), Ok(json!({})));
    assert_eq!(parse(Some(&json!({"a": 1}))), Ok(json!({"a": 1})));
    assert_eq!(parse(Some(&json!("{\"a\": 1}"))), Ok(json!({"a": 1})));
    assert!(parse(Some(&json!("[1]"))).is_err());
    let e = parse(Some(&json!("{nope"))).unwrap_err();
    assert!(e.contains("not valid JSON"), "{e}");
    assert_eq!(
        parse_arguments(CALL_READ_ONLY_TOOL, Some(&json!(3))),
        Err("call_read_only_tool: 'arguments' must be a JSON object".into())
    );
}

/// An upstream with its own `search_tools` and `call_tool`: clients see them as
/// `upstream__search_tools` and `upstream__call_tool`; the bare names are mws's meta-tools.
#[test]
fn meta_named_upstream_tools_are_exposed_under_one_other_name() {
    let c = Catalog::new(
        ["search_tools", "call_tool", "mail_send_message"]
            .iter()
            .map(|n| json!({"name": n}))
            .collect(),
    );
    let tool = |n: &str| Ok(Resolved::Tool(n.into()));
    for (given, want) in [
        ("search_tools", Ok(Resolved::Search)),
        ("mcp__mws__search_tools", Ok(Resolved::Search)),
        ("call_tool", Ok(Resolved::Runner(CALL_TOOL))),
        ("upstream__search_tools", tool("search_tools")),
        ("mcp__mws__upstream__call_tool", tool("call_tool")),
        ("mail_send_message", tool("mail_send_message")),
    ] {
        assert_eq!(resolve(&c, given, false), want, "{given}");
    }
    assert!(resolve(&c, "Upstream__Search-Tools", false).is_err());
    let e = resolve(&c, "upstream_search_tool", false).unwrap_err();
    assert_eq!(e.suggestions[0], "upstream__search_tools");
    assert!(e.suggestions.iter().all(|s| !is_meta(s)), "{e:?}");

    assert_eq!(
        exposed_name(&c, "call_tool").unwrap(),
        "upstream__call_tool"
    );
    assert_eq!(upstream_name(&c, "upstream__call_tool"), "call_tool");
    assert_eq!(upstream_name(&c, "mail_send_message"), "mail_send_message");
    let shown = exposed_catalog(&std::sync::Arc::new(c));
    let names: Vec<&str> = shown.names().collect();
    assert_eq!(
        names,
        [
            "upstream__search_tools",
            "upstream__call_tool",
            "mail_send_message"
        ]
    );

    // An upstream that also has `upstream__search_tools` keeps it; its `search_tools` is hidden.
    let c = Catalog::new(
        ["search_tools", "upstream__search_tools"]
            .iter()
            .map(|n| json!({"name": n}))
            .collect(),
    );
    assert_eq!(exposed_name(&c, "search_tools"), None);
    assert_eq!(
        upstream_name(&c, "upstream__search_tools"),
        "upstream__search_tools"
    );
    assert_eq!(shadowed(&c), [("search_tools", None)]);
    let shown = exposed_catalog(&std::sync::Arc::new(c));
    assert_eq!(
        shown.names().collect::<Vec<_>>(),
        ["upstream__search_tools"]
    );
}

#[test]
fn search_query_must_be_a_bounded_string() {
    let q = |v: Value| search_query(Some(&v)).map(str::to_string);
    assert_eq!(q(json!({"query": "send mail"})), Ok("send mail".into()));
    assert_eq!(q(json!({"query": ""})), Ok(String::new()));
    for (args, got) in [
        (json!({}), "nothing"),
        (json!({"query": null}), "null"),
        (json!({"query": 3}), "a number"),
        (json!({"query": {"a": 1}}), "an object"),
        (json!({"query": ["a"]}), "an array"),
        (json!("send mail"), "nothing"),
    ] {
        assert_eq!(
            q(args.clone()),
            Err(format!(
                "search_tools: 'query' must be a string, got {got}; pass what the tool should do \
                 (\"send an email\"), a tool or backend name, or \"\" to list every tool"
            )),
            "{args}"
        );
    }
    assert!(search_query(None).is_err());
    let e = q(json!({"query": "x".repeat(5000)})).unwrap_err();
    assert!(
        e.starts_with("search_tools: query too long: 5000 bytes, at most 4096"),
        "{e}"
    );
}
