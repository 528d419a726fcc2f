//! Servers' purpose in the ranking: what each backend is for, in words (its name, the label the
//! config's `backendHints` gives it, the `description` the user wrote for the server, and the
//! server's own `serverInfo` title and description and `instructions`). A query word found in a
//! backend's purpose lifts that backend's tools by a bounded factor, weighted by how few
//! backends share the word, so "remember" lifts a memory server whose instructions say so, and
//! "search", in every other backend's text, lifts little. `--explain` shows the factor and the
//! words. Pure.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use super::backend::Backends;
use super::tokenize::tokens;

/// Most a backend's tools' scores are multiplied by: `1 + PURPOSE_BOOST`, reached when every
/// query word is in its purpose and in no other backend's. Raising it lets a server's purpose
/// outweigh what its tools' own text says.
pub const PURPOSE_BOOST: f32 = 0.3;

/// Characters of a server's purpose text that are read (instructions can be pages long; their
/// opening says what the server is for).
pub const PURPOSE_CHARS: usize = 600;

/// Ranked candidates beyond the limit that the purpose factor may bring into it.
pub const PURPOSE_EXTRA: usize = 8;

/// Each backend's purpose words and how many backends hold each word.
#[derive(Debug, Clone, Default)]
pub struct Purposes {
    /// Per backend (index into `Backends::names`): its purpose's tokens.
    words: Vec<HashSet<String>>,
    /// Token → backends whose purpose holds it.
    df: HashMap<String, u32>,
}

/// A backend's part of one tool's score, for `--explain`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerPart {
    pub backend: String,
    /// The factor the tool's score was multiplied by.
    pub factor: f32,
    /// The query words (as tokens) found in the backend's purpose.
    pub words: Vec<String>,
}

impl Purposes {
    /// From the backends' names, their `backendHints` labels and `texts` (backend → what the
    /// user and the server say it is for).
    pub fn build(
        backends: &Backends,
        hints: &BTreeMap<String, String>,
        texts: &BTreeMap<String, String>,
    ) -> Purposes {
        let mut words = Vec::with_capacity(backends.names.len());
        let mut df: HashMap<String, u32> = HashMap::new();
        for name in &backends.names {
            let mut text = name.replace(['-', '_', '.'], " ");
            for extra in [hints.get(name), texts.get(name)].into_iter().flatten() {
                text.push(' ');
                text.extend(extra.chars().take(PURPOSE_CHARS));
            }
            let set: HashSet<String> = tokens(&text).into_iter().collect();
            for w in &set {
                *df.entry(w.clone()).or_default() += 1;
            }
            words.push(set);
        }
        Purposes { words, df }
    }

