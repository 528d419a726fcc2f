//! Asks the upstream once, within a budget, what it is and what it lists: for `mws report` and
//! `mws doctor`, which run once and exit. Goes through `upstream::connect` like the proxy, so it
//! sees the upstream exactly as the proxy would. Falls back to `catalog.json` for the catalog.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::catalog::Catalog;
use crate::config::Config;
use crate::upstream::{self, CatalogSource, Upstream, UpstreamStatus};

/// How often the probe looks again while the upstream is still being asked. Raising it makes the
/// probe coarser (it may wait up to this much longer than needed); lowering it spins more.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// What one probe found.
#[derive(Debug, Clone)]
pub struct Probe {
    pub status: UpstreamStatus,
    pub catalog: Arc<Catalog>,
    /// `live`, `memory`, `catalog.json` or `none`.
    pub catalog_source: &'static str,
    /// Why `catalog.json` could not be used, when it exists but is broken.
    pub catalog_file_error: Option<String>,
}

/// The configured upstream as a user would recognise it (`upstream::target`).
pub fn target(config: &Config) -> String {
    upstream::target(config)
}

/// Connects, waits up to `budget` for a live catalog, and returns what it has by then.
pub async fn probe(config: &Config, budget: Duration) -> Probe {
    probe_with(upstream::connect(config), config, budget).await
}

/// `probe` over a given upstream (tests hand in fakes).
pub async fn probe_with(up: Arc<dyn Upstream>, config: &Config, budget: Duration) -> Probe {
    let deadline = Instant::now() + budget;
    let mut snap = tokio::time::timeout(budget, up.catalog()).await.ok();
    loop {
        if snap
            .as_ref()
            .is_some_and(|s| s.source == CatalogSource::Live)
        {
            break;
        }
        let status = up.status();
        // Settled: the upstream answered and failed, or there is no time left.
        if (!status.reachable && status.last_error.is_some()) || Instant::now() >= deadline {
            break;
        }
        tokio::time::sleep(POLL_INTERVAL).await;
        let left = deadline.saturating_duration_since(Instant::now());
        if let Ok(s) = tokio::time::timeout(left, up.catalog()).await {
            snap = Some(s);
        }
    }
    let status = up.status();
    let (catalog, source) = match snap {
        Some(s) if s.source != CatalogSource::None => {
            let name = match s.source {
                CatalogSource::Live => "live",
                CatalogSource::Memory => "memory",
                _ => "catalog.json",
            };
            (s.catalog, name)
        }
        _ => (Arc::new(Catalog::default()), "none"),
    };
    let mut out = Probe {
        status,
        catalog,
        catalog_source: source,
        catalog_file_error: None,
    };
    if out.catalog_source == "none" {
        let path = config.catalog_path();
        if path.exists() {
            match Catalog::load_file(&path) {
                Ok(c) => {
                    out.catalog = Arc::new(c.into_checked());
                    out.catalog_source = "catalog.json";
                }
                Err(e) => out.catalog_file_error = Some(e.to_string()),
            }
        }
    }
    out
}

/// `probe` on a runtime of its own, for the synchronous commands.
pub fn probe_blocking(config: &Config, budget: Duration) -> anyhow::Result<Probe> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let p = rt.block_on(probe(config, budget));
    rt.shutdown_timeout(Duration::from_millis(200));
    Ok(p)
}

/// The budget for one probe: the config's `timeouts.listMs`.
pub fn budget(config: &Config) -> Duration {
    Duration::from_millis(config.timeouts.list_ms)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::{Value, json};

    use super::*;
    use crate::upstream::{CallContext, CatalogSnapshot, UpstreamError};

    /// Serves `Disk` until the `live_after`-th `catalog()` call, then `Live`; or fails at once.
    struct Fake {
        calls: Mutex<u32>,
        live_after: Option<u32>,
    }

    #[async_trait::async_trait]
    impl Upstream for Fake {
        async fn catalog(&self) -> CatalogSnapshot {
            let mut n = self.calls.lock().unwrap();
            *n += 1;
            let live = self.live_after.is_some_and(|k| *n > k);
            CatalogSnapshot {
                catalog: Arc::new(Catalog::new(vec![
                    json!({"name": if live { "fresh" } else { "stale" }}),
                ])),
                source: if live {
                    CatalogSource::Live
                } else {
                    CatalogSource::Disk
                },
                version: u64::from(*n),
            }
        }
        async fn request(
            &self,
            _: &str,
            _: Value,
            _: &CallContext,
        ) -> Result<Value, UpstreamError> {
            Err(UpstreamError::Unavailable("fake".into()))
        }
        async fn notify(&self, _: &str, _: Option<Value>) -> Result<(), UpstreamError> {
            Ok(())
        }
        fn status(&self) -> UpstreamStatus {
            let n = *self.calls.lock().unwrap();
            match self.live_after {
                Some(k) => UpstreamStatus {
                    reachable: n > k,
                    ..UpstreamStatus::default()
                },
                None => UpstreamStatus {
                    last_error: Some("connection refused".into()),
                    ..UpstreamStatus::default()
                },
            }
        }
        fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
            tokio::sync::watch::channel(0).1
        }
    }

    fn run(live_after: Option<u32>, budget: Duration) -> Probe {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let fake = Arc::new(Fake {
            calls: Mutex::new(0),
            live_after,
        });
        rt.block_on(probe_with(fake, &Config::default(), budget))
    }

    #[test]
    fn waits_for_the_live_catalog_within_the_budget() {
        // Disk at first (catalog.json while the upstream is asked), live on the third look.
        let p = run(Some(2), Duration::from_secs(10));
        assert_eq!(p.catalog_source, "live");
        assert!(p.catalog.contains("fresh") && p.status.reachable);
    }

    #[test]
    fn settles_on_what_it_has_when_the_budget_runs_out() {
        let p = run(Some(u32::MAX), Duration::from_millis(200));
        assert_eq!(p.catalog_source, "catalog.json");
        assert!(p.catalog.contains("stale") && !p.status.reachable);
    }

    #[test]
    fn stops_at_once_when_the_upstream_failed() {
        let started = std::time::Instant::now();
        let p = run(None, Duration::from_secs(30));
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "waited the whole budget"
        );
        assert_eq!(p.status.last_error.as_deref(), Some("connection refused"));
        assert_eq!(p.catalog_source, "catalog.json");
    }
}
