//! Exposed names as data: prefixes, shortening within the client's limit, the way back, warnings.

use serde_json::json;

use super::*;

fn cat(names: &[&str]) -> Catalog {
    Catalog::new(
        names
            .iter()
            .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}))
            .collect(),
    )
}

#[test]
fn budget_follows_server_name() {
    // mcp__toolbox__ is 14 characters.
    assert_eq!(name_budget("toolbox"), 50);
    assert_eq!(name_budget(&"x".repeat(60)), MIN_NAME_BUDGET);
}

#[test]
fn shortening_is_stable_bounded_and_distinct() {
    let budget = name_budget("toolbox");
    let a = format!(
        "github__{}",
        "create_pull_request_review_comment_reply_".repeat(2)
    );
    let b = format!("{a}x");
    let sa = shorten(&a, budget);
    let sb = shorten(&b, budget);
    assert!(sa.len() <= budget && sb.len() <= budget, "{sa} {sb}");
    assert_ne!(sa, sb);
    assert!(sa.starts_with("github__create_pull_request"), "{sa}");
    // The same name gives the same short name (a fixed value: a changed hash would break pins).
    assert_eq!(shorten(&a, budget), sa);
    assert_eq!(
        shorten("s__abcdefghijklmnopqrstuvwxyz0123456789", 24),
        "s__abcdefghijkl_931f46dc"
    );
    assert_eq!(shorten("short", 24), "short");
    assert!(matches!(shorten("short", 24), Cow::Borrowed(_)));
}

#[test]
fn fleet_names_and_the_way_back() {
    let long = "a_tool_whose_name_is_far_too_long_for_any_client_to_accept";
    let gh = cat(&["create_issue", "search_tools", long]);
    let time = cat(&["get_current_time"]);
    let (n, tools) = Naming::build(&[("github", &gh), ("time", &time)], name_budget("toolbox"));
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert_eq!(names[0], "github__create_issue");
    assert_eq!(names[1], "github__search_tools");
    assert_eq!(names[3], "time__get_current_time");
    let short = names[2];
    assert!(
        short.len() <= 50 && short.starts_with("github__a_tool_whose"),
        "{short}"
    );
    assert_eq!(n.resolve(short), Some((0, long)));
    assert_eq!(
        n.resolve("time__get_current_time"),
        Some((1, "get_current_time"))
    );
    assert_eq!(n.resolve("github__search_tools"), Some((0, "search_tools")));
    assert_eq!(n.resolve("get_current_time"), None);
    assert_eq!(
        n.shortened,
        [(0, short.to_string(), format!("github__{long}"))]
    );
    assert_eq!(
        n.warnings,
        [(
            0,
            "has a tool named like mws's meta-tool \"search_tools\"; it is exposed as \
             \"github__search_tools\""
                .to_string()
        )]
    );
}

#[test]
fn duplicates_are_warned_and_the_first_kept() {
    let c = Catalog::new(vec![
        json!({"name": "a", "description": "first"}),
        json!({"name": "a", "description": "second"}),
        json!({"name": "a"}),
    ]);
    let (n, tools) = Naming::build(&[("s", &c)], 50);
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0]["description"], "first");
    assert_eq!(
        n.warnings,
        [(
            0,
            "lists tool \"a\" more than once; the first definition is used".to_string()
        )]
    );
}

#[test]
fn prefixed_names_split_only_for_known_servers() {
    let servers = ["github", "time"];
    assert_eq!(split_prefixed(&servers, "time__now"), Some((1, "now")));
    assert_eq!(split_prefixed(&servers, "time__a__b"), Some((1, "a__b")));
    assert_eq!(split_prefixed(&servers, "other__now"), None);
    assert_eq!(split_prefixed(&servers, "time__"), None);
    assert_eq!(split_prefixed(&servers, "plain"), None);
}
