//! Query expansion: a built-in table of words users and models use for the same tool action or
//! object, merged with `searchAliases` from the config. Expansion terms score below the literal
//! word (`bm25f::SYNONYM_WEIGHT`). Pure; built once per index.

use std::collections::{BTreeMap, HashMap};

use super::tokenize::for_each_token;

/// Groups of interchangeable words, symmetric: every word of a group expands to the others. Kept
/// to words that really name the same action or object in tool catalogs; a loose group (e.g.
/// `get`/`list`) would pull in half of any catalog. Adding a group widens recall and costs
/// precision.
const BUILT_IN: &[&[&str]] = &[
    &["send", "post", "deliver", "submit"],
    &["email", "mail", "message", "inbox"],
    &["find", "search", "lookup", "query", "locate", "grep"],
    &["delete", "remove", "trash", "erase", "discard", "destroy"],
    &["file", "document", "doc"],
    &["ticket", "issue", "bug"],
    &["create", "make", "new", "add"],
    &["update", "edit", "modify", "change", "reschedule"],
    &["fetch", "retrieve", "read", "download"],
    &["list", "enumerate", "browse"],
    &["event", "meeting", "appointment", "invite", "invitation"],
    &["calendar", "agenda"],
    &["share", "grant"],
    &["permission", "access", "role"],
    &["folder", "directory", "dir"],
    &["image", "picture", "screenshot", "photo", "snapshot"],
    &["page", "website", "site", "webpage", "url", "link"],
    &["navigate", "visit", "goto", "go", "open"],
    &["repository", "repo", "project"],
    &[
        "symbol",
        "function",
        "method",
        "class",
        "definition",
        "declaration",
    ],
    &["reference", "usage", "caller"],
    &["run", "execute", "exec", "evaluate", "eval", "invoke"],
    &["javascript", "js", "script"],
    &["reply", "respond", "answer"],
    &["attendee", "participant", "guest", "people", "person"],
    &["free", "available", "availability", "busy", "slot"],
    &["reminder", "remind", "notify", "notification", "alert"],
    &["upload", "store", "save"],
    &["rename", "retitle"],
    &["label", "tag", "folder"],
    &["history", "log", "commit"],
    &["diff", "compare", "difference"],
    &["blame", "author", "authorship"],
    &["text", "content", "body"],
    &["type", "enter", "input", "write"],
    &["tab", "window"],
    &["draft", "compose", "write"],
    &["forward", "resend", "pass"],
    &["read", "seen"],
    &["cancel", "delete"],
    &["accept", "decline", "rsvp"],
    &["secret", "password", "credential"],
    &["buy", "purchase"],
    &["suggest", "recommend"],
];

/// One-way expansions: the key implies the values, not the reverse. "Email Bob the report" means
/// send; "what ... do I have" asks for a list; "who" asks about people (access, authorship,
/// attendees); a weekday or "tomorrow" means the tool deals with time and dates.
const DIRECTED: &[(&str, &[&str])] = &[
    ("email", &["send"]),
    ("show", &["list", "get"]),
    ("view", &["list", "get", "read"]),
    ("see", &["list", "get", "read"]),
    ("what", &["list"]),
    ("who", &["permission", "access", "author", "attendee"]),
    ("schedule", &["create", "event", "calendar"]),
    ("give", &["share", "grant"]),
    ("put", &["move", "upload"]),
    ("big", &["size"]),
    ("large", &["size"]),
    ("small", &["size"]),
    ("recent", &["list", "history"]),
    // An issue, a pull request or a ticket is opened: created.
    ("open", &["create"]),
    // A total is a sum over many.
    ("total", &["sum", "aggregate", "aggregation"]),
    // A project board is a project (GitHub, GitLab, Jira).
    ("board", &["project"]),
    // What is run is a command.
    ("run", &["command"]),
    // The usual abbreviations of code review: a PR is a pull request, an MR a merge request.
    ("pr", &["pull", "request"]),
    ("mr", &["merge", "request"]),
    // Renaming a file is moving it (`mv`), and saving one is writing it.
    ("rename", &["move"]),
    ("save", &["write"]),
    // Temperature and a forecast are what weather tools give; a stock is a financial asset; a
    // mind map is a diagram.
    ("temperature", &["weather"]),
    ("forecast", &["weather"]),
    ("stock", &["finance", "financial"]),
    ("mindmap", &["diagram", "chart"]),
    // To reason through something is to think it through.
    ("reason", &["think"]),
    // Dollars, euros, yen and pounds are currencies; adding numbers is summing them.
    ("dollar", &["currency"]),
    ("euro", &["currency"]),
    ("yen", &["currency"]),
    ("pound", &["currency"]),
    ("add", &["sum"]),
    // An API key is a secret; asking whether something is already there asks for a duplicate
    // or an existing one.
    ("key", &["secret"]),
    ("already", &["duplicate", "existing"]),
    // To ask for something is to request it; a size (a phone-sized screen) is set by resizing.
    ("ask", &["request"]),
    ("size", &["resize"]),
    // What is remembered is kept in a memory.
    ("remember", &["memory"]),
    ("memorize", &["memory"]),
    ("monday", &["time", "date", "calendar"]),
    ("tuesday", &["time", "date", "calendar"]),
    ("wednesday", &["time", "date", "calendar"]),
    ("thursday", &["time", "date", "calendar"]),
    ("friday", &["time", "date", "calendar"]),
    ("saturday", &["time", "date", "calendar"]),
    ("sunday", &["time", "date", "calendar"]),
    ("today", &["time", "date", "calendar"]),
    ("tomorrow", &["time", "date", "calendar"]),
    ("yesterday", &["time", "date"]),
    ("week", &["time", "date", "calendar"]),
];

