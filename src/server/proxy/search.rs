//! `search_tools` as the proxy answers it: the query checked, ranked off the worker with the
//! index and prior of `search_index.rs` and, once ready, the tool vectors of `embedding.rs`, and
//! logged without its text; and `keep_embedded`, the background task of `mws serve` that makes
//! those vectors ready per catalog version. Must never log query text and never write the
//! database but through `LogSink`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use crate::clock;
use crate::embed::Embedder;
use crate::mcp::Caller;
use crate::search::QueryOptions;
use crate::search::semantic::{FUSION, Semantic};
use crate::server::proxy::Proxy;
use crate::server::proxy::calls::text_result;
use crate::server::proxy::embedding::catalog_vectors;
use crate::server::proxy::meta_tools;
use crate::server::proxy::tools_list::listed_names;
use crate::store::SearchRecord;
use crate::upstream::CatalogSource;

/// Runs for the life of `mws serve` when `search.semantic` is set: loads the embedder, then for
/// each catalog version (now and after every change) makes its tool vectors ready. A model that
/// cannot load or an endpoint that fails leaves keyword ranking, with the reason on stderr.
pub async fn keep_embedded(proxy: Arc<Proxy>) {
    let Some(semantic) = proxy.config.search.semantic.clone() else {
        return;
    };
    let open = move || Embedder::open(&semantic);
    let embedder = match tokio::task::spawn_blocking(open).await {
        Ok(Ok(e)) => Arc::new(e),
        Ok(Err(e)) => {
            eprintln!("mws: warning: search ranks by keywords only: {e}");
            return;
        }
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    };
    proxy.semantic.set_embedder(embedder.clone());
    let mut changes = proxy.upstream.changes();
    loop {
        let snap = proxy.upstream.catalog().await;
        if !snap.catalog.is_empty() && !proxy.semantic.has(snap.version) {
            let (index, _) = proxy
                .index
                .get(
                    snap.version,
                    &snap.catalog,
                    &proxy.config,
                    &proxy.upstream.status(),
                )
                .await;
            let config = proxy.config.clone();
            let emb = embedder.clone();
            let start = Instant::now();
            let run = move || catalog_vectors(&emb, &index, &config);
            match tokio::task::spawn_blocking(run).await {
                Ok(Ok((vectors, done))) => {
                    eprintln!(
                        "mws: search: vectors of {} tools ready in {} ms ({} from state.db, {} \
                         embedded)",
                        vectors.count(),
                        start.elapsed().as_millis(),
                        done.cached,
                        done.computed
                    );
                    proxy.semantic.store(snap.version, vectors);
                }
                Ok(Err(e)) => eprintln!("mws: warning: search ranks by keywords only: {e}"),
                Err(e) => std::panic::resume_unwind(e.into_panic()),
            }
        }
        if changes.changed().await.is_err() {
            return;
        }
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
            .get(
                snap.version,
                &snap.catalog,
                &self.config,
                &self.upstream.status(),
            )
            .await;
        // With the vectors of this version ready, the query is embedded (in memory only).
        let sem = match self.semantic.ready(snap.version) {
            Some((embedder, vectors)) => self
                .semantic
                .query_vector(embedder, &crate::search::typed_query(&query))
                .await
                .map(|q| (vectors, q)),
            None => None,
        };
        let ws = self.working_set_for(caller.project.as_deref());
        let listed: HashSet<String> = listed_names(&snap.catalog, &ws, &self.config)
            .into_iter()
            .collect();
        let held = held_matches(snap.catalog.held(), &query);
        let code_mode = self.config.code_mode.enabled;
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
                script: code_mode,
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
