//! `search_tools` and what it ranks with: the search index shared per catalog version, the
//! usage prior read from `state.db` again when older than `PRIOR_TTL`, and the tool vectors when
//! the semantic layer has them (`embedding.rs`). Must never log query text and never write the
//! database.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::catalog::Catalog;
use crate::clock;
use crate::config::Config;
use crate::mcp::Caller;
use crate::search::semantic::{FUSION, Semantic};
use crate::search::{Prior, QueryOptions, SearchIndex, SearchOptions};
use crate::server::Proxy;
use crate::server::calls::{text_result, warn_shadowed};
use crate::server::listing::listed_names;
use crate::server::meta_tools;
use crate::store::SearchRecord;
use crate::upstream::CatalogSource;

/// How long `search_tools` ranks with one read of the usage prior before reading it again.
/// Lowering it notices new habits sooner, at a small read of `state.db` per period.
pub const PRIOR_TTL: Duration = Duration::from_secs(5 * 60);

/// A search index, its catalog version, the usage prior and when it was read.
type Slot = (u64, Arc<SearchIndex>, Arc<Prior>, Instant);

/// The search index and the catalog version it was built for, and the usage prior with when it
/// was read; held across a build, so one build serves every search waiting on it.
#[derive(Default)]
pub(crate) struct IndexCache {
    slot: tokio::sync::Mutex<Option<Slot>>,
}

impl IndexCache {
    /// The search index for a catalog version, built once and shared, and the usage prior.
    pub(crate) async fn get(
        &self,
        version: u64,
        catalog: &Arc<Catalog>,
        config: &Arc<Config>,
    ) -> (Arc<SearchIndex>, Arc<Prior>) {
        let mut slot = self.slot.lock().await;
        if let Some((v, idx, prior, read)) = slot.as_mut()
            && *v == version
        {
            if read.elapsed() >= PRIOR_TTL {
                *prior = read_prior(config).await;
                *read = Instant::now();
            }
            return (idx.clone(), prior.clone());
        }
        warn_shadowed(catalog);
        let options = SearchOptions {
            aliases: config.search_aliases.clone(),
            backend_hints: config.backend_hints.clone(),
        };
        // Shares the catalog the snapshot holds instead of copying every tool object into the
        // index (a second copy of a 1,000-tool catalog is ~1.4 MB of heap for the life of it).
        let catalog = meta_tools::exposed_catalog(&crate::listed::searchable(catalog, config));
        let build = move || Arc::new(SearchIndex::build_shared(catalog, &options));
        // A build takes milliseconds (about 50 at 10,000 tools) and `mws serve` runs one worker,
        // so it runs on a blocking thread while calls go on. Not `block_in_place`: that retires
        // the worker thread, and a stdio upstream spawned from it would get its parent-death
        // signal when that thread ends (`upstream/stdio.rs`).
        let idx = match tokio::task::spawn_blocking(build).await {
            Ok(idx) => idx,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        let prior = read_prior(config).await;
        *slot = Some((version, idx.clone(), prior.clone(), Instant::now()));
        (idx, prior)
    }
}

/// The usage prior from the database (`listed::stored_prior`), off the worker; a database that
/// cannot be read gives no prior (said once per read in the log), never a failed search.
async fn read_prior(config: &Arc<Config>) -> Arc<Prior> {
    let config = config.clone();
    let read = move || crate::listed::stored_prior(&config);
    match tokio::task::spawn_blocking(read).await {
        Ok(Ok(p)) => Arc::new(p),
        Ok(Err(e)) => {
            tracing::warn!("search: no usage prior: {e}");
            Arc::new(Prior::default())
        }
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

impl Proxy {
    /// `search_tools`: the query checked, then ranked off the worker (keywords, the usage prior,
    /// and vectors once ready), and the search logged without its text.
    pub(crate) async fn search_tools(&self, args: Option<&Value>, caller: &Caller) -> Value {
        let query = match meta_tools::search_query(args) {
            Ok(q) => q.to_string(),
            Err(e) => return text_result(e, true),
        };
        let snap = self.upstream.catalog().await;
        if snap.source == CatalogSource::None && snap.catalog.is_empty() {
            let why = self.upstream.status().list_error.unwrap_or_else(|| {
                "the upstream MCP server is down or has not answered yet".into()
            });
            return text_result(
                format!("{why}: there are no tools to search right now"),
                true,
            );
        }
        let (index, prior) = self
            .index
            .get(snap.version, &snap.catalog, &self.config)
            .await;
        // With the vectors of this version ready, the query is embedded (in memory only).
        let sem = match self.semantic.ready(snap.version) {
            Some((embedder, vectors)) => self
                .semantic
                .query_vector(embedder, &query)
                .await
                .map(|q| (vectors, q)),
            None => None,
        };
        let ws = self.working_set.borrow().clone();
        let listed: HashSet<String> = listed_names(&snap.catalog, &ws, &self.config)
            .into_iter()
            .collect();
        let held = held_matches(snap.catalog.held(), &query);
        // Ranking is linear in the (bounded) query but still CPU work: off the one worker, for
        // the reason `IndexCache::get` gives.
        let search = move || {
            let opts = QueryOptions {
                prior: Some(&prior),
                semantic: sem.as_ref().map(|(vectors, q)| Semantic {
                    vectors,
                    query: q,
                    fusion: FUSION,
                }),
                ..QueryOptions::default()
            };
            index.search_with(&query, &listed, &opts)
        };
        let reply = match tokio::task::spawn_blocking(search).await {
            Ok(reply) => reply,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        let text = if held.is_empty() {
            reply.json.to_string()
        } else {
            let mut json = (*reply.json).clone();
            if let Some(o) = json.as_object_mut() {
                o.insert("held".into(), Value::Array(held));
            }
            json.to_string()
        };
        if let Some(log) = &self.log {
            log.search(SearchRecord {
                ts: clock::fmt(clock::now()),
                session_id: Some(self.stateless.session(caller, &self.run_id, Instant::now())),
                client: caller.client.clone(),
                mode: reply.mode.to_string(),
                result_count: i64::try_from(reply.result_count).unwrap_or(i64::MAX),
                reply_bytes: i64::try_from(text.len()).unwrap_or(i64::MAX),
            });
        }
        text_result(text, false)
    }
}

/// The held tools whose names share a word with `query` (three letters or more), as search
/// replies name them: by name and why only, never their new text (it waits for the user).
fn held_matches(held: &[crate::catalog::definitions::HeldTool], query: &str) -> Vec<Value> {
    if held.is_empty() {
        return Vec::new();
    }
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.chars().count() >= 3)
        .map(str::to_lowercase)
        .collect();
    held.iter()
        .filter(|h| {
            h.name
                .to_lowercase()
                .split(|c: char| !c.is_alphanumeric())
                .any(|part| {
                    part.len() >= 3
                        && words
                            .iter()
                            .any(|w| part.starts_with(w.as_str()) || w.starts_with(part))
                })
        })
        .map(|h| serde_json::json!({"name": h.name, "held": h.message()}))
        .collect()
}
