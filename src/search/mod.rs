//! Search over the full upstream catalog (SPEC §6): tokenisation, BM25F ranking, modes and the reply
//! budget. Pure: no I/O, no clock. Build a `SearchIndex` once per catalog version; `search` is
//! what `search_tools` and `mws search` call.
//!
//! Files: `tokenize` (words and stems), `synonyms` (query expansion), `backend` (name prefixes),
//! `bm25f` (the inverted index and scoring), `rank` (a query against the index, `--explain`),
//! `modes` (exact / backend / ranked / catalog), `reply` (the JSON and its budget).

mod backend;
mod bm25f;
mod hash;
mod modes;
mod rank;
mod reply;
mod synonyms;
mod tokenize;

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde_json::Value;

pub use bm25f::{FIELDS, Variant};
pub use rank::{Explain, WordExplain};
pub use reply::trim as trim_text;
pub use reply::{DESCRIPTION_CAPS, SCHEMA_RESULTS, Trimmed};
pub use tokenize::tokens;

use crate::catalog::Catalog;
use backend::Backends;
use hash::FastMap;
use synonyms::Synonyms;

/// Largest `search_tools` reply in bytes (the exact-name mode is exempt: it returns the full
/// upstream schema, uncapped).
pub const REPLY_BUDGET: usize = 6 * 1024;

/// Results a ranked query returns before the budget trims (the `more` count says how many
/// further tools matched). Raising it costs reply bytes on every search.
pub const DEFAULT_LIMIT: usize = 8;

/// Options that come from the config.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// `searchAliases`: extra synonyms merged over the built-in table.
    pub aliases: BTreeMap<String, Vec<String>>,
    /// `backendHints`: labels per backend prefix.
    pub backend_hints: BTreeMap<String, String>,
}

/// Per-query options (`mws search --limit/--explain`; `search_tools` uses the defaults).
#[derive(Debug, Clone, Copy, Default)]
pub struct QueryOptions {
    /// Most results (default `DEFAULT_LIMIT` for ranked queries, the whole backend otherwise).
    pub limit: Option<usize>,
    /// Fill `Reply::explain` with the score parts of each result.
    pub explain: bool,
    /// Ranking variant (the quality test compares BM25F with per-field BM25).
    pub variant: Option<Variant>,
}

/// An index over one catalog version. Build once per version, query many times.
pub struct SearchIndex {
    catalog: Arc<Catalog>,
    backends: Backends,
    hints: BTreeMap<String, String>,
    synonyms: Synonyms,
    index: bm25f::Index,
    /// The plain BM25 baseline, built on demand by `with_baseline`.
    baseline: Option<bm25f::Index>,
    /// Lowercased names without backend prefix → tools, for exact names given without prefix.
    local_names: FastMap<Box<str>, Vec<u32>>,
}

/// A reply as `search_tools` returns it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// `{"mode", "results": [...], "more"?, "hint"?}`.
    pub json: Value,
    /// `json` as compact text: the bytes `search_tools` sends.
    pub text: String,
    /// `exact` | `backend` | `ranked` | `catalog`.
    pub mode: &'static str,
    /// Tools in the reply.
    pub result_count: usize,
    /// What the budget did.
    pub trimmed: Trimmed,
    /// Score parts per result (ranked modes with `QueryOptions::explain`).
    pub explain: Vec<Explain>,
}

impl SearchIndex {
    pub fn build(catalog: &Catalog, options: &SearchOptions) -> SearchIndex {
        SearchIndex::build_shared(Arc::new(catalog.clone()), options)
    }

    /// `build` without copying the catalog (the proxy holds it in an `Arc` already).
    pub fn build_shared(catalog: Arc<Catalog>, options: &SearchOptions) -> SearchIndex {
        let names: Vec<&str> = catalog.names().collect();
        let backends = Backends::recognise(names.iter().copied(), &options.backend_hints);
        let index = build_index(&catalog, Variant::Bm25f);
        let mut local_names: FastMap<Box<str>, Vec<u32>> = FastMap::default();
        for (d, name) in catalog.names().enumerate() {
            if let Some((_, rest)) = backends.of_tool[d] {
                let local = name[rest as usize..].to_lowercase();
                local_names.entry(local.into()).or_default().push(d as u32);
            }
        }
        SearchIndex {
            synonyms: Synonyms::new(&options.aliases),
            hints: options.backend_hints.clone(),
            baseline: None,
            catalog,
            backends,
            index,
            local_names,
        }
    }

    /// Also builds the plain BM25 (per-field sum) index, for `QueryOptions::variant`.
    pub fn with_baseline(mut self) -> SearchIndex {
        self.baseline = Some(build_index(&self.catalog, Variant::PerFieldSum));
        self
    }

    /// Runs one query. `listed` holds the names currently listed (marked in replies).
    pub fn search(&self, query: &str, listed: &HashSet<String>) -> Reply {
        self.search_with(query, listed, &QueryOptions::default())
    }

    /// `search` with a limit, explanations or another ranking variant.
    pub fn search_with(&self, query: &str, listed: &HashSet<String>, opts: &QueryOptions) -> Reply {
        modes::run(self, query, listed, opts)
    }

    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// Backend names in catalog order (for the server instructions).
    pub fn backends(&self) -> &[String] {
        &self.backends.names
    }

    /// The backend of a tool name, if it has one.
    pub fn backend_of(&self, name: &str) -> Option<&str> {
        let d = self.catalog.names().position(|n| n == name)?;
        self.backends.of(d)
    }
}

/// Feeds each tool's fields to the index: name tokens (backend prefix included), parameter names,
/// the first `PARAM_DESCRIPTION_CHARS` of each parameter description, and the first
/// `DESCRIPTION_CHARS` characters of the description.
fn build_index(catalog: &Catalog, variant: Variant) -> bm25f::Index {
    let tools = catalog.tools();
    fn text(v: Option<&Value>) -> &str {
        v.and_then(Value::as_str).unwrap_or("")
    }
    bm25f::Index::build(tools.len(), variant, |d, emit| {
        let t = &tools[d];
        tokenize::for_each_token(text(t.get("name")), |w| emit(bm25f::NAME, w));
        if let Some(props) = t
            .get("inputSchema")
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object)
        {
            for (k, p) in props {
                tokenize::for_each_token(k, |w| emit(bm25f::PARAMS, w));
                let d = text(p.get("description"));
                tokenize::for_each_token(prefix(d, bm25f::PARAM_DESCRIPTION_CHARS), |w| {
                    emit(bm25f::PARAM_DESC, w)
                });
            }
        }
        let desc = text(t.get("description"));
        tokenize::for_each_token(prefix(desc, bm25f::DESCRIPTION_CHARS), |w| {
            emit(bm25f::DESCRIPTION, w)
        });
    })
}

/// The first `chars` characters of `s`.
fn prefix(s: &str, chars: usize) -> &str {
    if s.len() <= chars {
        return s; // fewer bytes than the cap means fewer characters too
    }
    s.char_indices().nth(chars).map_or(s, |(i, _)| &s[..i])
}

#[cfg(test)]
mod tests;
