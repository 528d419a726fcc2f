//! The vector side of ranking: tool vectors in catalog order, the text a tool is embedded from,
//! cosine scores, and their fusion with the keyword ranking (docs/search.md, Semantic ranking).
//! Pure: vectors come in computed (`embed.rs` or an endpoint) and nothing is embedded here.

use serde_json::Value;

use super::SearchIndex;

/// How keyword and vector rankings are fused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fusion {
    /// Reciprocal-rank fusion: `1/(RRF_K + keyword rank) + 1/(RRF_K + vector rank)`.
    Rrf,
    /// Calibrated sum: `share × keyword score / best keyword score + (1 − share) × cosine`, the
    /// share by the query's length (`keyword_share`).
    Sum,
}

/// The fusion `search_tools` uses (docs/search.md says why).
pub const FUSION: Fusion = Fusion::Sum;

/// RRF's rank offset. Raising it flattens the difference between the first ranks.
pub const RRF_K: f32 = 60.0;

/// Share of the keyword score in the calibrated sum for a query of up to `LONG_QUERY_FROM`
/// words. Raising it trusts literal matches more than meaning.
pub const KEYWORD_SHARE: f32 = 0.3;

/// Share of the keyword score for a query of `LONG_QUERY_AT` words or more. In a long request
/// most words are incidental ("I'm planning a trip and need …"), and the best keyword score
/// follows whichever tool shares the most of them; the sentence's vector keeps its meaning.
/// Between the two lengths the share falls linearly. Set on the development sets (docs/search.md,
/// Figures): MetaTool's requests (median 19 words) gain 3 points of top-3, the project's
/// (median 7) are unchanged.
pub const KEYWORD_SHARE_LONG: f32 = 0.1;

/// The keyword best's confidence (`SearchIndex::confidence`: about one unit per rare word of the
/// request the tool holds) from which a long query keeps the whole `KEYWORD_SHARE`: its words
/// found a tool, and the sentence's vector must not drown that ("how do I set up middleware in
/// Next.js 15? check the current docs" names the docs tool's words). Set on the gold sets
/// (docs/search.md, Figures): top-1 with the model +2.2 points on the real set, +2 on livemcp,
/// +0.5 on MetaTool, top-3 unchanged or +0.2; 0.5 lost MetaTool top-3 (78.5%), 1.5 gained
/// nothing.
pub const CONFIDENT_KEYWORDS: f32 = 1.0;

/// Words (split at whitespace) from which a query counts as long (see `KEYWORD_SHARE_LONG`).
pub const LONG_QUERY_FROM: usize = 8;

/// Words from which a query has the whole `KEYWORD_SHARE_LONG`.
pub const LONG_QUERY_AT: usize = 16;

/// The keyword share of a query of `words` words.
pub fn keyword_share(words: usize) -> f32 {
    let t = (words.saturating_sub(LONG_QUERY_FROM) as f32
        / (LONG_QUERY_AT - LONG_QUERY_FROM) as f32)
        .min(1.0);
    KEYWORD_SHARE * (1.0 - t) + KEYWORD_SHARE_LONG * t
}

/// Tools ranked by vector beyond the keyword matches: the nearest this many are candidates.
/// Raising it costs a longer sort per query.
pub const VECTOR_DEPTH: usize = 50;

/// A query whose nearest tool is below this cosine, and whose keyword match is weak too, gets
/// nothing (the vector half of "nothing matches"). Raising it answers more with nothing.
pub const MIN_COSINE: f32 = 0.35;

/// A query whose nearest tool is below this cosine gets nothing whatever its keywords match:
/// requests for what the catalog lacks share words with tools it has ("post a message" and an
/// HTTP `post` tool) but not meaning. Raising it answers more with nothing.
pub const MIN_COSINE_ALONE: f32 = 0.3;

/// `MIN_COSINE_ALONE` when the keyword best is also among the `AGREED_DEPTH` nearest tools: two
/// rankings that agree on a tool are surer than either alone, and a long paraphrased request
/// has low cosines with the very tool it wants. Requests for what the catalog lacks seldom get
/// this (their keyword best is a word-sharing stranger). Set on the development sets
/// (docs/search.md, Figures): MetaTool loses 20 fewer requests to "nothing matches" and no
/// negative is answered. Lowering it answers more weak agreed matches.
pub const MIN_COSINE_AGREED: f32 = 0.25;

/// How near the keyword best must be by vector to count as agreed (`MIN_COSINE_AGREED`).
pub const AGREED_DEPTH: usize = 3;

