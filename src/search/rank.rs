//! One ranked query against the index: query words with their synonyms, BM25F scores summed over
//! words, the name-coverage bonus, the relative floor, and `--explain`. Pure; per-query scratch
//! lives in a thread-local so a query allocates only its result list.

use std::cell::RefCell;
use std::collections::HashSet;

use serde::Serialize;

use super::SearchIndex;
use super::bm25f::Index;
use super::query::step;
use super::synonyms::Synonyms;
use super::takes;

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

/// A ranked query whose best tool's `confidence` is below this gets no results and the hint
/// instead: its words match only common words or a few words of a request about something the
/// catalog lacks. Set on the project's own gold sets with negatives (fixtures/eval): 0.4 answers
/// 13 of 14 negatives on catalog.json with nothing for one lost top-3 query in 50, and costs the
/// MetaTool development set 1.2 points of top-3 (4.8% of its queries come back empty, mostly
/// misses already). Raising it answers more requests the catalog cannot serve with nothing, and
/// more that it can serve too.
pub const MIN_CONFIDENCE: f32 = 0.4;

/// Catalogs with fewer tools always answer a ranked query that matches anything: over a handful
/// of tools idf cannot tell a rare word from a common one (a word in 2 of 3 tools), and the whole
/// catalog is a short list anyway. Raising it keeps weak matches in larger catalogs too.
pub const MIN_TOOLS_FOR_NOTHING: usize = 20;

/// Share of the most a query's words could score that its best tool must reach when that most is
/// low (see `min_confidence`): a one-word query of a word many tools share still gets them.
pub const MIN_SHARE: f32 = 0.3;

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
    /// The usage prior's factor (1: never used, or no prior); the rank is by
    /// `score × server factor × prior`.
    pub prior: f32,
    /// The server's part: its purpose's factor and the query words it holds (`purpose.rs`).
    pub server: Option<super::ServerPart>,
    /// The values' part: the factor for taking a kind of value the request holds (a URL, a
    /// file path; `takes.rs`), already in `score`.
    pub values: Option<takes::ValuePart>,
    /// The cosine of the query's vector with the tool's, when vectors ranked too.
    pub cosine: Option<f32>,
    /// `base` in units of an unseen word's idf (`SearchIndex::confidence`).
    pub confidence: f32,
    /// The confidence the best tool needs, else nothing matches (`min_confidence`).
    pub min_confidence: f32,
    /// It holds only synonyms of the query's words, and the query has words no tool holds: as
    /// the best, a weak match whatever its confidence (`only_synonyms`).
    pub only_synonyms: bool,
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
    /// The word's contribution: its best term's score plus `other_terms`.
    pub score: f32,
    /// What the word's other matching terms add (`OTHER_TERMS_WEIGHT` × their scores).
    pub other_terms: f32,
}

/// Per-tool accumulators of one query, as long as the largest index queried on this thread and
/// all zero between queries (a query resets only the tools it touched).
#[derive(Default)]
struct Scratch {
    /// Sum of the words' best term scores.
    acc: Vec<f32>,
    /// The current word's best term score.
    best: Vec<f32>,
    /// The current word's term scores summed.
    sum: Vec<f32>,
    /// Query words whose terms occur in the tool's name.
    covered: Vec<u32>,
    /// Whether the current word was already counted in `covered`.
    named: Vec<bool>,
    touched: Vec<u32>,
    word_touched: Vec<u32>,
}

/// How much a word's other matching terms (the word and its synonyms) add beside its best one,
/// as a share of their scores. A tool that matches a word several ways ("email" in the
/// description, "message" in the name) is then ahead of one that matches it once. Set on the
/// gold sets (2026-11-30): fixtures top-1 74 → 78%, MRR 0.853 → 0.869; MetaTool top-1 51.5%, MRR
/// 0.604 both unchanged, top-3 67.2 → 66.9%. Higher values lost MetaTool MRR (0.3: 0.602).
const OTHER_TERMS_WEIGHT: f32 = 0.1;

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

