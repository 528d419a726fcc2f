//! The hints of a ranked reply with nothing close: a weak reply's (its results are the nearest
//! tools) and an empty one's, with what to try instead, and the request's own words that no
//! tool's text holds ("spotify"): what tells a model that the server a request needs is not
//! connected. Pure; the words are the request's, shown in the reply only, never logged.

use std::collections::HashSet;

use super::SearchIndex;
use super::query::step;
use super::rank::QueryWord;
use super::synonyms::Synonyms;
use super::tokenize::tokens;

/// Most of the request's words a weak or empty reply names as held by no tool.
const UNKNOWN_SHOWN: usize = 3;

/// Longest word (in bytes) such a hint names; a longer one is left out, not cut.
const UNKNOWN_MAX_BYTES: usize = 32;

/// The hint of a weak reply: its results are the nearest tools, none of them close.
pub(super) fn weak(ix: &SearchIndex, unknown: &[String]) -> String {
    format!(
        "no close match{}: these are the nearest tools; call one only if it does what is asked, else {}",
        held_by_none(unknown, " (no tool's text holds "),
        try_instead(ix)
    )
}

/// ` (no tool's text holds "a", "b" or "c")` with `lead` before the words; empty for none.
fn held_by_none(unknown: &[String], lead: &str) -> String {
    let quoted: Vec<String> = unknown.iter().map(|w| format!("\"{w}\"")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => format!("{lead}{last})"),
        Some((last, rest)) => format!("{lead}{} or {last})", rest.join(", ")),
    }
}

/// The request's own words, as typed, with a stem no tool's text holds (no term, no synonym; a
/// question word counts only as what it asks for and is never named): at most `UNKNOWN_SHOWN`,
/// each at most `UNKNOWN_MAX_BYTES` of letters, digits, `-` and `'` (a value such as a URL or
/// `6:30` is never named). The words `entities` put in for values are not the user's and are left
/// out. Where more qualify, the most telling are named, in request order: a name first (a capital
/// past the request's first letter: "SMS", "Spotify"), then the longer words ("playlist" before
/// "play"), then the earlier.
pub(super) fn unknown_words(
    text: &str,
    words: &[QueryWord],
    derived: &HashSet<String>,
) -> Vec<String> {
    let unseen: HashSet<&str> = words
        .iter()
        .filter(|w| {
            w.terms.is_empty() && !derived.contains(&w.word) && !Synonyms::only_expanded(&w.word)
        })
        .map(|w| w.word.as_str())
        .collect();
    if unseen.is_empty() {
        return Vec::new();
    }
    // (position, word, whether it reads as a name); a word again in any case counts once.
    let mut found: Vec<(usize, &str, bool)> = Vec::new();
    let mut named: HashSet<String> = HashSet::new();
    for (at, raw) in text.split_whitespace().enumerate() {
        step(1);
        let w = raw.trim_matches(|c: char| !c.is_alphanumeric());
        let plain = w
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '\'');
        if w.is_empty() || w.len() > UNKNOWN_MAX_BYTES || !plain {
            continue;
        }
        // Lowercased whole, not by ASCII: "Ärzte" and "ärzte" are one word.
        let lower = w.to_lowercase();
        if named.contains(&lower) {
            continue;
        }
        if tokens(w).iter().any(|t| unseen.contains(t.as_str())) {
            named.insert(lower);
            let capitals = w.chars().skip(usize::from(at == 0)).any(char::is_uppercase);
            found.push((at, w, capitals));
        }
    }
    found.sort_by_key(|&(at, w, name)| (!name, std::cmp::Reverse(w.chars().count()), at));
    found.truncate(UNKNOWN_SHOWN);
    found.sort_by_key(|&(at, _, _)| at);
    found.into_iter().map(|(_, w, _)| w.to_string()).collect()
}

/// What to try when nothing matches: other words, a backend name, the whole catalog.
fn try_instead(ix: &SearchIndex) -> String {
    let names = &ix.backends.names;
    let backends = if names.is_empty() {
        String::new()
    } else {
        let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
        format!(", a backend name ({})", shown.join(", "))
    };
    format!(
        "try other words (what the tool does, or what it acts on){backends}, or an empty query to list every tool"
    )
}

/// The hint of a reply with no results: inside a backend the query named, how to list its tools;
/// else the words no tool holds and what to try.
pub(super) fn no_match(ix: &SearchIndex, restrict: Option<u32>, unknown: &[String]) -> String {
    if let Some(b) = restrict {
        let name = &ix.backends.names[b as usize];
        return format!(
            "no {name} tool matches these words; search \"{name}\" alone to list its tools, or try other words"
        );
    }
    format!(
        "no tool matches these words{}; {}",
        held_by_none(unknown, " (none holds "),
        try_instead(ix)
    )
}

#[cfg(test)]
#[path = "hints_tests.rs"]
mod tests;
