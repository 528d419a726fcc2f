//! What `search_tools` ranks with: the search index shared per catalog version and the usage
//! prior read from `state.db` again when older than `PRIOR_TTL` (`search.rs` runs the search,
//! `embedding.rs` holds the vectors). Must never log query text and never write the database.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::search::{Prior, SearchIndex, SearchOptions};
use crate::server::proxy::calls::warn_shadowed;
use crate::server::proxy::meta_tools;
use crate::upstream::UpstreamStatus;

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
    /// `status` gives the servers' own words on what they are for (`purposes`).
    pub(crate) async fn get(
        &self,
        version: u64,
        catalog: &Arc<Catalog>,
        config: &Arc<Config>,
        status: &UpstreamStatus,
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
            purposes: purposes(config, status),
        };
        // Shares the catalog the snapshot holds instead of copying every tool object into the
        // index (a second copy of a 1,000-tool catalog is ~1.4 MB of heap for the life of it).
        let catalog = meta_tools::exposed_catalog(&crate::listed::searchable(catalog, config));
        let build = move || Arc::new(SearchIndex::build_shared(catalog, &options));
        // A build takes milliseconds (about 50 at 10,000 tools) and `mws serve` runs one worker,
        // so it runs on a blocking thread while calls go on. Not `block_in_place`: that retires
        // the worker thread, and a stdio upstream spawned from it would get its parent-death
        // signal when that thread ends (`upstream/stdio/mod.rs`).
        let idx = match tokio::task::spawn_blocking(build).await {
            Ok(idx) => idx,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        let prior = read_prior(config).await;
        *slot = Some((version, idx.clone(), prior.clone(), Instant::now()));
        (idx, prior)
    }
}

/// What each server is for, in words (`SearchOptions::purposes`): the config's `description`,
/// then the server's `serverInfo` title and description and its `instructions`.
pub(crate) fn purposes(config: &Config, status: &UpstreamStatus) -> BTreeMap<String, String> {
    let mut out = config.server_purposes();
    for s in &status.servers {
        let info = s.status.server_info.as_ref();
        let said = [
            info.and_then(|i| i.get("title")).and_then(Value::as_str),
            info.and_then(|i| i.get("description"))
                .and_then(Value::as_str),
            s.status.instructions.as_deref(),
        ];
        for text in said.into_iter().flatten() {
            let entry = out.entry(s.name.clone()).or_default();
            if !entry.is_empty() {
                entry.push_str(". ");
            }
            entry.push_str(text);
        }
    }
    out
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
