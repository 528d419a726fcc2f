//! Tests of typed values: what each kind reads as, what only looks like a value, and what the
//! ranking does with them.

use std::collections::HashSet;

use serde_json::{Value, json};

use super::*;
use crate::catalog::Catalog;
use crate::search::takes::takes;
use crate::search::{SearchIndex, SearchOptions};

fn ranked(tools: Vec<Value>, query: &str) -> Vec<String> {
    let ix = SearchIndex::build(&Catalog::new(tools), &SearchOptions::default());
    crate::search::tests::names(&ix.search(query, &HashSet::new()))
}

fn tool(name: &str, description: &str, param: &str) -> Value {
    json!({"name": name, "description": description,
           "inputSchema": {"type": "object", "properties": {param: {"type": "string"}},
                           "required": [param]}})
}

#[test]
fn values_are_read_as_their_kind() {
    let cases = [
        (
            "what does this article say? https://example.com/blog/rust-2026",
            "what does this article say? url",
        ),
        (
            "show me what's in ~/projects/api/config.yaml",
            "show me what's in file path",
        ),
        (
            "rename report-final-v2.docx to report.docx",
            "rename file path word document to file path word document",
        ),
        (
            "find all the .env files under /srv/app",
            "find all the file path files under file path",
        ),
        (
            "which street is 48.8584, 2.2945 on?",
            "which street is latitude longitude coordinates on?",
        ),
        (
            "what is at 48.8584,2.2945",
            "what is at latitude longitude coordinates",
        ),
        (
            "standup is at 14:30 London time",
            "standup is at time London time",
        ),
        ("remind me at 9am", "remind me at time"),
        ("mail ana@example.org the notes", "mail email the notes"),
        (
            "tell #general that the deploy is done",
            "tell channel that the deploy is done",
        ),
        (
            "ask @dana and @li.wu to review",
            "ask user and user to review",
        ),
        (
            "open an issue in acme/webapp: login fails",
            "open an issue in repository login fails",
        ),
        (
            "save it as notes/2026-12-04.md please",
            "save it as file path markdown please",
        ),
    ];
    for (q, want) in cases {
        assert_eq!(typed(q), want, "{q}");
    }
}

#[test]
fn words_that_only_look_like_values_stay() {
    for q in [
        "show me examples for Node.js and Vue.js",
        "add 17 and 25",
        "version 2.0 of the app",
        "and/or both",
        "the last 10 commits",
        "e.g. a list",
        "pi is 3.14",
        "start a new branch feature/dark-mode off main",
        "ratio 3:2",
        "3D assets for AR/VR and EUR/USD",
        "the #1 choice, @ 5pm-ish, #, @",
        "a branch feature/dark-mode off main",
        "in and/or out",
        "Matrix’s sequel",
        "東京の天気.",
        "wwwé",
    ] {
        assert_eq!(typed(q), q, "{q}");
        assert!(matches!(typed(q), Cow::Borrowed(_)));
    }
}

#[test]
fn a_query_holds_each_kind_once_found() {
    assert_eq!(
        read("fetch https://a.example/x and save it to ./out.md at 10:15").kinds,
        Kind::Url.bit() | Kind::Path.bit() | Kind::Time.bit()
    );
}

