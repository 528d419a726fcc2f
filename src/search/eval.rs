//! `mws search --eval`: a gold file (JSON lines `{"query", "expected": [names]}`, an empty list
//! meaning "nothing should match") run through the path `search_tools` takes, scored as top-1,
//! top-3, MRR over the top `EVAL_DEPTH`, negatives answered with nothing (and with nothing or
//! weak results), positives answered with nothing (and with weak results), and the misses. Pure: the caller reads the file and prints the figures.

use std::collections::HashSet;

use serde::Serialize;
use serde_json::Value;

use super::semantic::{Fusion, Semantic, Vectors};
use super::{QueryOptions, SearchIndex};

/// Results a query is scored over (MRR@10). A tool ranked lower counts as not found.
pub const EVAL_DEPTH: usize = 10;

/// Names shown per miss.
const MISS_SHOWN: usize = 3;

/// One line of a gold file.
#[derive(Debug, Clone, PartialEq)]
pub struct Gold {
    pub query: String,
    /// Any of these at rank 1 is a hit; empty: nothing should match.
    pub expected: Vec<String>,
}

/// A gold line that cannot be read: its 1-based line number and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct GoldError {
    pub line: usize,
    pub reason: String,
}

/// Reads a gold file's text. Blank lines are skipped; any other line that is not
/// `{"query": string, "expected": [string, ...]}` is an error (a gold set with a silently
/// dropped line gives figures for another set).
pub fn parse_gold(text: &str) -> Result<Vec<Gold>, GoldError> {
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        if l.trim().is_empty() {
            continue;
        }
        let err = |reason: String| GoldError {
            line: i + 1,
            reason,
        };
        let v: Value =
            serde_json::from_str(l).map_err(|e| err(format!("not a JSON object: {e}")))?;
        let query = v
            .get("query")
            .and_then(Value::as_str)
            .ok_or_else(|| err("\"query\" is missing or not a string".into()))?;
        let expected = v
            .get("expected")
            .and_then(Value::as_array)
            .ok_or_else(|| err("\"expected\" is missing or not a list of tool names".into()))?
            .iter()
            .map(|e| e.as_str().map(str::to_string))
            .collect::<Option<Vec<String>>>()
            .ok_or_else(|| err("\"expected\" holds something other than tool names".into()))?;
        out.push(Gold {
            query: query.to_string(),
            expected,
        });
    }
    Ok(out)
}

/// The figures of one gold set.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalReport {
    pub queries: usize,
    /// Queries with expected tools.
    pub positives: usize,
    /// Share of positives whose first result is expected.
    pub top1: f64,
    /// Share of positives with an expected tool in the first 3.
    pub top3: f64,
    /// Mean reciprocal rank of the first expected tool over the top `EVAL_DEPTH`.
    pub mrr: f64,
    /// Queries whose expected list is empty.
    pub negatives: usize,
    /// Negatives answered with no results.
    pub negatives_empty: usize,
    /// Positives answered with no results (the false-empty count).
    pub positives_empty: usize,
    /// Negatives answered with nothing or with results marked weak.
    pub negatives_weak: usize,
    /// Positives answered with results marked weak.
    pub positives_weak: usize,
    /// Expected names the catalog does not hold (a stale gold file).
    pub unknown: Vec<String>,
    /// Positives not answered first, and negatives answered with something.
    pub misses: Vec<Miss>,
}

/// A query the ranking got wrong.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    pub query: String,
    pub expected: Vec<String>,
    /// 1-based rank of the first expected tool within `EVAL_DEPTH`, if any.
    pub rank: Option<usize>,
    /// The first results.
    pub got: Vec<String>,
}

/// Embeds a query for vector ranking (`None`: rank by keywords).
pub type QueryVector<'a> = &'a dyn Fn(&str) -> Option<Vec<f32>>;

