//! Search over the upstream catalog (docs/search.md): tokenising, BM25F ranking, modes, the reply
//! budget. Pure: no I/O, no clock. Build a `SearchIndex` once per catalog version; `search` is
//! what `search_tools` and `mws search` call.
//!
//! Files: `tokenize` (words and stems), `synonyms` (query expansion), `backend` (name prefixes),
//! `bm25f` (the inverted index and scoring), `rank` (a query against the index, `--explain`),
//! `modes` (exact / backend / ranked), `hints` (what a reply with nothing close says),
//! `whole_catalog` (the empty query's reply), `entities` (values in a request read as their
//! kind), `takes` (the kinds of value a tool takes, and the factor for them), `reply` (the JSON
//! and its budget), `query` (the bounds of a query), `eval` (gold sets scored for `mws search
//! --eval`), `prior` (the usage prior), `semantic` (vectors and fusion; the vectors come from
//! `crate::embed`).

mod backend;
mod bm25f;
mod entities;
pub mod eval;
mod hash;
mod hints;
mod modes;
mod prior;
mod purpose;
mod query;
mod rank;
mod reply;
pub mod semantic;
mod synonyms;
mod takes;
mod tokenize;
mod whole_catalog;

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

pub use bm25f::{FIELDS, Variant};
pub use entities::typed as typed_query;
pub use prior::{PRIOR_BOOST, Prior};
pub use purpose::{PURPOSE_BOOST, ServerPart};
pub use query::{MAX_QUERY_BYTES, MAX_QUERY_WORDS, QueryError, check as check_query};
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

/// `local_names` value of a name that several tools share.
const AMBIGUOUS: u32 = u32::MAX;

/// Options that come from the config.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// `searchAliases`: extra synonyms merged over the built-in table.
    pub aliases: BTreeMap<String, Vec<String>>,
    /// `backendHints`: labels per backend prefix.
    pub backend_hints: BTreeMap<String, String>,
    /// What each backend is for, in words: the config's `description` for the server, its
    /// `serverInfo` title and description, its `instructions` (`purpose.rs`).
    pub purposes: BTreeMap<String, String>,
}

/// Per-query options (`mws search --limit/--explain`; `search_tools` passes the usage prior).
#[derive(Debug, Clone, Copy, Default)]
pub struct QueryOptions<'a> {
    /// Most results (default `DEFAULT_LIMIT` for ranked queries, the whole backend otherwise).
    pub limit: Option<usize>,
    /// Fill `Reply::explain` with the score parts of each result.
    pub explain: bool,
    /// Ranking variant (the quality test compares BM25F with per-field BM25).
    pub variant: Option<Variant>,
    /// The usage prior for ranked queries (`prior.rs`).
    pub prior: Option<&'a Prior>,
    /// Tool vectors and the query's vector: ranked queries fuse both rankings (`semantic.rs`).
    pub semantic: Option<semantic::Semantic<'a>>,
    /// Never answer a ranked query with nothing, however weak its best match (`mws search
    /// --always-answer`: what "nothing matches" costs a gold set's top-3).
    pub always_answer: bool,
    /// Code mode is on: each schema result also shows its call in a script, a typed signature
    /// (`crate::script::signature`).
    pub script: bool,
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
    /// Lowercased names without backend prefix → their tool (`AMBIGUOUS` when several backends
    /// have it), for exact names given without prefix.
    local_names: FastMap<Box<str>, u32>,
    /// Per tool: the kinds of value it takes (`takes::takes`), read on the first query that
    /// holds a value (a second walk over a 10,000-tool catalog's objects costs about 10 ms).
    takes: OnceLock<Vec<u8>>,
    /// Each backend's purpose words (`purpose.rs`).
    purposes: purpose::Purposes,
}

/// A reply as `search_tools` returns it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// `{"mode", "results": [...], "more"?, "hint"?}`: `text` as a value (parsed on first use).
    pub json: ReplyJson,
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

/// A reply's JSON value, parsed from its text the first time it is looked at. `search_tools` only
/// sends the text, so a query does not build the value (with copies of the top schemas) just to
/// serialise it; tests and `mws search` read it like a `Value` (`Deref`). `Display` prints the
/// text itself.
#[derive(Debug, Clone)]
pub struct ReplyJson {
    text: String,
    value: OnceLock<Value>,
}

impl ReplyJson {
    fn later(text: &str) -> ReplyJson {
        ReplyJson {
            text: text.to_string(),
            value: OnceLock::new(),
        }
    }

    fn with_value(text: &str, value: Value) -> ReplyJson {
        ReplyJson {
            text: text.to_string(),
            value: OnceLock::from(value),
        }
    }
}

impl std::ops::Deref for ReplyJson {
    type Target = Value;

