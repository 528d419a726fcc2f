//! Asks the upstream once, within a budget, what it is and what it lists: for `mws report` and
//! `mws doctor`, which run once and exit. Goes through `upstream::connect` like the proxy, so it
//! sees the upstream exactly as the proxy would. Falls back to `catalog.json` for the catalog.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::catalog::Catalog;
use crate::config::{Config, Upstream};
use crate::upstream::{self, CatalogSource, UpstreamStatus};

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

/// The configured upstream as a user would recognise it: the URL, or the command line.
pub fn target(config: &Config) -> String {
    match &config.upstream {
        Upstream::Http(h) => h.url.clone(),
        Upstream::Stdio(s) => std::iter::once(s.command.as_str())
            .chain(s.args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Connects, waits up to `budget` for a live catalog, and returns what it has by then.
pub async fn probe(config: &Config, budget: Duration) -> Probe {
    let up = upstream::connect(config);
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
                    out.catalog = Arc::new(c);
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
