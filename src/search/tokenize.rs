//! Tokenisation for search: split names and text into words, lowercase, drop stop words, stem
//! lightly. The same function runs on tool text (at build) and on queries, so the stemmer only has
//! to be consistent, not linguistically right. Pure; must not allocate more than the tokens.

/// Words that carry no meaning for tool retrieval: articles, pronouns, auxiliaries, politeness
/// and request phrasing ("can you please help me ..."), and the debris of addresses and
/// abbreviations in queries and descriptions (`example.com`, `e.g.`, `don't`). Adding a word makes
/// it invisible to search.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "been", "but",
    "by", "can", "com", "could", "do", "does", "don", "e", "each", "eg", "etc", "example", "for",
    "from", "g", "give", "has", "have", "help", "how", "i", "ie", "if", "in", "into", "is", "it",
    "its", "just", "let", "like", "me", "more", "most", "my", "need", "of", "on", "one", "or",
    "org", "our", "please", "s", "should", "so", "some", "such", "t", "than", "that", "the",
    "their", "them", "then", "there", "these", "they", "this", "those", "to", "too", "tool", "up",
    "us", "very", "via", "want", "was", "we", "were", "which", "will", "with", "would", "www",
    "yet", "you", "your",
];

/// Shortest stem the suffix rules may leave. Raising it stems fewer short words ("used" stays).
const MIN_STEM: usize = 3;

/// Calls `emit` with each token of `text`, in order.
///
/// Splitting: any character that is not a letter or digit separates words (`_ - . / :` and
/// spaces); inside a word, a lower→upper change (`camelCase`) and the last capital of an acronym
/// run (`HTTPClient` → `http client`) start a new word; letters and digits split (`utf8` → `utf 8`
/// is not done: digits stay attached, so `v2` and `s3` survive).
pub fn for_each_token(text: &str, mut emit: impl FnMut(&str)) {
    let mut buf = String::with_capacity(16);
    let mut out = String::with_capacity(16);
    let mut prev = ' ';
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            flush(&mut buf, &mut out, &mut emit);
            prev = c;
            continue;
        }
        if !buf.is_empty() && c.is_uppercase() {
            let next_lower = chars.peek().is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                flush(&mut buf, &mut out, &mut emit);
            }
        }
        if c.is_ascii() {
            buf.push(c.to_ascii_lowercase());
        } else {
            buf.extend(c.to_lowercase());
        }
        prev = c;
    }
    flush(&mut buf, &mut out, &mut emit);
}

fn flush(buf: &mut String, out: &mut String, emit: &mut impl FnMut(&str)) {
    if buf.is_empty() {
        return;
    }
    if !is_stop_word(buf) {
        stem_into(buf, out);
        emit(out);
    }
    buf.clear();
}

/// Tokens of `text` as owned strings (for queries and tests; the index uses `for_each_token`).
pub fn tokens(text: &str) -> Vec<String> {
    let mut v = Vec::new();
    for_each_token(text, |t| v.push(t.to_string()));
    v
}

pub fn is_stop_word(w: &str) -> bool {
    STOP_WORDS.binary_search(&w).is_ok()
}

/// Light stemming into `out`, justified by what tool text and queries actually vary on: plurals
/// (`files`, `entries`, `searches`), participles and gerunds (`shared`, `sharing`, `listing`), and
/// a final silent `e` so that `share`/`shared`/`sharing` meet at `shar`. No Porter-style
/// derivational rules (`-ation`, `-ize`): they merge words tools keep apart (`organization` vs
/// `organize`). Plurals go first, then `-ing` (which must leave more than `MIN_STEM` letters:
/// `string`, `thing` stay) or `-ed`, then a final `e`. A doubled final consonant left by
/// `-ing`/`-ed` is undoubled (`running` → `run`, `calling` keeps `ll`).
pub fn stem_into(w: &str, out: &mut String) {
    out.clear();
    if !w.is_ascii() || w.len() <= MIN_STEM {
        out.push_str(w);
        return;
    }
    let long_enough = |s: &&str| s.len() >= MIN_STEM;
    // Plurals first, so that `meetings` and `meeting` meet below.
    let w = if let Some(s) = w.strip_suffix("ies").filter(long_enough) {
        out.push_str(s);
        out.push('y');
        return;
    } else if w.ends_with("sses")
        || ["ches", "shes", "xes", "zes"]
            .iter()
            .any(|x| w.ends_with(x))
    {
        &w[..w.len() - 2]
    } else if w.ends_with("ss") || w.ends_with("us") || w.ends_with("is") {
        w
    } else {
        w.strip_suffix('s').filter(long_enough).unwrap_or(w)
    };
    if let Some(s) = w.strip_suffix("ied").filter(long_enough) {
        out.push_str(s);
        out.push('y');
        return;
    }
    let (base, undouble) = match w
        .strip_suffix("ing")
        .filter(|s| s.len() > MIN_STEM)
        .or_else(|| w.strip_suffix("ed").filter(long_enough))
    {
        Some(s) => (s, true),
        None => (w, false),
    };
    let base = match base.strip_suffix('e') {
        Some(s) if s.len() >= MIN_STEM => s,
        _ => base,
    };
    out.push_str(base);
    let b = out.as_bytes();
    if undouble && b.len() > MIN_STEM {
        let (x, y) = (b[b.len() - 1], b[b.len() - 2]);
        if x == y && !b"lsz".contains(&x) && !b"aeiou".contains(&x) {
            out.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn splits_and_stems() {
        let cases: &[(&str, &[&str])] = &[
            ("drive_share_file", &["driv", "shar", "fil"]),
            ("mail-list.labels/x", &["mail", "list", "label", "x"]),
            ("getHTTPClient", &["get", "http", "client"]),
            ("npmVulnerabilities", &["npm", "vulnerability"]),
            (
                "Sharing shared files share",
                &["shar", "shar", "fil", "shar"],
            ),
            ("searches boxes addresses", &["search", "box", "address"]),
            ("running calling listed", &["run", "call", "list"]),
            ("string status analysis", &["string", "status", "analysis"]),
            ("Can you please send the email to me", &["send", "email"]),
            (
                "lol-champion-analysis v2 s3",
                &["lol", "champion", "analysis", "v2", "s3"],
            ),
            ("entries replied", &["entry", "reply"]),
        ];
        for (input, want) in cases {
            assert_eq!(tokens(input), *want, "{input}");
        }
    }
}
