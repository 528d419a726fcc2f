//! A server of `servers` that could not be started from its config (an unset `${VAR}`, a refused
//! URL): it serves its stored catalog, if any (held tools left out), and fails every request at
//! once with the reason.
//! Must not start anything.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use super::{CallContext, CatalogSnapshot, CatalogSource, Upstream, UpstreamError, UpstreamStatus};
use crate::catalog::Catalog;

/// A server that could not be started from its config: serves its stored catalog, if any, and
/// fails every request at once with the reason.
pub(super) struct Stopped {
    catalog: Option<Arc<Catalog>>,
    why: String,
    changes: tokio::sync::watch::Sender<u64>,
}

impl Stopped {
    /// `hold_new`: `policy.holdNewTools` (the stored catalog is held to the approved
    /// definitions like a listed one).
    pub(super) fn serving(catalog_path: PathBuf, why: String, hold_new: bool) -> Arc<dyn Upstream> {
        let catalog = super::cache::Cache::open(catalog_path, std::time::Duration::MAX, hold_new)
            .snapshot(std::time::Instant::now())
            .map(|s| s.catalog);
        Arc::new(Stopped {
            catalog,
            why,
            changes: tokio::sync::watch::channel(1).0,
        })
    }
}

#[async_trait::async_trait]
impl Upstream for Stopped {
    async fn catalog(&self) -> CatalogSnapshot {
        match &self.catalog {
            Some(c) => CatalogSnapshot {
                catalog: c.clone(),
                source: CatalogSource::Disk,
                version: 1,
            },
            None => super::empty_snapshot(),
        }
    }

    async fn request(&self, _: &str, _: Value, _: &CallContext) -> Result<Value, UpstreamError> {
        Err(UpstreamError::Unavailable(format!(
            "not started: {}",
            self.why
        )))
    }

    async fn notify(&self, _: &str, _: Option<Value>) -> Result<(), UpstreamError> {
        Ok(())
    }

    fn status(&self) -> UpstreamStatus {
        UpstreamStatus {
            last_error: Some(format!("not started: {}", self.why)),
            ..UpstreamStatus::default()
        }
    }

    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
    }
}