/// Characters of a tool's description embedded after its name.
const DESCRIPTION_CHARS: usize = 400;

/// Tool vectors in catalog order; a tool without one (not embedded yet) ranks by keywords only.
#[derive(Debug, Clone, Default)]
pub struct Vectors {
    dim: usize,
    data: Vec<f32>,
    present: Vec<bool>,
}

impl Vectors {
    /// Room for `n` tools of `dim` dimensions, none present.
    pub fn new(dim: usize, n: usize) -> Vectors {
        Vectors {
            dim,
            data: vec![0.0; dim * n],
            present: vec![false; n],
        }
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Sets tool `d`'s vector; a vector of another length is refused.
    pub fn set(&mut self, d: usize, v: &[f32]) -> bool {
        if v.len() != self.dim || d >= self.present.len() {
            return false;
        }
        self.data[d * self.dim..(d + 1) * self.dim].copy_from_slice(v);
        self.present[d] = true;
        true
    }

    /// Tool `d`'s vector, `None` without one.
    pub fn get(&self, d: usize) -> Option<&[f32]> {
        if !*self.present.get(d)? {
            return None;
        }
        Some(&self.data[d * self.dim..(d + 1) * self.dim])
    }

    /// Tools with a vector.
    pub fn count(&self) -> usize {
        self.present.iter().filter(|p| **p).count()
    }

    /// The cosine of `query` (a unit vector) with tool `d`'s, `None` without a vector.
    pub fn cosine(&self, d: usize, query: &[f32]) -> Option<f32> {
        if !*self.present.get(d)? || query.len() != self.dim {
            return None;
        }
        let v = &self.data[d * self.dim..(d + 1) * self.dim];
        Some(v.iter().zip(query).map(|(a, b)| a * b).sum())
    }
}

/// The vectors and the query's vector, for one query.
#[derive(Debug, Clone, Copy)]
pub struct Semantic<'a> {
    pub vectors: &'a Vectors,
    pub query: &'a [f32],
    /// `FUSION` unless comparing (`mws search --fusion`).
    pub fusion: Fusion,
}

/// The text a tool is embedded from: its name as words (split as the keyword index splits it:
/// `get_file_contents`, `getFileContents` and `EarthquakeTool` become words a sentence model
/// knows), then the start of its description.
pub fn tool_text(tool: &Value) -> String {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let desc = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("");
    let mut text = String::with_capacity(name.len() + 2 + desc.len().min(DESCRIPTION_CHARS));
    super::tokenize::for_each_word(name, |w| {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(w);
    });
    text.push_str(": ");
    text.extend(desc.chars().take(DESCRIPTION_CHARS));
    text
}

/// The key of a tool's vector in the cache (`store::vectors`): a hash of the text embedded
/// (`tool_text`) and its length, so a changed name or description is embedded again.
pub fn text_hash(text: &str) -> String {
    use std::hash::Hasher;
    let mut h = super::hash::FxHasher::default();
    h.write(text.as_bytes());
    format!("{:016x}-{}", h.finish(), text.len())
}

/// Fuses keyword hits `(doc, score)` (best first) with the nearest tools by vector `(doc,
/// cosine)` (best first, at most `VECTOR_DEPTH`) into `(doc, fused)`, best first. `cosine` gives
/// the cosine of a keyword hit outside the nearest (the sum adds it; RRF ranks only the nearest).
/// `share` is the keyword share of the sum (`keyword_share`).
pub fn fuse(
    keyword: &[(u32, f32)],
    vector: &[(u32, f32)],
    cosine: impl Fn(u32) -> Option<f32>,
    how: Fusion,
    share: f32,
) -> Vec<(u32, f32)> {
    let mut out: std::collections::HashMap<u32, f32> = std::collections::HashMap::new();
    match how {
        Fusion::Rrf => {
            for (r, &(d, _)) in keyword.iter().enumerate() {
                *out.entry(d).or_default() += 1.0 / (RRF_K + r as f32 + 1.0);
            }
            for (r, &(d, _)) in vector.iter().enumerate() {
                *out.entry(d).or_default() += 1.0 / (RRF_K + r as f32 + 1.0);
            }
        }
        Fusion::Sum => {
            let top = keyword.first().map_or(1.0, |x| x.1.max(f32::MIN_POSITIVE));
            let near: std::collections::HashSet<u32> = vector.iter().map(|x| x.0).collect();
            for &(d, s) in keyword {
                let c = if near.contains(&d) {
                    0.0
                } else {
                    cosine(d).unwrap_or(0.0)
                };
                *out.entry(d).or_default() += share * s / top + (1.0 - share) * c.max(0.0);
            }
            for &(d, c) in vector {
                *out.entry(d).or_default() += (1.0 - share) * c.max(0.0);
            }
        }
    }
    let mut v: Vec<(u32, f32)> = out.into_iter().collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// The keyword side of one fused query.
pub(super) struct Fused<'a> {
    pub index: &'a super::bm25f::Index,
    pub words: &'a [super::rank::QueryWord],
    /// The kinds of value the query holds (`entities::read`).
    pub kinds: u8,
    /// The keyword share of the sum (`semantic::keyword_share`).
    pub share: f32,
    /// Whether a weak best may answer nothing (not inside a named backend, not `always_answer`).
    pub may_be_nothing: bool,
}

