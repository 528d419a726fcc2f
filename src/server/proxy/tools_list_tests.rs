//! Tests for tools_list.rs: order, presence, slimming and alwaysLoad, as data.

use super::*;
use serde_json::json;

fn check_slim(input: Value, want: Value) {
    let mut got = input.clone();
    slim(&mut got);
    assert_eq!(got, want, "slimming {input}");
}

#[test]
fn slimming_is_lossless() {
    // Repeated titles and default:null go; meaningful titles and the $schema dialect stay.
    check_slim(
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
               "properties": {"max_results": {"title": "Max Results", "type": "integer", "default": null},
                              "q": {"title": "Search text", "type": "string"}}}),
        json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
               "properties": {"max_results": {"type": "integer"},
                              "q": {"title": "Search text", "type": "string"}}}),
    );
    // anyOf [X, null] on an optional property collapses; on a required one it stays.
    check_slim(
        json!({"type": "object", "required": ["a"],
               "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                              "b": {"anyOf": [{"type": "string"}, {"type": "null"}], "description": "B", "default": null}}}),
        json!({"type": "object", "required": ["a"],
               "properties": {"a": {"anyOf": [{"type": "string"}, {"type": "null"}]},
                              "b": {"type": "string", "description": "B"}}}),
    );
    // A collision (both sides have "description") keeps the anyOf; three branches stay too.
    let keep = json!({"type": "object", "properties": {
        "c": {"anyOf": [{"type": "string", "description": "x"}, {"type": "null"}], "description": "C"},
        "d": {"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}}});
    check_slim(keep.clone(), keep);
    // Nested objects, items and $defs are slimmed too.
    check_slim(
        json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "object",
               "properties": {"n": {"title": "N", "type": "string"}}}}},
               "$defs": {"X": {"properties": {"k": {"title": "k", "type": "string", "default": null}}}}}),
        json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "object",
               "properties": {"n": {"type": "string"}}}}},
               "$defs": {"X": {"properties": {"k": {"type": "string"}}}}}),
    );
}

fn catalog() -> Catalog {
    Catalog::new(vec![
        json!({"name": "mail_send", "description": "Send.\n\nLong details.", "x-vendor": {"k": 1},
               "execution": {"taskSupport": "forbidden"},
               "annotations": {"readOnlyHint": false},
               "inputSchema": {"type": "object", "title": "mail_sendArguments",
                               "properties": {"to": {"title": "To", "type": "string"}}},
               "_meta": {"vendor/x": 2}}),
        json!({"name": "mail_list", "inputSchema": {"type": "object"}}),
        json!({"name": "drive_get", "inputSchema": {"type": "object"}}),
        json!({"name": "search_tools", "inputSchema": {"type": "object"}}),
    ])
}

#[test]
fn meta_tools_first_then_working_set_present_upstream() {
    let mut config = Config {
        pins: vec!["drive_get".into(), "mail_list".into()],
        listing: Listing::WorkingSet,
        ..Config::default()
    };
    let ws = vec![
        "mail_list".to_string(),
        "gone_tool".into(),
        "mail_send".into(),
        "search_tools".into(),
    ];
    let tools = listed_tools(&catalog(), &ws, &config);
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "search_tools",
            "call_tool",
            "run_script",
            "mail_list",
            "mail_send",
            // The upstream's own `search_tools`, under the name clients see it by.
            "upstream__search_tools",
            "drive_get"
        ]
    );
    for t in &tools {
        assert_eq!(t["_meta"]["anthropic/alwaysLoad"], true, "{t}");
    }
    let send = &tools[4];
    // Unknown fields, execution, annotations and other _meta keys pass through.
    assert_eq!(send["x-vendor"], json!({"k": 1}));
    assert_eq!(send["execution"], json!({"taskSupport": "forbidden"}));
    assert_eq!(send["annotations"], json!({"readOnlyHint": false}));
    assert_eq!(send["_meta"]["vendor/x"], 2);
    assert_eq!(
        send["inputSchema"],
        json!({"type": "object", "properties": {"to": {"type": "string"}}})
    );
    assert_eq!(send["description"], "Send.\n\nLong details.");
    config.compact_descriptions = true;
    let tools = listed_tools(&catalog(), &ws, &config);
    assert_eq!(tools[4]["description"], "Send.");
}

#[test]
fn auto_lists_a_small_catalog_whole_and_a_large_one_by_working_set() {
    let ws = vec!["mail_send".to_string()];
    let auto = Config {
        listing: Listing::Auto,
        ..Config::default()
    };
    let small = choose(&catalog(), &ws, &auto);
    assert!(small.mode.all, "{}", small.mode.why);
    let names: Vec<&str> = small
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // Every tool, then `run_script` (code mode is on by default).
    assert_eq!(names.len(), catalog().len() + 1);
    assert_eq!(names.last(), Some(&"run_script"));
    assert!(!names.contains(&"call_tool"), "{names:?}");
    assert_eq!(small.names.len(), catalog().len());
    // Forty tools with long descriptions: far larger than the meta-tools and one tool.
    let big = Catalog::new(
        (0..40)
            .map(|n| json!({"name": format!("t{n}"), "description": "word ".repeat(60), "inputSchema": {"type": "object"}}))
            .collect(),
    );
    let c = choose(&big, &["t1".into()], &auto);
    assert!(!c.mode.all, "{}", c.mode.why);
    assert_eq!(c.names, ["t1"]);
    assert_eq!(c.tools[0]["name"], "search_tools");
    // Under listAllBelowTokens it is listed whole, and the reason says so.
    let cfg = Config {
        list_all_below_tokens: 100_000,
        ..auto.clone()
    };
    let c = choose(&big, &["t1".into()], &cfg);
    assert!(
        c.mode.all && c.mode.why.contains("under listAllBelowTokens (100000)"),
        "{}",
        c.mode.why
    );
    // "working-set" lists the working set, whatever the sizes; the default is "auto".
    let pinned = Config {
        listing: Listing::WorkingSet,
        ..Config::default()
    };
    let c = choose(&catalog(), &ws, &pinned);
    assert!(!c.mode.all && c.mode.why == "listing is \"working-set\" in the config");
    assert!(choose(&catalog(), &ws, &Config::default()).mode.all);
}

#[test]
fn empty_catalog_lists_only_meta_tools() {
    let tools = listed_tools(&Catalog::default(), &["a".into()], &Config::default());
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["search_tools", "call_tool", "run_script"]);
}

#[test]
fn the_policy_hides_tools_from_the_listing_and_the_search_description() {
    let catalog = Catalog::new(vec![
        json!({"name": "mail_send", "inputSchema": {"type": "object"}}),
        json!({"name": "mail_delete", "inputSchema": {"type": "object"}}),
        json!({"name": "files_delete", "inputSchema": {"type": "object"}}),
    ]);
    let config = Config {
        policy: crate::config::Policy {
            deny: vec!["*_delete".into()],
            ..Default::default()
        },
        listing: Listing::WorkingSet,
        ..Config::default()
    };
    let ws: Vec<String> = ["mail_delete", "mail_send"].map(String::from).into();
    let tools = listed_tools(&catalog, &ws, &config);
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        ["search_tools", "call_tool", "run_script", "mail_send"]
    );
    let desc = tools[0]["description"].as_str().unwrap();
    assert!(desc.starts_with("Search all 1 upstream tools"), "{desc}");
    assert!(!desc.contains("files"), "{desc}");
}