/// Question words read only as what they ask for (`DIRECTED`), never literally: "what" in a
/// request asks for a list, and a tool whose description says "what to watch" is no answer to it.
const ONLY_EXPANDED: &[&str] = &["what", "who"];

/// Expansions per stemmed query word.
#[derive(Debug, Clone, Default)]
pub struct Synonyms {
    map: HashMap<String, Vec<String>>,
}

impl Synonyms {
    /// The built-in table plus `aliases` (directed: a key expands to its values; values are added
    /// to the built-in expansions of that key, nothing is removed).
    pub fn new(aliases: &BTreeMap<String, Vec<String>>) -> Synonyms {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        let stemmed = |w: &str| {
            let mut t = Vec::new();
            for_each_token(w, |s| t.push(s.to_string()));
            t
        };
        for group in BUILT_IN {
            let words: Vec<String> = group.iter().flat_map(|w| stemmed(w)).collect();
            for w in &words {
                for other in &words {
                    if other != w {
                        push_unique(map.entry(w.clone()).or_default(), other);
                    }
                }
            }
        }
        let directed = DIRECTED.iter().map(|(k, v)| {
            (
                k.to_string(),
                v.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
            )
        });
        for (key, values) in directed.chain(aliases.iter().map(|(k, v)| (k.clone(), v.clone()))) {
            for k in stemmed(&key) {
                for v in values.iter().flat_map(|v| stemmed(v)) {
                    if v != k {
                        push_unique(map.entry(k.clone()).or_default(), &v);
                    }
                }
            }
        }
        Synonyms { map }
    }

    /// Whether `word` (stemmed) counts only through its expansions (`ONLY_EXPANDED`).
    pub fn only_expanded(word: &str) -> bool {
        ONLY_EXPANDED.contains(&word)
    }

    /// The expansions of one stemmed word (empty when it has none).
    pub fn expand(&self, word: &str) -> &[String] {
        self.map.get(word).map(Vec::as_slice).unwrap_or(&[])
    }
}

fn push_unique(v: &mut Vec<String>, w: &str) {
    if !v.iter().any(|x| x == w) {
        v.push(w.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_is_symmetric_and_aliases_merge() {
        let mut aliases = BTreeMap::new();
        aliases.insert("ticket".to_string(), vec!["Jira".to_string()]);
        let s = Synonyms::new(&aliases);
        let has = |w: &str, x: &str| {
            let (w, x) = (&super::super::tokens(w)[0], &super::super::tokens(x)[0]);
            s.expand(w).contains(x)
        };
        assert!(has("send", "post") && has("post", "send"));
        assert!(has("ticket", "issue") && has("tickets", "issues"));
        assert!(has("ticket", "Jira"));
        assert!(!has("jira", "ticket"), "config aliases are directed");
        assert!(has("reasoning", "thinking") && !has("think", "reason"));
        assert!(has("stocks", "finance") && has("purchase", "buy"));
        assert!(has("dollars", "currency") && !has("currency", "dollar"));
        assert!(has("add", "sum") && has("add", "create") && !has("sum", "add"));
        assert!(has("keys", "secret") && has("already", "duplicate"));
        assert!(has("ask", "request") && has("size", "resize") && !has("resize", "size"));
        assert!(s.expand("zebra").is_empty());
    }

    /// "what" asks for a list; a tool that says "what" in its text is no answer for that alone.
    #[test]
    fn question_words_count_only_as_what_they_ask_for() {
        use crate::catalog::Catalog;
        use crate::search::{SearchIndex, SearchOptions};
        use serde_json::json;
        let tools = vec![
            json!({"name": "what_to_watch", "description": "What to watch tonight."}),
            json!({"name": "list_movies", "description": "List movies showing near you."}),
        ];
        let ix = SearchIndex::build(&Catalog::new(tools), &SearchOptions::default());
        let r = ix.search("what movies are on", &Default::default());
        assert_eq!(crate::search::tests::names(&r), ["list_movies"]);
        assert!(Synonyms::only_expanded("what") && !Synonyms::only_expanded("show"));
    }
}