    fn deref(&self) -> &Value {
        // The text is serde_json's own output, so it parses; `Null` is never seen.
        self.value
            .get_or_init(|| serde_json::from_str(&self.text).unwrap_or(Value::Null))
    }
}

impl std::fmt::Display for ReplyJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl SearchIndex {
    pub fn build(catalog: &Catalog, options: &SearchOptions) -> SearchIndex {
        SearchIndex::build_shared(Arc::new(catalog.clone()), options)
    }

    /// `build` without copying the catalog (the proxy holds it in an `Arc` already).
    pub fn build_shared(catalog: Arc<Catalog>, options: &SearchOptions) -> SearchIndex {
        let (backends, local_names) = name_tables(catalog.tools(), &options.backend_hints);
        let index = build_index(catalog.tools(), Variant::Bm25f);
        let purposes =
            purpose::Purposes::build(&backends, &options.backend_hints, &options.purposes);
        SearchIndex {
            takes: OnceLock::new(),
            purposes,
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
        self.baseline = Some(build_index(self.catalog.tools(), Variant::PerFieldSum));
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

    /// Per tool: the kinds of value it takes.
    pub(super) fn takes(&self) -> &[u8] {
        self.takes
            .get_or_init(|| self.catalog.tools().iter().map(takes::takes).collect())
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

/// Catalogs from this many tools are cut into words on two threads, half the tools each
/// (`build_index`): a thread costs tens of microseconds, a 10,000-tool build about 30 ms on one.
const PARALLEL_FROM: usize = 2_000;

/// The backends of `tools` and the table of their names without the backend prefix (lowercased;
/// `AMBIGUOUS` where two backends share one).
fn name_tables(
    tools: &[Value],
    hints: &BTreeMap<String, String>,
) -> (Backends, FastMap<Box<str>, u32>) {
    let names: Vec<&str> = tools
        .iter()
        .map(|t| field(t, "name").and_then(Value::as_str).unwrap_or(""))
        .collect();
    let backends = Backends::recognise(names.iter().copied(), hints);
    let mut local_names: FastMap<Box<str>, u32> = FastMap::default();
    for (d, name) in names.iter().enumerate() {
        if let Some((_, rest)) = backends.of_tool[d] {
            let local = &name[rest as usize..];
            let key: Box<str> =
                if local.bytes().any(|b| b.is_ascii_uppercase()) || !local.is_ascii() {
                    local.to_lowercase().into()
                } else {
                    local.into()
                };
            local_names
                .entry(key)
                .and_modify(|x| *x = AMBIGUOUS)
                .or_insert(d as u32);
        }
    }
    (backends, local_names)
}

/// Feeds each tool's fields to the index: name tokens (backend prefix included), parameter names,
/// the first `PARAM_DESCRIPTION_CHARS` of each parameter description, and the first
/// `DESCRIPTION_CHARS` characters of the description.
///
/// From `PARALLEL_FROM` tools each half of the catalog is cut on a thread of its own and the
/// second half's tokens are appended to the first's (`TermCounts::append`): the same tokens, term ids
/// included, as one pass over the whole catalog.
fn build_index(tools: &[Value], variant: Variant) -> bm25f::Index {
    bm25f::Index::build(tokenize_halves(tools), variant)
}

fn tokenize_halves(tools: &[Value]) -> bm25f::TermCounts {
    if tools.len() < PARALLEL_FROM {
        return tokenize_tools(tools);
    }
    let (first, second) = tools.split_at(tools.len() / 2);
    std::thread::scope(|s| {
        let second = s.spawn(|| tokenize_tools(second));
        let mut tokens = tokenize_tools(first);
        tokens.append(
            second
                .join()
                .expect("cutting the catalog into words panicked"),
        );
        tokens
    })
}

/// The tokens of `tools` (see `build_index`).
///
/// Each distinct word (as it appears in the text, case kept) is lowercased, stop-word checked,
/// stemmed and looked up once: a cache maps the word to its term id, so the many repeats of a
/// catalog (parameter names like `owner`, description words) cost one hash lookup each. Words of
/// up to 8 bytes (most of them) are keyed by their bytes packed into one integer, words of up to
/// 16 into two (unique: a word holds no zero byte, so the highest non-zero byte gives the
/// length), longer ones by their text. A description or parameter description seen before
/// (GitHub's `owner` and `repo` parameters, one server's tools under several backends) is not
/// cut again: its term ids are copied from the first time.
fn tokenize_tools(tools: &[Value]) -> bm25f::TermCounts {
    /// Cache value of a stop word.
    const STOP: u32 = u32::MAX;
    let fields = field_texts(tools);
    let mut tokens = bm25f::TermCounts::with_capacity(tools.len());
    let mut short: FastMap<u64, u32> = FastMap::default();
    let mut medium: FastMap<u128, u32> = FastMap::default();
    let mut long: FastMap<&str, u32> = FastMap::default();
    // Distinct description texts → their term ids, `ids[start..end]`.
    let mut seen: FastMap<&str, (u32, u32)> = FastMap::default();
    let mut ids: Vec<u32> = Vec::new();
    let (mut lower, mut out) = (String::with_capacity(16), String::with_capacity(16));
    let mut from = 0;
    for &end in &fields.tool_end {
        for &(text, f) in &fields.texts[from..end as usize] {
            let f = f as usize;
            let (text, again) = match f {
                bm25f::PARAM_DESC => (prefix(text, bm25f::PARAM_DESCRIPTION_CHARS), true),
                bm25f::DESCRIPTION => (prefix(text, bm25f::DESCRIPTION_CHARS), true),
                _ => (text, false),
            };
            if again && let Some(&(s, e)) = seen.get(text) {
                for &id in &ids[s as usize..e as usize] {
                    tokens.push(f, id);
                }
                continue;
            }
            let start = ids.len() as u32;
            tokenize::for_each_word_keyed(text, |w, key| {
                let mut resolve = || {
                    if tokenize::token_of(w, &mut lower, &mut out) {
                        tokens.intern(&out)
                    } else {
                        STOP
                    }
                };
                let id = if w.len() <= 8 {
                    *short.entry(key).or_insert_with(&mut resolve)
                } else if w.len() <= 16 {
                    let mut b = [0u8; 16];
                    b[..w.len()].copy_from_slice(w.as_bytes());
                    *medium
                        .entry(u128::from_le_bytes(b))
                        .or_insert_with(&mut resolve)
                } else {
                    *long.entry(w).or_insert_with(&mut resolve)
                };
                if id != STOP {
                    tokens.push(f, id);
                    if again {
                        ids.push(id);
                    }
                }
            });
            if again {
                seen.insert(text, (start, ids.len() as u32));
            }
        }
        from = end as usize;
        tokens.end_doc();
    }
    tokens
}

/// The texts of each tool's indexed fields, in index order, found in one pass over the tool
/// objects before any is cut into words: the walk is a chain of scattered reads (keys, values,
/// property objects), and a loop that does nothing else lets the processor overlap the reads of
/// several tools.
struct FieldTexts<'v> {
    /// `(text, field)`, tools one after another.
    texts: Vec<(&'v str, u8)>,
    /// Per tool: the end of its texts in `texts`.
    tool_end: Vec<u32>,
}

/// Field texts a tool has on average, for the capacity of `FieldTexts::texts`.
const TEXTS_PER_TOOL: usize = 8;

fn field_texts(tools: &[Value]) -> FieldTexts<'_> {
    let mut texts = Vec::with_capacity(tools.len() * TEXTS_PER_TOOL);
    let mut tool_end = Vec::with_capacity(tools.len());
    for t in tools {
        // One pass over the tool's keys finds the three fields (the keys are scattered strings;
        // reading them once instead of once per field is what counts).
        let (mut name, mut schema, mut desc) = ("", None, "");
        for (k, v) in t.as_object().into_iter().flatten() {
            match k.as_str() {
                "name" => name = v.as_str().unwrap_or(""),
                "inputSchema" => schema = Some(v),
                "description" => desc = v.as_str().unwrap_or(""),
                _ => {}
            }
        }
        texts.push((name, bm25f::NAME as u8));
        if let Some(props) = schema
            .and_then(|s| field(s, "properties"))
            .and_then(Value::as_object)
        {
            for (k, p) in props {
                let d = field(p, "description").and_then(Value::as_str);
                texts.push((k.as_str(), bm25f::PARAMS as u8));
                texts.push((d.unwrap_or(""), bm25f::PARAM_DESC as u8));
            }
        }
        texts.push((desc, bm25f::DESCRIPTION as u8));
        tool_end.push(texts.len() as u32);
    }
    FieldTexts { texts, tool_end }
}

/// `v[key]` by a linear scan: tool and property objects hold a handful of keys, where comparing
/// beats hashing the key (serde_json's map hashes with SipHash). Same result as `Value::get`.
fn field<'v>(v: &'v Value, key: &str) -> Option<&'v Value> {
    v.as_object()?
        .iter()
        .find(|(k, _)| k.as_str() == key)
        .map(|(_, v)| v)
}

/// The first `chars` characters of `s`.
fn prefix(s: &str, chars: usize) -> &str {
    if s.len() <= chars {
        return s; // fewer bytes than the cap means fewer characters too
    }
    if s.as_bytes()[..chars].is_ascii() {
        return &s[..chars]; // `chars` ASCII bytes are `chars` characters
    }
    s.char_indices().nth(chars).map_or(s, |(i, _)| &s[..i])
}

#[cfg(test)]
mod tests;
