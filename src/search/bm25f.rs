//! BM25F over tool fields, with postings whose weights are fully computed at build time. Pure.
//!
//! BM25F (Robertson, Zaragoza & Taylor 2004) first combines a term's frequencies over the fields,
//! each normalised by that field's own length and weighted, into one pseudo-frequency
//!
//! ```text
//! tf~(t,d) = Σ_f  W_f · tf_f(t,d) / (1 − B_f + B_f · len_f(d) / avglen_f)
//! ```
//!
//! and saturates that once: `score = Σ_t idf(t) · tf~ / (K1 + tf~)`. Summing per-field BM25
//! instead (`Σ_f W_f · bm25_f`) saturates each field separately, so a word found in the name *and*
//! the description counts almost twice, and a long description's many weak hits add up past one
//! strong name hit; BM25F lets the fields reinforce each other only until the single saturation
//! curve flattens. Both variants are here: `Variant::PerFieldSum` is the plain BM25 baseline the
//! quality test reports beside BM25F.
//!
//! Since `tf~` depends only on the term and the tool, each posting stores its finished term score;
//! a query is lookups and additions.

use super::hash::FastMap;

/// The fields of a tool, heaviest first.
pub const FIELDS: [&str; 4] = ["name", "params", "param_desc", "description"];
pub const NAME: usize = 0;
pub const PARAMS: usize = 1;
pub const PARAM_DESC: usize = 2;
pub const DESCRIPTION: usize = 3;

/// Field weights `W_f`. Raising one makes matches in that field count more against the others.
/// The name is what a model will call, so it weighs most; parameter names next (they name the
/// objects a tool works on: `file_id`, `attendees`); descriptions are long and say many things.
pub const WEIGHTS: [f32; 4] = [2.0, 1.0, 0.5, 1.0];

/// Length normalisation `B_f` per field (0 = none, 1 = full). Names are short and similar in
/// length, so they are barely normalised; descriptions vary from 5 to 100 words. Raising it
/// penalises long fields more.
pub const B: [f32; 4] = [0.3, 0.5, 0.75, 0.75];

/// Saturation `K1`: how fast repeated occurrences stop adding. Raising it lets frequency matter
/// longer (a description that repeats a word wins more).
pub const K1: f32 = 1.2;

/// Characters of the description that are indexed. Raising it indexes more of long descriptions
/// (usually examples and caveats, which add noise).
pub const DESCRIPTION_CHARS: usize = 600;

/// Characters of each parameter description that are indexed. Long parameter descriptions are
/// mostly formats, enums and examples; raising it indexes them (slower build, more noise).
pub const PARAM_DESCRIPTION_CHARS: usize = 160;

/// How the per-field frequencies are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// BM25F: weight and normalise per field, then saturate once.
    Bm25f,
    /// Plain BM25 per field, weighted and summed (the baseline).
    PerFieldSum,
}

/// The tools' tokens, counted per tool as they arrive: what `Index::build` reads. A token is
/// counted where it lands (per term and field of the current tool), so no token list is kept.
#[derive(Debug, Clone)]
pub struct TermCounts {
    /// Stemmed term → id, in order of first appearance.
    pub terms: FastMap<Box<str>, u32>,
    /// Per tool: `(term, count per field)` in order of first occurrence, tools one after another.
    doc_terms: Vec<(u32, [u16; 4])>,
    /// Per tool: where its entries start in `doc_terms`; the last element is where the current
    /// tool's start.
    doc_start: Vec<u32>,
    /// Per finished tool: tokens per field.
    lens: Vec<[u32; 4]>,
    /// Tokens per field of the current tool.
    len: [u32; 4],
    /// Per term: the tools that hold it.
    df: Vec<u32>,
    /// Per term: its entry in `doc_terms`, if that is the current tool's.
    slot: Vec<u32>,
}

/// Distinct terms a tool has on average, for `TermCounts::with_capacity` (LiveMCP: 25, GitHub's:
/// 40). A wrong guess costs only a reallocation.
const TERMS_PER_TOOL: usize = 32;