    /// The part backend `b` has in a score for the query's `tokens`, `None` when no query word
    /// is in its purpose (or there is one backend: its purpose tells no tool from another).
    pub fn part(&self, b: u32, names: &[String], query: &[String]) -> Option<ServerPart> {
        let n = self.words.len();
        if n < 2 || query.is_empty() {
            return None;
        }
        let set = self.words.get(b as usize)?;
        let most = (1.0 + n as f32).ln();
        let mut got = 0.0f32;
        let mut found = Vec::new();
        let mut seen = HashSet::new();
        for w in query {
            if !seen.insert(w.as_str()) || !set.contains(w) {
                continue;
            }
            let df = self.df.get(w).copied().unwrap_or(1) as f32;
            got += (1.0 + n as f32 / df).ln();
            found.push(w.clone());
        }
        if found.is_empty() {
            return None;
        }
        let share = (got / (seen.len() as f32 * most)).min(1.0);
        Some(ServerPart {
            backend: names[b as usize].clone(),
            factor: 1.0 + PURPOSE_BOOST * share,
            words: found,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn purposes(texts: &[(&str, &str)]) -> (Purposes, Backends) {
        let names = [
            "memory__create_entities",
            "github__search_issues",
            "maps__geocode",
        ];
        let b = Backends::recognise(names.iter().copied(), &BTreeMap::new());
        let texts = texts
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        (Purposes::build(&b, &BTreeMap::new(), &texts), b)
    }

    /// A word only one backend's purpose holds lifts it more than a word every backend's does;
    /// the factor stays within `1 + PURPOSE_BOOST`.
    #[test]
    fn rare_purpose_words_lift_more() {
        let (p, b) = purposes(&[
            (
                "memory",
                "Remembers facts about the user; search them later",
            ),
            ("github", "Search GitHub issues"),
            ("maps", "Search places"),
        ]);
        let id = |n: &str| b.find(n).unwrap();
        let rare = p
            .part(id("memory"), &b.names, &tokens("remember this"))
            .unwrap();
        let common = p
            .part(id("memory"), &b.names, &tokens("search this"))
            .unwrap();
        assert!(rare.factor > common.factor, "{rare:?} {common:?}");
        assert!(rare.factor <= 1.0 + PURPOSE_BOOST);
        assert_eq!(rare.words, vec!["remember".to_string()]);
        assert_eq!(p.part(id("github"), &b.names, &tokens("remember")), None);
        let by_name = p.part(id("maps"), &b.names, &tokens("maps")).unwrap();
        assert_eq!(by_name.backend, "maps");
    }

    fn tool(name: &str, description: &str, param: &str) -> serde_json::Value {
        serde_json::json!({"name": name, "description": description, "inputSchema": {
            "type": "object", "properties": {"x": {"type": "string", "description": param}}}})
    }

    fn ranked(ix: &crate::search::SearchIndex, q: &str) -> (Vec<String>, serde_json::Value) {
        let opts = crate::search::QueryOptions {
            explain: true,
            ..Default::default()
        };
        let r = ix.search_with(q, &HashSet::new(), &opts);
        let names = r.json["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        (names, serde_json::to_value(&r.explain).unwrap())
    }

    /// The user's description of a server lifts its tool past another backend's that matches
    /// the same words, and `--explain` shows the server's part.
    #[test]
    fn a_description_lifts_its_servers_tools_and_explain_shows_it() {
        let catalog = crate::catalog::Catalog::new(vec![
            tool("files__save_item", "Save an item", "the item"),
            tool("notes__save_item", "Save an item", "the item"),
        ]);
        let plain = crate::search::SearchIndex::build(&catalog, &Default::default());
        assert_eq!(ranked(&plain, "save a fact item").0[0], "files__save_item");
        let mut purposes = BTreeMap::new();
        purposes.insert(
            "notes".to_string(),
            "Facts the user asks to remember".to_string(),
        );
        let opts = crate::search::SearchOptions {
            purposes,
            ..Default::default()
        };
        let ix = crate::search::SearchIndex::build(&catalog, &opts);
        let (names, explain) = ranked(&ix, "save a fact item");
        assert_eq!(names[0], "notes__save_item");
        assert_eq!(explain[0]["server"]["backend"], "notes");
        assert_eq!(explain[0]["server"]["words"], serde_json::json!(["fact"]));
        assert!(explain[0]["server"]["factor"].as_f64().unwrap() > 1.0);
        assert!(explain[1]["server"].is_null());
    }

    /// A query naming a backend whose tools match its other words only weakly gets the
    /// backend's other tools after them.
    #[test]
    fn a_named_backend_with_weak_matches_shows_its_other_tools() {
        let mut tools = vec![
            tool(
                "time__convert_time",
                "Convert time between timezones",
                "e.g. Asia/Tokyo",
            ),
            tool(
                "time__get_current_time",
                "Get the current time",
                "IANA zone",
            ),
        ];
        for i in 0..30 {
            tools.push(tool(
                &format!("other__tool_{i}"),
                "Does other things",
                "a value",
            ));
        }
        let ix = crate::search::SearchIndex::build(
            &crate::catalog::Catalog::new(tools),
            &Default::default(),
        );
        let (names, _) = ranked(&ix, "what time is it in tokyo");
        assert_eq!(names, ["time__convert_time", "time__get_current_time"]);
    }

    /// One backend: its purpose cannot tell its tools apart.
    #[test]
    fn one_backend_has_no_part() {
        let b = Backends::recognise(["memory__a", "memory__b"].into_iter(), &BTreeMap::new());
        let p = Purposes::build(&b, &BTreeMap::new(), &BTreeMap::new());
        assert_eq!(p.part(0, &b.names, &tokens("memory")), None);
    }
}
