//! The semantic layer of `search_tools` in `mws serve` (docs/search.md, "Semantic ranking"): the
//! configured embedder loaded off the worker, tool vectors computed in the background per catalog
//! version (read from `state.db` first, the missing ones embedded and written back), and a
//! query's vector per search. `search_tools` ranks by keywords until the vectors of the version
//! it serves exist. Must never block a listing or a call, and never log or store a query.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::config::Config;
use crate::embed::{EmbedError, Embedder};
use crate::search::SearchIndex;
use crate::search::semantic::{Vectors, text_hash, tool_text};

/// The embedder and the tool vectors of one catalog version.
#[derive(Default)]
pub(crate) struct SemanticState {
    embedder: OnceLock<Arc<Embedder>>,
    vectors: Mutex<Option<(u64, Arc<Vectors>)>>,
    warned_query: AtomicBool,
}

/// What one catalog's embedding did: tools read from `state.db` and tools embedded now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Embedded {
    pub cached: usize,
    pub computed: usize,
}

impl SemanticState {
    /// The embedder and the vectors of `version`, when both are ready.
    pub(crate) fn ready(&self, version: u64) -> Option<(Arc<Embedder>, Arc<Vectors>)> {
        let embedder = self.embedder.get()?.clone();
        let slot = self.vectors.lock().unwrap_or_else(|e| e.into_inner());
        match slot.as_ref() {
            Some((v, vectors)) if *v == version => Some((embedder, vectors.clone())),
            _ => None,
        }
    }

    /// Sets the embedder once it has loaded (`search::keep_embedded`).
    pub(crate) fn set_embedder(&self, embedder: Arc<Embedder>) {
        let _ = self.embedder.set(embedder);
    }

    /// Keeps `vectors` as those of catalog `version`.
    pub(crate) fn store(&self, version: u64, vectors: Vectors) {
        let mut slot = self.vectors.lock().unwrap_or_else(|e| e.into_inner());
        *slot = Some((version, Arc::new(vectors)));
    }

    pub(crate) fn has(&self, version: u64) -> bool {
        let slot = self.vectors.lock().unwrap_or_else(|e| e.into_inner());
        slot.as_ref().is_some_and(|(v, _)| *v == version)
    }

    /// The query's vector, off the worker; a failure is said once per process on stderr and
    /// the search ranks by keywords.
    pub(crate) async fn query_vector(
        &self,
        embedder: Arc<Embedder>,
        query: &str,
    ) -> Option<Vec<f32>> {
        let query = query.to_string();
        let run = move || embedder.embed(&[query.as_str()]);
        let result = match tokio::task::spawn_blocking(run).await {
            Ok(r) => r,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        match result {
            Ok(mut v) => v.pop(),
            Err(e) => {
                if !self.warned_query.swap(true, Ordering::Relaxed) {
                    tracing::warn!("search: ranking this query by keywords only: {e}");
                }
                None
            }
        }
    }
}

/// The vectors of every tool in `index`'s catalog, in its order: those `state.db` holds for this
/// embedder, the rest embedded and written back. A database that cannot be read or written costs
/// embedding again next time, said on stderr; it never fails the vectors.
pub fn catalog_vectors(
    embedder: &Embedder,
    index: &SearchIndex,
    config: &Config,
) -> Result<(Vectors, Embedded), EmbedError> {
    let tools = index.catalog().tools();
    let texts: Vec<String> = tools.iter().map(tool_text).collect();
    let hashes: Vec<String> = texts.iter().map(|t| text_hash(t)).collect();
    let model = embedder.id().to_string();
    let store = crate::store::Store::open(&config.db_path())
        .map_err(|e| eprintln!("mws: warning: tool vectors are not cached: {e}"))
        .ok();
    let mut cached = store
        .as_ref()
        .and_then(|s| {
            crate::store::vectors::read(s.conn(), &model, &hashes)
                .map_err(|e| eprintln!("mws: warning: cached tool vectors unreadable: {e}"))
                .ok()
        })
        .unwrap_or_default();
    let missing: Vec<usize> = (0..tools.len())
        .filter(|&d| !cached.contains_key(&hashes[d]))
        .collect();
    let refs: Vec<&str> = missing.iter().map(|&d| texts[d].as_str()).collect();
    let fresh = if refs.is_empty() {
        Vec::new()
    } else {
        embedder.embed(&refs)?
    };
    let dim = fresh
        .first()
        .or_else(|| cached.values().next())
        .map_or(0, Vec::len);
    let rows: Vec<(String, Vec<f32>)> = missing
        .iter()
        .zip(fresh)
        .map(|(&d, v)| (hashes[d].clone(), v))
        .collect();
    if let Some(mut s) = store
        && !rows.is_empty()
    {
        let conn = s.conn_mut();
        if let Err(e) = crate::store::vectors::write(conn, &model, &rows) {
            eprintln!("mws: warning: tool vectors are not cached: {e}");
        }
    }
    let done = Embedded {
        cached: tools.len() - rows.len(),
        computed: rows.len(),
    };
    cached.extend(rows);
    let mut vectors = Vectors::new(dim, tools.len());
    for (d, h) in hashes.iter().enumerate() {
        if let Some(v) = cached.get(h)
            && !vectors.set(d, v)
        {
            return Err(EmbedError::Run(format!(
                "vectors of {} and {} dimensions for one model; the model changed under the \
                 same name",
                dim,
                v.len()
            )));
        }
    }
    Ok((vectors, done))
}