impl Default for TermCounts {
    fn default() -> TermCounts {
        TermCounts::with_capacity(0)
    }
}

impl TermCounts {
    /// Room for about `tools` tools.
    pub fn with_capacity(tools: usize) -> TermCounts {
        let mut doc_start = Vec::with_capacity(tools + 1);
        doc_start.push(0);
        TermCounts {
            terms: FastMap::default(),
            doc_terms: Vec::with_capacity(tools * TERMS_PER_TOOL),
            doc_start,
            lens: Vec::with_capacity(tools),
            len: [0; 4],
            df: Vec::new(),
            slot: Vec::new(),
        }
    }

    /// The id of `term`, added to the dictionary if new.
    pub fn intern(&mut self, term: &str) -> u32 {
        match self.terms.get(term) {
            Some(&id) => id,
            None => self.add(term.into()),
        }
    }

    /// One token of the current tool (`term` from `intern`).
    #[inline]
    pub fn push(&mut self, field: usize, term: u32) {
        let t = term as usize;
        self.len[field] += 1;
        let first = self.doc_start.last().copied().unwrap_or(0) as usize;
        let i = self.slot[t] as usize;
        if i >= first && i < self.doc_terms.len() {
            let c = &mut self.doc_terms[i].1[field];
            *c = c.saturating_add(1);
        } else {
            self.slot[t] = self.doc_terms.len() as u32;
            let mut c = [0u16; 4];
            c[field] = 1;
            self.doc_terms.push((term, c));
            self.df[t] += 1;
        }
    }

    /// Ends the current tool (the next `push` starts the next one).
    pub fn end_doc(&mut self) {
        self.lens.push(std::mem::take(&mut self.len));
        self.doc_start.push(self.doc_terms.len() as u32);
    }

    /// Appends the tools of `later`, tokenized on its own, after this one's: its terms take this
    /// dictionary's ids, and terms new here get the next ids in `later`'s order of first
    /// appearance, so the result is what one pass over both would give. Both must be between
    /// tools (after `end_doc`).
    pub fn append(&mut self, later: TermCounts) {
        let TermCounts {
            terms,
            doc_terms,
            doc_start,
            lens,
            df,
            ..
        } = later;
        let mut by_id: Vec<Option<Box<str>>> = vec![None; terms.len()];
        for (term, id) in terms {
            by_id[id as usize] = Some(term);
        }
        let ids: Vec<u32> = by_id
            .into_iter()
            .zip(df)
            .map(|(term, df)| {
                let id = self.intern_owned(term.expect("term ids are dense"));
                self.df[id as usize] += df;
                id
            })
            .collect();
        let base = self.doc_terms.len() as u32;
        self.doc_terms
            .extend(doc_terms.into_iter().map(|(t, c)| (ids[t as usize], c)));
        self.doc_start
            .extend(doc_start.into_iter().skip(1).map(|s| s + base));
        self.lens.extend(lens);
    }

    /// Everything but the per-term slots of the last tool (which only `push` reads).
    #[cfg(test)]
    pub fn same_as(&self, other: &TermCounts) -> bool {
        self.terms == other.terms
            && self.doc_terms == other.doc_terms
            && self.doc_start == other.doc_start
            && self.lens == other.lens
            && self.len == other.len
            && self.df == other.df
    }

    /// `intern` for a term already in a `Box`.
    fn intern_owned(&mut self, term: Box<str>) -> u32 {
        match self.terms.get(&term) {
            Some(&id) => id,
            None => self.add(term),
        }
    }

    /// Adds `term`, not yet in the dictionary, with the next id.
    fn add(&mut self, term: Box<str>) -> u32 {
        let id = self.terms.len() as u32;
        self.terms.insert(term, id);
        self.df.push(0);
        self.slot.push(u32::MAX);
        id
    }
}

/// One term of one tool: where it ranks in the term's postings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Posting {
    pub doc: u32,
    /// The finished term score (see the module doc).
    pub score: f32,
    /// The term occurs in the tool's name (for the name bonus, without a lookup per tool).
    pub in_name: bool,
}