impl SearchIndex {
    /// Stemmed, de-duplicated query words with their term ids, each widened by its synonyms
    /// unless it is in `literal`. Sets, not scans of the list: a query of n distinct words must
    /// not cost n² comparisons (64,000 words once took 13.6 s).
    pub(super) fn query_words(
        &self,
        index: &Index,
        words: &[String],
        literal: &HashSet<String>,
    ) -> Vec<QueryWord> {
        let all: HashSet<&str> = words.iter().map(String::as_str).collect();
        let mut seen: HashSet<&str> = HashSet::with_capacity(all.len());
        let mut out: Vec<QueryWord> = Vec::with_capacity(all.len());
        for w in words {
            step(1);
            if !seen.insert(w) {
                continue;
            }
            let mut terms = Vec::new();
            if let Some(t) = index.term(w).filter(|_| !Synonyms::only_expanded(w)) {
                terms.push((t, 1.0, false));
            }
            let expand = if literal.contains(w) {
                &[][..]
            } else {
                self.synonyms.expand(w)
            };
            for s in expand {
                step(1);
                // A synonym that is itself a word of the query is scored as that word already;
                // counting it again here would score it twice ("send an email": email → send).
                if all.contains(s.as_str()) {
                    continue;
                }
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
        kinds: u8,
        allow: impl Fn(u32) -> bool,
        limit: usize,
    ) -> (Vec<(u32, f32)>, usize) {
        let n = index.n_docs();
        let known = words.iter().filter(|w| !w.terms.is_empty()).count();
        SCRATCH.with(|s| {
            let s = &mut *s.borrow_mut();
            if s.acc.len() < n {
                s.acc.resize(n, 0.0);
                s.best.resize(n, 0.0);
                s.sum.resize(n, 0.0);
                s.covered.resize(n, 0);
                s.named.resize(n, false);
            }
            s.touched.clear();
            for w in words {
                s.word_touched.clear();
                for &(t, weight, _) in &w.terms {
                    for p in index.postings(t) {
                        if !allow(p.doc) {
                            continue;
                        }
                        let d = p.doc as usize;
                        let v = p.score * weight;
                        if s.best[d] == 0.0 {
                            s.word_touched.push(p.doc);
                        }
                        if v > s.best[d] {
                            s.best[d] = v;
                        }
                        s.sum[d] += v;
                        s.named[d] |= p.in_name;
                    }
                }
                for &d in &s.word_touched {
                    let d = d as usize;
                    if s.acc[d] == 0.0 {
                        s.touched.push(d as u32);
                    }
                    s.acc[d] += s.best[d] + OTHER_TERMS_WEIGHT * (s.sum[d] - s.best[d]);
                    s.best[d] = 0.0;
                    s.sum[d] = 0.0;
                    s.covered[d] += u32::from(s.named[d]);
                    s.named[d] = false;
                }
            }
            let takes = (kinds != 0).then(|| self.takes());
            let mut out: Vec<(u32, f32)> = Vec::with_capacity(s.touched.len());
            for &d in &s.touched {
                let i = d as usize;
                let value = takes.map_or(1.0, |t| takes::factor(t[i], kinds));
                let named = name_factor(s.covered[i] as usize, known);
                out.push((d, s.acc[i] * named * value));
                s.acc[i] = 0.0;
                s.covered[i] = 0;
            }
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
        name_factor(covered, n)
    }

    /// How strongly `doc` answers the query: its score before the name factor, in units of the
    /// idf of a term no tool has (so about 1 per rare query word the tool holds, less for common
    /// words, synonyms and words the tool mentions once in a long text). Comparable across
    /// catalogs and query lengths, unlike the raw score.
    pub(super) fn confidence(&self, index: &Index, doc: usize, words: &[QueryWord]) -> f32 {
        let lens = index.lens(doc);
        let mut got = 0.0f32;
        for w in words {
            let (mut best, mut all) = (0.0f32, 0.0f32);
            for &(t, weight, _) in &w.terms {
                let v = weight * index.term_score(t, &index.counts(doc, t), &lens);
                best = best.max(v);
                all += v;
            }
            got += best + OTHER_TERMS_WEIGHT * (all - best);
        }
        got / unseen_idf(index.n_docs())
    }

    /// Whether `top`, the best keyword match, is a weak one: under the confidence bar
    /// (`min_confidence`), or `only_synonyms`.
    pub(super) fn weak_best(&self, index: &Index, top: usize, words: &[QueryWord]) -> bool {
        self.confidence(index, top, words) < self.min_confidence(index, words)
            || only_synonyms(index, top, words)
    }

    /// The confidence below which a query gets nothing: `MIN_CONFIDENCE`, lowered for queries
    /// that could not reach it (only common words, or a synonym alone) to `MIN_SHARE` of the
    /// most their words could score. A word the catalog lacks entirely (no term, no synonym)
    /// could have scored a full unit: it keeps the bar up. Zero (never nothing) in catalogs of
    /// fewer than `MIN_TOOLS_FOR_NOTHING` tools.
    pub(super) fn min_confidence(&self, index: &Index, words: &[QueryWord]) -> f32 {
        if index.n_docs() < MIN_TOOLS_FOR_NOTHING {
            return 0.0;
        }
        let unseen = unseen_idf(index.n_docs());
        let most: f32 = words
            .iter()
            .map(|w| {
                w.terms
                    .iter()
                    .map(|&(t, weight, _)| weight * index.idf[t as usize] / unseen)
                    .fold(None, |m: Option<f32>, v| Some(m.map_or(v, |m| m.max(v))))
                    .unwrap_or(1.0)
            })
            .sum();
        MIN_CONFIDENCE.min(MIN_SHARE * most)
    }

    /// The parts of `doc`'s score for `--explain`; `kinds` are the kinds of value the request
    /// holds (`entities::read`).
    pub(super) fn explain(
        &self,
        index: &Index,
        doc: usize,
        words: &[QueryWord],
        kinds: u8,
    ) -> Explain {
        let lens = index.lens(doc);
        let mut parts = Vec::new();
        let mut base = 0.0;
        for w in words {
            let scored = w.terms.iter().map(|&(t, weight, syn)| {
                let tf = index.counts(doc, t);
                (t, syn, tf, weight * index.term_score(t, &tf, &lens))
            });
            let all: f32 = scored.clone().map(|x| x.3).sum();
            let best = scored
                .filter(|x| x.3 > 0.0)
                .max_by(|a, b| a.3.total_cmp(&b.3));
            if let Some((t, synonym, tf, best_score)) = best {
                let other_terms = OTHER_TERMS_WEIGHT * (all - best_score);
                let score = best_score + other_terms;
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
                    other_terms,
                });
            }
        }
        let name_bonus = self.bonus(index, doc, words);
        let values = (kinds != 0)
            .then(|| takes::part(self.takes()[doc], kinds))
            .flatten();
        Explain {
            name: self.catalog.tools()[doc]
                .get("name")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string(),
            score: base * name_bonus * values.as_ref().map_or(1.0, |v| v.factor),
            base,
            name_bonus,
            prior: 1.0,
            server: None,
            values,
            cosine: None,
            confidence: self.confidence(index, doc, words),
            min_confidence: self.min_confidence(index, words),
            only_synonyms: only_synonyms(index, doc, words),
            words: parts,
        }
    }
}

/// Whether `doc` holds none of the query's words as written, only synonyms of them, while the
/// query has a word the catalog lacks entirely: as the best match it is weak however well the
/// synonyms score ("send an email to my manager": `send` reaches an HTTP `post` tool by a
/// synonym, and no tool has `manager`). Never in catalogs of fewer than
/// `MIN_TOOLS_FOR_NOTHING` tools.
fn only_synonyms(index: &Index, doc: usize, words: &[QueryWord]) -> bool {
    index.n_docs() >= MIN_TOOLS_FOR_NOTHING
        && words.iter().any(|w| w.terms.is_empty())
        && !words.iter().any(|w| {
            w.terms
                .iter()
                .any(|&(t, _, syn)| !syn && index.counts(doc, t) != [0; 4])
        })
}

/// The idf of a term no tool has (BM25's idf at document frequency 0).
fn unseen_idf(n_docs: usize) -> f32 {
    (1.0 + (n_docs as f32 + 0.5) / 0.5).ln()
}

/// `bonus` given the count of covered words and of known words.
fn name_factor(covered: usize, known: usize) -> f32 {
    if known == 0 {
        return 1.0;
    }
    let partial = 1.0 + NAME_WORD_BONUS * covered as f32 / known as f32;
    if covered == known {
        partial * NAME_COVERAGE_BONUS
    } else {
        partial
    }
}