/// Runs every gold query through `search_with` (modes included, as `search_tools` does) with
/// `EVAL_DEPTH` results, and scores the reply's names in order. With `vectors`, each query is
/// embedded by the function and fused with the tools' vectors.
pub fn evaluate(
    index: &SearchIndex,
    gold: &[Gold],
    opts: &QueryOptions,
    vectors: Option<(&Vectors, QueryVector<'_>, Fusion)>,
) -> EvalReport {
    let listed = HashSet::new();
    let opts = QueryOptions {
        limit: Some(EVAL_DEPTH),
        explain: false,
        ..*opts
    };
    let names: HashSet<&str> = index.catalog().names().collect();
    let mut r = EvalReport {
        queries: gold.len(),
        ..EvalReport::default()
    };
    let (mut top1, mut top3, mut rr) = (0usize, 0usize, 0.0f64);
    for g in gold {
        for e in &g.expected {
            if !names.contains(e.as_str()) && !r.unknown.contains(e) {
                r.unknown.push(e.clone());
            }
        }
        let qv = vectors.and_then(|(_, f, _)| f(&super::typed_query(&g.query)));
        let opts = QueryOptions {
            semantic: match (vectors, &qv) {
                (Some((v, _, fusion)), Some(q)) => Some(Semantic {
                    vectors: v,
                    query: q,
                    fusion,
                }),
                _ => None,
            },
            ..opts
        };
        let reply = index.search_with(&g.query, &listed, &opts);
        let got: Vec<String> = reply.json["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|x| x["name"].as_str().map(str::to_string))
            .collect();
        let weak = got.is_empty() || reply.json["weak"] == Value::Bool(true);
        let miss = |rank| Miss {
            query: g.query.clone(),
            expected: g.expected.clone(),
            rank,
            got: got.iter().take(MISS_SHOWN).cloned().collect(),
        };
        if g.expected.is_empty() {
            r.negatives += 1;
            r.negatives_weak += usize::from(weak);
            if got.is_empty() {
                r.negatives_empty += 1;
            } else {
                r.misses.push(miss(None));
            }
            continue;
        }
        r.positives += 1;
        r.positives_empty += usize::from(got.is_empty());
        r.positives_weak += usize::from(weak && !got.is_empty());
        let rank = got
            .iter()
            .take(EVAL_DEPTH)
            .position(|n| g.expected.contains(n));
        match rank {
            Some(0) => top1 += 1,
            _ => r.misses.push(miss(rank.map(|x| x + 1))),
        }
        if rank.is_some_and(|x| x < 3) {
            top3 += 1;
        }
        if let Some(x) = rank {
            rr += 1.0 / (x + 1) as f64;
        }
    }
    let n = r.positives.max(1) as f64;
    r.top1 = top1 as f64 / n;
    r.top3 = top3 as f64 / n;
    r.mrr = rr / n;
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::search::SearchOptions;

    fn check_err(text: &str, want: &str) {
        assert_eq!(parse_gold(text).unwrap_err().to_string(), want);
    }

    #[test]
    fn gold_lines_are_strict() {
        let ok = "{\"query\":\"a\",\"expected\":[\"x\"]}\n\n{\"query\":\"b\",\"expected\":[]}\n";
        let g = parse_gold(ok).unwrap();
        assert_eq!(g.len(), 2);
        assert!(g[1].expected.is_empty());
        check_err("{}\nnope", "line 1: \"query\" is missing or not a string");
        check_err(
            "{\"query\":\"a\",\"expected\":[\"x\"]}\nnope",
            "line 2: not a JSON object: expected ident at line 1 column 2",
        );
        check_err(
            "{\"query\":\"a\",\"expected\":\"x\"}",
            "line 1: \"expected\" is missing or not a list of tool names",
        );
        check_err(
            "{\"query\":\"a\",\"expected\":[1]}",
            "line 1: \"expected\" holds something other than tool names",
        );
    }

    #[test]
    fn scores_hits_misses_and_negatives() {
        let catalog = Catalog::from_value(serde_json::json!({"tools": [
            {"name": "send_email", "description": "Send an email message"},
            {"name": "read_file", "description": "Read a file from disk"},
        ]}))
        .unwrap();
        let index = SearchIndex::build(&catalog, &SearchOptions::default());
        let gold = parse_gold(concat!(
            "{\"query\":\"send an email\",\"expected\":[\"send_email\"]}\n",
            "{\"query\":\"read a file\",\"expected\":[\"read_file\",\"gone_tool\"]}\n",
            "{\"query\":\"zebra quartz\",\"expected\":[]}\n",
        ))
        .unwrap();
        let r = evaluate(&index, &gold, &QueryOptions::default(), None);
        assert_eq!((r.queries, r.positives, r.negatives), (3, 2, 1));
        assert_eq!(r.negatives_empty, 1);
        assert_eq!(r.unknown, vec!["gone_tool".to_string()]);
        assert!(r.top3 == 1.0, "{r:?}");
        assert_eq!(r.top1 == 1.0, r.misses.is_empty());
    }
}