/// A tool that takes the kind of value the request holds comes first, though other tools'
/// text holds the address's words.
#[test]
fn a_tool_that_takes_the_value_comes_first() {
    let tools = vec![
        tool("blog_post_list", "List the posts of a Rust blog.", "blog"),
        tool("fetch", "Fetches a URL from the internet.", "url"),
        tool("issue_link_get", "Get an issue link.", "link_id"),
    ];
    let got = ranked(tools, "what does https://example.com/blog/rust-posts say");
    assert_eq!(got.first().map(String::as_str), Some("fetch"), "{got:?}");
    assert_eq!(takes(&tool("f", "", "url")), Kind::Url.bit());
    assert_eq!(takes(&tool("f", "", "filePath")), Kind::Path.bit());
    assert_eq!(takes(&tool("f", "", "timezone")), 0);
    let optional = json!({"name": "f", "inputSchema": {"properties": {"url": {}}}});
    assert_eq!(takes(&optional), 0, "only required parameters count");
    let format = json!({"name": "f", "inputSchema": {"properties": {"to": {"format": "email"}},
                                                     "required": ["to"]}});
    assert_eq!(takes(&format), Kind::Email.bit());
    // The ends of a tool about files are paths; of any other tool, whatever it says.
    let ends = |name: &str| {
        json!({"name": name, "inputSchema": {"properties": {"source": {}, "destination": {}},
                                             "required": ["source", "destination"]}})
    };
    assert_eq!(takes(&ends("move_file")), Kind::Path.bit());
    assert_eq!(takes(&ends("copyDirectory")), Kind::Path.bit());
    assert_eq!(takes(&ends("translate_text")), 0);
    let mail = json!({"name": "email_file", "inputSchema": {
        "properties": {"to": {"format": "email"}, "path": {}}, "required": ["to", "path"]}});
    assert_eq!(
        takes(&mail),
        Kind::Email.bit() | Kind::Path.bit(),
        "an end whose format says what it is takes that alone"
    );
    let mail_only = json!({"name": "email_file", "inputSchema": {
        "properties": {"to": {"format": "email"}}, "required": ["to"]}});
    assert_eq!(takes(&mail_only), Kind::Email.bit());
    assert_eq!(
        takes(&ends("profile_move")),
        0,
        "a word holding `file` is not `file`"
    );
    // Schemas an upstream gets wrong take nothing.
    for schema in [
        json!("garbage"),
        json!({"properties": {"url": {}}, "required": "url"}),
        json!({"properties": {"url": {}}, "required": [1, null, {"url": 1}]}),
        json!({"properties": [], "required": ["url"]}),
        json!({"properties": {"url": {"format": 7}}, "required": ["url", "url", "missing"]}),
    ] {
        let t = json!({"name": "f", "inputSchema": schema});
        let want = if schema["required"][0] == "url" && schema["properties"].is_object() {
            Kind::Url.bit()
        } else {
            0
        };
        assert_eq!(takes(&t), want, "{schema}");
    }
}

/// Hostile queries: long runs of values, values alone, and text that is all punctuation are
/// read in one pass and never panic.
#[test]
fn hostile_queries_are_read_in_one_pass() {
    let many = "https://a.example/x ".repeat(2_000);
    assert_eq!(typed(&many), "url ".repeat(2_000).trim_end());
    // As many values as a query may hold words, ranked: each word the values put in is counted
    // once, not against every other.
    let most = "https://a.example/x ".repeat(crate::search::MAX_QUERY_WORDS);
    let fetch = tool("fetch", "Fetches a URL from the internet.", "url");
    assert_eq!(ranked(vec![fetch], &most), ["fetch"]);
    assert_eq!(typed("48.1,"), "48.1,");
    assert_eq!(typed("48.1, "), "48.1, ");
    assert_eq!(typed(",,, :: // .. ~ ~/ ./"), ",,, :: // .. ~ ~/ ./");
    assert_eq!(typed("ééé@ü.de"), "email");
    assert_eq!(typed("99:99 25:00 1:5"), "99:99 25:00 1:5");
}

/// The words a value is read as are not widened by synonyms: a URL is not a link between
/// issues, and a file path is not a doc. The same word typed by the user keeps its synonyms.
#[test]
fn the_words_of_a_value_are_not_widened() {
    let tools = || {
        vec![
            tool("issue_link_delete", "Delete an issue link.", "link_id"),
            tool("doc_get", "Get a doc page.", "slug"),
            tool("notes_rename", "Rename a note.", "note_id"),
        ]
    };
    assert_eq!(
        ranked(tools(), "what does https://example.com/blog/rust say"),
        Vec::<String>::new()
    );
    assert_eq!(ranked(tools(), "rename ~/notes/plan.txt"), ["notes_rename"]);
    // Typed by the user, `url` and `file` keep theirs.
    assert_eq!(
        ranked(tools(), "delete the url https://example.com/a"),
        ["issue_link_delete"]
    );
    assert_eq!(ranked(tools(), "get the file ~/a/b.txt"), ["doc_get"]);
}
