//! One ranked query against the index: query words with their synonyms, BM25F scores summed over
//! words, the name-coverage bonus, the relative floor, and `--explain`. Pure; per-query scratch
//! lives in a thread-local so a query allocates only its result list.

use std::cell::RefCell;

use serde::Serialize;

use super::SearchIndex;
use super::bm25f::Index;

/// Weight of a synonym match relative to the literal query word. A tool that uses the user's own
/// word wins over one that uses a synonym; raising it toward 1 makes them equal.
pub const SYNONYM_WEIGHT: f32 = 0.7;

/// Multiplier for a tool whose name covers every query word (literally or by a synonym), e.g.
/// `drive_share_file` for "share file". Raising it lets such names beat tools with much better
/// description matches.
pub const NAME_COVERAGE_BONUS: f32 = 1.5;

/// Graded name bonus: the share of (known) query words found in the name, times this, is added
/// to the factor 1. Raising it favours names over descriptions for partial matches too.
pub const NAME_WORD_BONUS: f32 = 0.5;

/// Tools scoring below this fraction of the best score are not results (they matched only a
/// common word). Raising it returns fewer, surer results.
pub const MIN_SCORE_FRACTION: f32 = 0.15;

/// A query word and the terms it may match.
pub struct QueryWord {
    pub word: String,
    /// `(term id, weight)`: the literal term first (weight 1) if indexed, then synonyms.
    pub terms: Vec<(u32, f32, bool)>,
}

/// Why a tool scored what it did.
#[derive(Debug, Clone, Serialize)]
pub struct Explain {
    pub name: String,
    pub score: f32,
    /// Sum of the word scores before the bonus.
    pub base: f32,
    /// The name factor (see `bonus`): graded by the share of words in the name, times
    /// `NAME_COVERAGE_BONUS` when the name covers them all.
    pub name_bonus: f32,
    pub words: Vec<WordExplain>,
}

/// One query word's contribution to one tool.
#[derive(Debug, Clone, Serialize)]
pub struct WordExplain {
    pub word: String,
    /// The term that matched (the word itself or a synonym).
    pub term: String,
    pub synonym: bool,
    /// Occurrences per field: name, params, param_desc, description.
    pub tf: [u16; 4],
    /// BM25F pseudo-frequency.
    pub tf_combined: f32,
    pub idf: f32,
    pub score: f32,
}

struct Scratch {
    acc: Vec<f32>,
    best: Vec<f32>,
    touched: Vec<u32>,
    word_touched: Vec<u32>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = const { RefCell::new(Scratch {
        acc: Vec::new(), best: Vec::new(), touched: Vec::new(), word_touched: Vec::new(),
    }) };
}

impl SearchIndex {
    /// Stemmed, de-duplicated query words with their term ids.
    pub(super) fn query_words(&self, index: &Index, words: &[String]) -> Vec<QueryWord> {
        let mut out: Vec<QueryWord> = Vec::new();
        for w in words {
            if out.iter().any(|q| &q.word == w) {
                continue;
            }
            let mut terms = Vec::new();
            if let Some(t) = index.term(w) {
                terms.push((t, 1.0, false));
            }
            for s in self.synonyms.expand(w) {
                if let Some(t) = index.term(s)
                    && !terms.iter().any(|&(x, _, _)| x == t)
                {
                    terms.push((t, SYNONYM_WEIGHT, true));
                }
            }
            out.push(QueryWord {
                word: w.clone(),
                terms,
            });
        }
        out
    }

    /// Ranked `(tool, score)` over the tools `allow` accepts, best first, and how many matched.
    /// Keeps at most `limit`.
    pub(super) fn rank(
        &self,
        index: &Index,
        words: &[QueryWord],
        allow: impl Fn(u32) -> bool,
        limit: usize,
    ) -> (Vec<(u32, f32)>, usize) {
        let n = index.docs.len();
        SCRATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            s.acc.clear();
            s.acc.resize(n, 0.0);
            s.best.clear();
            s.best.resize(n, 0.0);
            s.touched.clear();
            for w in words {
                s.word_touched.clear();
                for &(t, weight, _) in &w.terms {
                    for &(d, score) in &index.postings[t as usize] {
                        if !allow(d) {
                            continue;
                        }
                        let v = score * weight;
                        let b = &mut s.best[d as usize];
                        if *b == 0.0 {
                            s.word_touched.push(d);
                        }
                        if v > *b {
                            *b = v;
                        }
                    }
                }
                for &d in &s.word_touched {
                    let a = &mut s.acc[d as usize];
                    if *a == 0.0 {
                        s.touched.push(d);
                    }
                    *a += s.best[d as usize];
                    s.best[d as usize] = 0.0;
                }
            }
            let mut out: Vec<(u32, f32)> = s
                .touched
                .iter()
                .map(|&d| (d, s.acc[d as usize] * self.bonus(index, d as usize, words)))
                .collect();
            let top = out.iter().map(|x| x.1).fold(0.0f32, f32::max);
            out.retain(|x| x.1 > 0.0 && x.1 >= top * MIN_SCORE_FRACTION);
            let matched = out.len();
            let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
            if out.len() > limit && limit > 0 {
                out.select_nth_unstable_by(limit - 1, order);
                out.truncate(limit);
            }
            out.sort_unstable_by(order);
            out.truncate(limit);
            (out, matched)
        })
    }

    /// The name factor: `1 + NAME_WORD_BONUS × share of query words the name holds` (literally
    /// or by a synonym), times `NAME_COVERAGE_BONUS` when it holds all of them. Words that occur
    /// nowhere in the catalog are left out of the share: no tool can cover them, and they would
    /// only deny the bonus to every tool alike.
    fn bonus(&self, index: &Index, doc: usize, words: &[QueryWord]) -> f32 {
        let known = words.iter().filter(|w| !w.terms.is_empty());
        let (mut n, mut covered) = (0usize, 0usize);
        for w in known {
            n += 1;
            if w.terms.iter().any(|&(t, _, _)| index.in_name(doc, t)) {
                covered += 1;
            }
        }
        if n == 0 {
            return 1.0;
        }
        let partial = 1.0 + NAME_WORD_BONUS * covered as f32 / n as f32;
        if covered == n {
            partial * NAME_COVERAGE_BONUS
        } else {
            partial
        }
    }

    /// The parts of `doc`'s score for `--explain`.
    pub(super) fn explain(&self, index: &Index, doc: usize, words: &[QueryWord]) -> Explain {
        let lens = index.docs[doc].lens;
        let mut parts = Vec::new();
        let mut base = 0.0;
        for w in words {
            let best = w
                .terms
                .iter()
                .map(|&(t, weight, syn)| {
                    let tf = index.counts(doc, t);
                    (t, syn, tf, weight * index.term_score(t, &tf, &lens))
                })
                .filter(|x| x.3 > 0.0)
                .max_by(|a, b| a.3.total_cmp(&b.3));
            if let Some((t, synonym, tf, score)) = best {
                base += score;
                let term = index
                    .terms
                    .iter()
                    .find(|(_, id)| **id == t)
                    .map(|(k, _)| k.to_string())
                    .unwrap_or_default();
                parts.push(WordExplain {
                    word: w.word.clone(),
                    term,
                    synonym,
                    tf,
                    tf_combined: index.pseudo_tf(&tf, &lens),
                    idf: index.idf[t as usize],
                    score,
                });
            }
        }
        let name_bonus = self.bonus(index, doc, words);
        Explain {
            name: self.catalog.tools()[doc]
                .get("name")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string(),
            score: base * name_bonus,
            base,
            name_bonus,
            words: parts,
        }
    }
}
