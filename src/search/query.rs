//! The bounds of one query (`search_tools` and `mws search` refuse a query past them before any
//! ranking), and the step count tests use to check that a query's cost grows linearly with it.
//! Pure.

/// Longest query in bytes. The longest query of the gold sets is 777 bytes (a MetaTool
/// paragraph); raising the cap lets longer pasted text through, each byte costing ranking time.
pub const MAX_QUERY_BYTES: usize = 4 * 1024;

/// Most whitespace-separated words in a query. The longest gold query has 130; raising the cap
/// lets longer text through, each word costing a dictionary lookup and its postings.
pub const MAX_QUERY_WORDS: usize = 256;

/// Why a query was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueryError {
    #[error(
        "query too long: {bytes} bytes, at most {MAX_QUERY_BYTES}; search with a few words that \
         say what the tool does"
    )]
    TooLong { bytes: usize },
    #[error(
        "query has too many words: more than {MAX_QUERY_WORDS}; search with a few words that say \
         what the tool does"
    )]
    TooManyWords,
}

/// `Ok` when `query` is within `MAX_QUERY_BYTES` and `MAX_QUERY_WORDS` (counting stops at the
/// first word past the cap).
pub fn check(query: &str) -> Result<(), QueryError> {
    if query.len() > MAX_QUERY_BYTES {
        return Err(QueryError::TooLong { bytes: query.len() });
    }
    if query.split_whitespace().nth(MAX_QUERY_WORDS).is_some() {
        return Err(QueryError::TooManyWords);
    }
    Ok(())
}

#[cfg(test)]
thread_local! {
    /// Units of work the queries on this thread cost (see `step`).
    static STEPS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts `n` units of per-word work of a query (a comparison, a lookup), in tests only.
#[inline]
pub(super) fn step(n: usize) {
    #[cfg(test)]
    STEPS.with(|s| s.set(s.get() + n as u64));
    #[cfg(not(test))]
    let _ = n;
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::catalog::Catalog;
    use crate::search::{SearchIndex, SearchOptions};

    #[test]
    fn bounds_refuse_long_queries_with_a_message() {
        assert_eq!(check("send an email"), Ok(()));
        assert_eq!(check(&"x".repeat(MAX_QUERY_BYTES)), Ok(()));
        let long = "x".repeat(MAX_QUERY_BYTES + 1);
        let e = check(&long).unwrap_err();
        assert_eq!(
            e.to_string(),
            "query too long: 4097 bytes, at most 4096; search with a few words that say what the \
             tool does"
        );
        let words = "a ".repeat(MAX_QUERY_WORDS);
        assert_eq!(check(&words), Ok(()));
        let e = check(&format!("{words}b")).unwrap_err();
        assert_eq!(e, QueryError::TooManyWords);
        assert!(
            e.to_string()
                .starts_with("query has too many words: more than 256")
        );
    }

    /// Steps one query of `words` distinct words costs on the project catalog.
    fn steps(ix: &SearchIndex, words: usize) -> u64 {
        let q: Vec<String> = (0..words)
            .map(|i| match i % 4 {
                0 => "send".to_string(), // repeated, with synonyms
                1 => "email".to_string(),
                _ => format!("q{i}z"),
            })
            .collect();
        let before = STEPS.with(|s| s.get());
        let r = ix.search(&q.join(" "), &HashSet::new());
        assert_eq!(r.mode, "ranked");
        STEPS.with(|s| s.get()) - before
    }

    /// Doubling the words of a query at most doubles its per-word work (a query of 64,000 words
    /// once cost 13.6 s, four times the 32,000-word one).
    #[test]
    fn query_cost_is_linear_in_its_words() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/catalog.json");
        let ix = SearchIndex::build(
            &Catalog::load_file(&path).unwrap(),
            &SearchOptions::default(),
        );
        let (one, two) = (steps(&ix, 2_000), steps(&ix, 4_000));
        assert!(one > 0);
        assert!(
            two <= one * 2 + one / 10,
            "2,000 words: {one} steps; 4,000 words: {two} steps"
        );
    }
}