/// How well a ranked query's best candidate matches (by keywords, or fused with vectors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Strength {
    /// Above every bar: ranked results.
    Close,
    /// Under a bar (`weak`): the nearest few, marked weak.
    Weak,
    /// No query word is in the catalog and the nearest tool is under `MIN_COSINE_NOTHING`.
    Nothing,
}

/// The nearest tool's cosine under which a query that shares no word with the catalog gets
/// nothing at all. Far under what any answerable request of the gold sets reaches with
/// all-MiniLM-L6-v2 (their lowest is 0.19 among 1,231); raising it hides right answers.
pub const MIN_COSINE_NOTHING: f32 = 0.15;

/// Whether a fused query's best is weak: the nearest tool is under `MIN_COSINE_ALONE`
/// (`MIN_COSINE_AGREED` when the keyword best is among the `AGREED_DEPTH` nearest), or under
/// `MIN_COSINE` while the keyword best is under its confidence bar (or nothing matched).
pub(super) fn weak(best: f32, agreed: bool, kw_weak: bool) -> bool {
    let bar = if agreed {
        MIN_COSINE_AGREED
    } else {
        MIN_COSINE_ALONE
    };
    best < bar || (kw_weak && best < MIN_COSINE)
}

/// Keyword and vector rankings fused (`semantic::fuse`), best first, at most `limit`, how many
/// tools are candidates, and how strong the best is (`Strength`; always `Close` unless
/// `may_be_nothing`).
pub(super) fn fused(
    ix: &SearchIndex,
    q: Fused<'_>,
    allow: &impl Fn(u32) -> bool,
    s: Semantic<'_>,
    limit: usize,
) -> (Vec<(u32, f32)>, usize, Strength) {
    let Fused {
        index,
        words,
        kinds,
        share,
        may_be_nothing,
    } = q;
    let n = index.n_docs();
    let (kw, _) = ix.rank(index, words, kinds, allow, n);
    let mut near: Vec<(u32, f32)> = (0..n as u32)
        .filter(|&d| allow(d))
        .filter_map(|d| s.vectors.cosine(d as usize, s.query).map(|c| (d, c)))
        .collect();
    let order = |a: &(u32, f32), b: &(u32, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    if near.len() > VECTOR_DEPTH {
        near.select_nth_unstable_by(VECTOR_DEPTH - 1, order);
        near.truncate(VECTOR_DEPTH);
    }
    near.sort_unstable_by(order);
    let kw_conf = kw
        .first()
        .map(|&(top, _)| ix.confidence(index, top as usize, words));
    let kw_weak = kw
        .first()
        .is_none_or(|&(top, _)| ix.weak_best(index, top as usize, words));
    let share = match kw_conf {
        Some(c) if c >= CONFIDENT_KEYWORDS => share.max(KEYWORD_SHARE),
        _ => share,
    };
    let best = near.first().map_or(0.0, |x| x.1);
    let agreed = kw
        .first()
        .is_some_and(|&(top, _)| near.iter().take(AGREED_DEPTH).any(|&(d, _)| d == top));
    let strength = if !may_be_nothing {
        Strength::Close
    } else if kw.is_empty() && best < MIN_COSINE_NOTHING {
        return (Vec::new(), 0, Strength::Nothing);
    } else if weak(best, agreed, kw_weak) {
        Strength::Weak
    } else {
        Strength::Close
    };
    let near_len = near.iter().filter(|x| x.1 >= MIN_COSINE).count();
    let mut out = fuse(
        &kw,
        &near,
        |d| s.vectors.cosine(d as usize, s.query),
        s.fusion,
        share,
    );
    let matched = out
        .len()
        .min(kw.len().max(near_len))
        .max(out.len().min(limit));
    out.truncate(limit);
    (out, matched, strength)
}

#[cfg(test)]
#[path = "semantic_tests.rs"]
mod tests;
