//! Tests for meta_tools.rs: annotations, forgiving name resolution and arguments, did-you-mean.

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
    assert_eq!(defs[0]["annotations"]["idempotentHint"], true);
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
        ("send_message", Ok("mail_send_message")),
        ("get_sum", Ok("get-sum")),
        ("create_event", Ok("calendar_create_event")),
        // Two backends have list_labels: ambiguous, so an error.
        ("list_labels", Err("list_labels")),
        ("send_mail", Err("send_mail")),
    ] {
        let got = resolve(&c, given);
        match want {
            Ok(w) => assert_eq!(got, Ok(Resolved::Tool(w.into())), "{given}"),
            Err(w) => assert_eq!(got.unwrap_err().name, w, "{given}"),
        }
    }
    // An empty catalog passes names on (the upstream decides).
    assert_eq!(
        resolve(&Catalog::default(), "mcp__toolbox__x"),
        Ok(Resolved::Tool("x".into()))
    );
}

#[test]
fn did_you_mean_names_close_tools_and_search() {
    let e = resolve(&catalog(), "mail_send_mesage").unwrap_err();
    assert_eq!(e.suggestions[0], "mail_send_message");
    let m = e.message();
    assert!(m.contains("Did you mean: mail_send_message"), "{m}");
    assert!(m.contains("search_tools(\"mail send mesage\")"), "{m}");
    let e = resolve(&catalog(), "list_labels").unwrap_err();
    assert!(e.suggestions.contains(&"mail_list_labels".to_string()));
    assert!(e.suggestions.contains(&"drive_list_labels".to_string()));
}

#[test]
fn arguments_object_or_string() {
    assert_eq!(parse_arguments(None), Ok(json!({})));
    assert_eq!(parse_arguments(Some(&json!({"a": 1}))), Ok(json!({"a": 1})));
    assert_eq!(
        parse_arguments(Some(&json!("{\"a\": 1}"))),
        Ok(json!({"a": 1}))
    );
    assert!(parse_arguments(Some(&json!("[1]"))).is_err());
    let e = parse_arguments(Some(&json!("{nope"))).unwrap_err();
    assert!(e.contains("not valid JSON"), "{e}");
    assert!(parse_arguments(Some(&json!(3))).is_err());
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
        ("call_tool", Ok(Resolved::CallTool)),
        ("upstream__search_tools", tool("search_tools")),
        ("mcp__mws__upstream__call_tool", tool("call_tool")),
        ("Upstream__Search-Tools", tool("search_tools")),
        ("send_message", tool("mail_send_message")),
    ] {
        assert_eq!(resolve(&c, given), want, "{given}");
    }
    let e = resolve(&c, "upstream_search_tool").unwrap_err();
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
