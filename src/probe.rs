//! The catalog a one-shot command uses (`mws report`, `doctor`, `promote`, `search`): asks the
//! upstream once, within `timeouts.firstStartMs` (a command starts its stdio servers cold, so
//! every listing is a first start; it returns as soon as every server answered or failed), what
//! it is and what it lists, through
//! `upstream::fleet::connect` like the proxy, so it sees the upstream exactly as the proxy would; falls
//! back to the last good list in `stateDir/catalog.json`; says why when there is neither
//! (`NoCatalog`). The one place a command's catalog is made: commands must not read
//! `catalog.json` or ask the upstream for its list themselves.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::catalog::{Catalog, CatalogError};
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

/// Neither the upstream nor `catalog.json` gave a tool: what a user reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no catalog: {0}")]
pub struct NoCatalog(pub String);

impl Probe {
    /// The catalog when it holds any tool, else why there is none. An empty list counts as none:
    /// nothing can be searched in it, and `mws promote` drops no tool on one empty answer.
    pub fn usable(&self, config: &Config) -> Result<&Arc<Catalog>, NoCatalog> {
        if !self.catalog.is_empty() {
            return Ok(&self.catalog);
        }
        let upstream = match self
            .status
            .list_error
            .as_ref()
            .or(self.status.last_error.as_ref())
        {
            // The error names the upstream already.
            Some(e) => format!("the upstream listed no tools ({e})"),
            None => format!(
                "the upstream ({}) listed no tools within {} ms",
                target(config),
                budget(config).as_millis()
            ),
        };
        let path = config.catalog_path();
        let file = match &self.catalog_file_error {
            Some(e) => format!("the stored catalog cannot be used ({e})"),
            None if !self.catalog.rejected().is_empty() => format!(
                "every tool in {} is left out because clients would reject it ({}; see `mws \
                 doctor`)",
                path.display(),
                self.catalog.rejected().len()
            ),
            None if path.exists() => format!("{} lists no tools", path.display()),
            None => format!(
                "there is no stored catalog at {} (it is written once the upstream has listed \
                 its tools)",
                path.display()
            ),
        };
        Err(NoCatalog(format!("{upstream}, and {file}")))
    }
}

/// The configured upstream as a user would recognise it (`upstream::target`).
pub fn target(config: &Config) -> String {
    upstream::target(config)
}

/// Connects, waits up to `budget` for a live catalog, and returns what it has by then.
async fn probe(config: &Config, budget: Duration) -> Probe {
    probe_with(upstream::fleet::connect(config), config, budget).await
}

/// `probe` over a given upstream (tests hand in fakes).
async fn probe_with(up: Arc<dyn Upstream>, config: &Config, budget: Duration) -> Probe {
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
        Some(s) if s.source != CatalogSource::None => (s.catalog, s.source.name()),
        _ => (Arc::new(Catalog::default()), "none"),
    };
    let mut out = Probe {
        status,
        catalog,
        catalog_source: source,
        catalog_file_error: None,
    };
    if out.catalog_source == "none" {
        match stored(config) {
            Ok(Some(c)) => {
                out.catalog = Arc::new(c.into_checked());
                out.catalog_source = "catalog.json";
            }
            Ok(None) => {}
            Err(e) => out.catalog_file_error = Some(e.to_string()),
        }
    }
    out
}

/// The last good list the proxy stored, `stateDir/catalog.json`, as written (unchecked); `None`
/// when there is no such file.
pub fn stored(config: &Config) -> Result<Option<Catalog>, CatalogError> {
    let path = config.catalog_path();
    if !path.exists() {
        return Ok(None);
    }
    Catalog::load_file(&path).map(Some)
}

/// The catalog (and the upstream's status) for a command that runs once: `probe` within
/// `budget`, on a runtime of its own.
pub fn for_command(config: &Config) -> anyhow::Result<Probe> {
    probe_blocking(config, budget(config))
}

/// `probe` on a runtime of its own, for the synchronous commands.
fn probe_blocking(config: &Config, budget: Duration) -> anyhow::Result<Probe> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    let p = rt.block_on(probe(config, budget));
    rt.shutdown_timeout(Duration::from_millis(200));
    Ok(p)
}

/// The budget for one probe: the first start's (`timeouts.firstStartMs`, at least `listMs`),
/// since a command's servers always start cold, and `SETTLE_MARGIN` more, so that each server's
/// own budget runs out first and its failure is reported under its name.
fn budget(config: &Config) -> Duration {
    let t = &config.timeouts;
    Duration::from_millis(t.first_start_ms.max(t.list_ms)) + SETTLE_MARGIN
}

/// How long a one-shot command waits past the servers' own first-start budget for their answers
/// or failures to come in (servers of a fleet start one after another on a loaded machine).
/// Raising it lengthens a command only when some server never answers.
const SETTLE_MARGIN: Duration = Duration::from_secs(2);

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

    /// `usable`'s message after a real probe of an upstream that refuses at once, with `file` as
    /// `catalog.json`: the part after the upstream's error, `catalog.json`'s path as `CATALOG`.
    fn no_catalog(file: Option<&str>) -> String {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            state_dir: dir.path().to_path_buf(),
            upstream: crate::config::Upstream::Http(crate::config::HttpUpstream {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: Default::default(),
                oauth: None,
            }),
            ..Config::default()
        };
        if let Some(body) = file {
            std::fs::write(config.catalog_path(), body).unwrap();
        }
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let p = rt.block_on(probe(&config, Duration::from_secs(10)));
        let message = p.usable(&config).unwrap_err().to_string();
        let (upstream, file) = message.split_once("), and ").expect(&message);
        assert!(
            upstream.starts_with(
                "no catalog: the upstream listed no tools (upstream unavailable: \
                 http://127.0.0.1:9/mcp"
            ),
            "{message}"
        );
        file.replace(&config.catalog_path().display().to_string(), "CATALOG")
    }

    #[test]
    fn no_catalog_says_why_as_a_user_reads_it() {
        assert_eq!(
            no_catalog(None),
            "there is no stored catalog at CATALOG (it is written once the upstream has listed \
             its tools)"
        );
        assert_eq!(
            no_catalog(Some("{\"tools\": []}")),
            "CATALOG lists no tools"
        );
        assert_eq!(
            no_catalog(Some("{\"tools\": 3}")),
            "the stored catalog cannot be used (CATALOG: not a tools/list result: expected a \"tools\" \
             array)"
        );
        assert_eq!(
            no_catalog(Some("[{\"name\": \"bad name\"}]")),
            "every tool in CATALOG is left out because clients would reject it (1; see `mws \
             doctor`)"
        );
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
