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

/// One tool's term counts per field, kept for `explain` and the name-coverage bonus.
#[derive(Debug, Clone, Default)]
pub struct DocTerms {
    /// Per field: (term id, count), sorted by term id.
    pub fields: [Vec<(u32, u16)>; 4],
    /// Per field: number of tokens.
    pub lens: [u32; 4],
}

/// The inverted index.
#[derive(Debug, Clone)]
pub struct Index {
    pub terms: FastMap<Box<str>, u32>,
    /// Per term: (doc, finished term score), sorted by doc.
    pub postings: Vec<Vec<(u32, f32)>>,
    pub idf: Vec<f32>,
    pub docs: Vec<DocTerms>,
    pub avg_len: [f32; 4],
    pub variant: Variant,
}

impl Index {
    /// Builds the index from per-tool field texts, `fields(doc, emit)` calling `emit(field,
    /// token)` for each token.
    pub fn build(
        n_docs: usize,
        variant: Variant,
        mut fields: impl FnMut(usize, &mut dyn FnMut(usize, &str)),
    ) -> Index {
        let mut terms: FastMap<Box<str>, u32> = FastMap::default();
        let mut docs = Vec::with_capacity(n_docs);
        let mut scratch: [Vec<u32>; 4] = Default::default();
        for d in 0..n_docs {
            for s in &mut scratch {
                s.clear();
            }
            fields(d, &mut |f, tok| {
                let next = terms.len() as u32;
                let id = match terms.get(tok) {
                    Some(&id) => id,
                    None => {
                        terms.insert(tok.into(), next);
                        next
                    }
                };
                scratch[f].push(id);
            });
            let mut doc = DocTerms::default();
            for (f, ids) in scratch.iter_mut().enumerate() {
                doc.lens[f] = ids.len() as u32;
                ids.sort_unstable();
                for &id in ids.iter() {
                    match doc.fields[f].last_mut() {
                        Some((last, n)) if *last == id => *n = n.saturating_add(1),
                        _ => doc.fields[f].push((id, 1)),
                    }
                }
            }
            docs.push(doc);
        }
        let n = n_docs.max(1) as f32;
        let mut avg_len = [0f32; 4];
        for (f, avg) in avg_len.iter_mut().enumerate() {
            let total: u64 = docs.iter().map(|d| d.lens[f] as u64).sum();
            *avg = (total as f32 / n).max(1.0);
        }
        // Document frequency over the union of fields.
        let mut df = vec![0u32; terms.len()];
        let mut seen = vec![u32::MAX; terms.len()];
        for (d, doc) in docs.iter().enumerate() {
            for field in &doc.fields {
                for &(t, _) in field {
                    if seen[t as usize] != d as u32 {
                        seen[t as usize] = d as u32;
                        df[t as usize] += 1;
                    }
                }
            }
        }
        let idf: Vec<f32> = df
            .iter()
            .map(|&df| (1.0 + (n - df as f32 + 0.5) / (df as f32 + 0.5)).ln())
            .collect();
        let mut index = Index {
            terms,
            postings: vec![Vec::new(); df.len()],
            idf,
            docs: Vec::new(),
            avg_len,
            variant,
        };
        for (t, p) in index.postings.iter_mut().enumerate() {
            p.reserve_exact(df[t] as usize);
        }
        let mut merged: Vec<(u32, usize, u16)> = Vec::new();
        for (d, doc) in docs.iter().enumerate() {
            merged.clear();
            for (f, field) in doc.fields.iter().enumerate() {
                merged.extend(field.iter().map(|&(t, c)| (t, f, c)));
            }
            merged.sort_unstable_by_key(|&(t, f, _)| (t, f));
            let mut i = 0;
            while i < merged.len() {
                let t = merged[i].0;
                let mut tfs = [0u16; 4];
                while i < merged.len() && merged[i].0 == t {
                    tfs[merged[i].1] = merged[i].2;
                    i += 1;
                }
                let s = index.term_score(t, &tfs, &doc.lens);
                index.postings[t as usize].push((d as u32, s));
            }
        }
        index.docs = docs;
        index
    }

    /// The score of term `t` in a tool with field counts `tfs` and field lengths `lens`.
    pub fn term_score(&self, t: u32, tfs: &[u16; 4], lens: &[u32; 4]) -> f32 {
        let idf = self.idf[t as usize];
        match self.variant {
            Variant::Bm25f => {
                let tf = self.pseudo_tf(tfs, lens);
                idf * tf / (K1 + tf)
            }
            Variant::PerFieldSum => (0..4)
                .map(|f| {
                    let tf = self.normalised_tf(f, tfs[f], lens[f]);
                    WEIGHTS[f] * idf * tf / (K1 + tf)
                })
                .sum(),
        }
    }

    /// `tf~`: the weighted, per-field normalised frequency (see the module doc).
    pub fn pseudo_tf(&self, tfs: &[u16; 4], lens: &[u32; 4]) -> f32 {
        (0..4)
            .map(|f| WEIGHTS[f] * self.normalised_tf(f, tfs[f], lens[f]))
            .sum()
    }

    fn normalised_tf(&self, f: usize, tf: u16, len: u32) -> f32 {
        if tf == 0 {
            return 0.0;
        }
        tf as f32 / (1.0 - B[f] + B[f] * len as f32 / self.avg_len[f])
    }

    pub fn term(&self, word: &str) -> Option<u32> {
        self.terms.get(word).copied()
    }

    /// Count of term `t` in each field of `doc`.
    pub fn counts(&self, doc: usize, t: u32) -> [u16; 4] {
        let mut c = [0u16; 4];
        for (f, field) in self.docs[doc].fields.iter().enumerate() {
            if let Ok(i) = field.binary_search_by_key(&t, |&(id, _)| id) {
                c[f] = field[i].1;
            }
        }
        c
    }

    /// Whether `doc`'s name holds term `t`.
    pub fn in_name(&self, doc: usize, t: u32) -> bool {
        self.docs[doc].fields[NAME]
            .binary_search_by_key(&t, |&(id, _)| id)
            .is_ok()
    }
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
        Index::build(docs.len(), variant, |d, emit| {
            for (f, toks) in docs[d].iter().enumerate() {
                for t in toks {
                    emit(f, t);
                }
            }
        })
    }

    #[test]
    fn name_hit_beats_repeated_description_hits() {
        for v in [Variant::Bm25f, Variant::PerFieldSum] {
            let ix = index(v);
            let t = ix.term("share").unwrap();
            let p = &ix.postings[t as usize];
            assert_eq!(p.len(), 2);
            assert!(p[0].1 > p[1].1, "{v:?}: {p:?}");
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
