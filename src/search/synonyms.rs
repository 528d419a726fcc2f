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
    &["fetch", "retrieve", "read", "show", "view", "download"],
    &["list", "enumerate", "browse"],
    &["event", "meeting", "appointment", "invite", "invitation"],
    &["calendar", "schedule", "agenda"],
    &["share", "grant"],
    &["permission", "access", "role"],
    &["folder", "directory", "dir"],
    &["image", "picture", "screenshot", "photo", "snapshot"],
    &["page", "website", "site", "webpage", "url", "link"],
    &["navigate", "visit", "goto", "open"],
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
    &["upload", "store", "save", "put"],
    &["rename", "retitle"],
    &["label", "tag", "folder"],
    &["history", "log", "commit"],
    &["diff", "compare", "difference"],
    &["blame", "author", "authorship"],
    &["text", "content", "body"],
    &["type", "enter", "input", "write"],
    &["tab", "window"],
    &["draft", "compose"],
    &["forward", "resend"],
    &["read", "seen"],
    &["cancel", "delete"],
    &["accept", "decline", "rsvp"],
];

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
        for (key, values) in aliases {
            for k in stemmed(key) {
                for v in values.iter().flat_map(|v| stemmed(v)) {
                    if v != k {
                        push_unique(map.entry(k.clone()).or_default(), &v);
                    }
                }
            }
        }
        Synonyms { map }
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
        assert!(s.expand("zebra").is_empty());
    }
}