/// The inverted index. Postings and per-tool terms are flat arrays with offsets (one allocation
/// each instead of one per term and per tool).
#[derive(Debug, Clone)]
pub struct Index {
    pub terms: FastMap<Box<str>, u32>,
    /// Term `t`'s postings are `postings[post_start[t]..post_start[t + 1]]`, sorted by doc.
    post_start: Vec<u32>,
    postings: Vec<Posting>,
    pub idf: Vec<f32>,
    /// Per tool: `(term, count per field)` in order of first occurrence, in
    /// `doc_terms[doc_start[d]..doc_start[d + 1]]`; kept for `explain`.
    doc_start: Vec<u32>,
    doc_terms: Vec<(u32, [u16; 4])>,
    /// Per tool: tokens per field.
    lens: Vec<[u32; 4]>,
    pub avg_len: [f32; 4],
    pub variant: Variant,
}

impl Index {
    /// Builds the index from the tools' tokens.
    pub fn build(tokens: TermCounts, variant: Variant) -> Index {
        let TermCounts {
            terms,
            doc_terms,
            doc_start,
            lens,
            df,
            ..
        } = tokens;
        let n_docs = lens.len();
        let n = n_docs.max(1) as f32;
        let mut avg_len = [0f32; 4];
        for (f, avg) in avg_len.iter_mut().enumerate() {
            let total: u64 = lens.iter().map(|l| l[f] as u64).sum();
            *avg = (total as f32 / n).max(1.0);
        }
        // Document frequency is over the union of fields.
        let idf: Vec<f32> = df
            .iter()
            .map(|&df| (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln())
            .collect();
        let mut post_start = Vec::with_capacity(df.len() + 1);
        let mut acc = 0u32;
        post_start.push(0);
        for &x in &df {
            acc += x;
            post_start.push(acc);
        }
        let mut index = Index {
            terms,
            post_start,
            postings: Vec::new(),
            idf,
            doc_start,
            doc_terms: Vec::new(),
            lens,
            avg_len,
            variant,
        };
        let empty = Posting {
            doc: 0,
            score: 0.0,
            in_name: false,
        };
        let mut postings = vec![empty; acc as usize];
        let mut fill: Vec<u32> = index.post_start[..df.len()].to_vec();
        for d in 0..n_docs {
            let span = index.doc_start[d] as usize..index.doc_start[d + 1] as usize;
            let norms = index.norms(&index.lens[d]);
            for &(t, tfs) in &doc_terms[span] {
                let slot = &mut fill[t as usize];
                postings[*slot as usize] = Posting {
                    doc: d as u32,
                    score: index.normed_score(t, &tfs, &norms),
                    in_name: tfs[NAME] > 0,
                };
                *slot += 1;
            }
        }
        index.postings = postings;
        index.doc_terms = doc_terms;
        index
    }

    pub fn n_docs(&self) -> usize {
        self.lens.len()
    }

    /// Term `t`'s postings, sorted by doc.
    pub fn postings(&self, t: u32) -> &[Posting] {
        &self.postings
            [self.post_start[t as usize] as usize..self.post_start[t as usize + 1] as usize]
    }

    /// Tokens per field of `doc`.
    pub fn lens(&self, doc: usize) -> [u32; 4] {
        self.lens[doc]
    }

    /// The score of term `t` in a tool with field counts `tfs` and field lengths `lens`.
    pub fn term_score(&self, t: u32, tfs: &[u16; 4], lens: &[u32; 4]) -> f32 {
        self.normed_score(t, tfs, &self.norms(lens))
    }

    /// `term_score` with the tool's `norms` (computed once per tool at build).
    fn normed_score(&self, t: u32, tfs: &[u16; 4], norms: &[f32; 4]) -> f32 {
        let idf = self.idf[t as usize];
        match self.variant {
            Variant::Bm25f => {
                let tf = pseudo_tf(tfs, norms);
                idf * tf / (K1 + tf)
            }
            Variant::PerFieldSum => (0..4)
                .map(|f| {
                    let tf = normalised_tf(tfs[f], norms[f]);
                    WEIGHTS[f] * idf * tf / (K1 + tf)
                })
                .sum(),
        }
    }

    /// `tf~`: the weighted, per-field normalised frequency (see the module doc).
    pub fn pseudo_tf(&self, tfs: &[u16; 4], lens: &[u32; 4]) -> f32 {
        pseudo_tf(tfs, &self.norms(lens))
    }

    /// Per field, what a frequency is divided by in a tool with field lengths `lens`: `1 − B_f +
    /// B_f · len_f / avglen_f`.
    fn norms(&self, lens: &[u32; 4]) -> [f32; 4] {
        std::array::from_fn(|f| 1.0 - B[f] + B[f] * lens[f] as f32 / self.avg_len[f])
    }

    pub fn term(&self, word: &str) -> Option<u32> {
        self.terms.get(word).copied()
    }

    /// Count of term `t` in each field of `doc`.
    pub fn counts(&self, doc: usize, t: u32) -> [u16; 4] {
        let own = &self.doc_terms[self.doc_start[doc] as usize..self.doc_start[doc + 1] as usize];
        own.iter()
            .find(|&&(id, _)| id == t)
            .map_or([0; 4], |&(_, c)| c)
    }

    /// Whether `doc`'s name holds term `t`.
    pub fn in_name(&self, doc: usize, t: u32) -> bool {
        self.counts(doc, t)[NAME] > 0
    }
}

fn pseudo_tf(tfs: &[u16; 4], norms: &[f32; 4]) -> f32 {
    (0..4)
        .map(|f| WEIGHTS[f] * normalised_tf(tfs[f], norms[f]))
        .sum()
}

fn normalised_tf(tf: u16, norm: f32) -> f32 {
    if tf == 0 {
        return 0.0;
    }
    tf as f32 / norm
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(variant: Variant) -> Index {
        // doc 0: "share" in the name; doc 1: "share" three times in a long description.
        let docs: Vec<[Vec<&str>; 4]> = vec![
            [
                vec!["share", "file"],
                vec![],
                vec![],
                vec!["give", "access"],
            ],
            [
                vec!["list", "file"],
                vec![],
                vec![],
                vec!["share", "share", "share", "a", "b", "c", "d", "e", "f", "g"],
            ],
            [vec!["read", "file"], vec![], vec![], vec!["x"]],
        ];
        let mut tokens = TermCounts::default();
        for doc in &docs {
            for (f, toks) in doc.iter().enumerate() {
                for t in toks {
                    let id = tokens.intern(t);
                    tokens.push(f, id);
                }
            }
            tokens.end_doc();
        }
        Index::build(tokens, variant)
    }

    #[test]
    fn name_hit_beats_repeated_description_hits() {
        for v in [Variant::Bm25f, Variant::PerFieldSum] {
            let ix = index(v);
            let t = ix.term("share").unwrap();
            let p = ix.postings(t);
            assert_eq!(p.len(), 2);
            assert!(p[0].in_name && !p[1].in_name);
            assert!(p[0].score > p[1].score, "{v:?}: {p:?}");
        }
    }

    #[test]
    fn bm25f_saturates_once_across_fields() {
        let ix = index(Variant::Bm25f);
        let t = ix.term("file").unwrap();
        let lens = [2, 0, 0, 2];
        let one = ix.term_score(t, &[1, 0, 0, 0], &lens);
        let both = ix.term_score(t, &[1, 0, 0, 1], &lens);
        let idf = ix.idf[t as usize];
        assert!(
            both > one && both < idf,
            "bounded by idf: {one} {both} {idf}"
        );
        let sum = Index {
            variant: Variant::PerFieldSum,
            ..ix.clone()
        };
        assert!(sum.term_score(t, &[1, 0, 0, 1], &lens) > both);
    }
}
