//! `mws serve`: load the config, connect the upstream, start the call log and the working-set
//! watcher, then serve HTTP on loopback (printing the URL on stderr) or one client on stdio, until
//! EOF, SIGINT or SIGTERM; the log is flushed before exit.

use std::path::Path;
use std::time::Duration;

use super::{CmdResult, UsageError};
use crate::cli::ServeArgs;
use crate::config::Config;
use crate::server::{self, Proxy};
use crate::store::LogSink;

/// How long shutdown waits for the call log to reach the disk. Raising it delays exit on a slow
/// disk; lowering it risks losing the last rows.
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(5);

/// How long requests still open after SIGINT/SIGTERM may take to finish (upstream calls are
/// cancelled at once, so this covers writing their replies) before mws exits without them.
/// Raising it gives slow clients longer to read their last replies; lowering it exits sooner.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(3);

pub fn run(config_flag: Option<&Path>, args: ServeArgs) -> CmdResult {
    let loaded = super::load_config(config_flag)?;
    let mut config = loaded.config;
    if let Some(dir) = &args.state_dir {
        config.state_dir = crate::config::expand_tilde(dir);
    }
    if let Some(port) = args.port {
        config.listen.port = port;
    }
    let mut demo_dir = None;
    if args.demo {
        config.upstream = crate::demo::demo_upstream_config();
        config.servers.clear();
        // A few pins, so that the first tools/list already shows a working set.
        for pin in crate::demo::DEMO_PINS {
            if !config.pins.iter().any(|p| p == pin) {
                config.pins.push((*pin).to_string());
            }
        }
        if args.state_dir.is_none() {
            let dir = std::env::temp_dir().join(format!("mws-demo-{}", std::process::id()));
            config.state_dir = dir.clone();
            demo_dir = Some(dir);
        }
    }
    // Refuse a non-loopback host before anything starts.
    server::guards::bind_addr(&config.listen.host).map_err(UsageError)?;
    // Everything on this one thread unless TOKIO_WORKER_THREADS asks for workers: a call is I/O
    // plus well under 0.1 ms of CPU, and against a multi-thread runtime of one worker (the
    // scheduler's bookkeeping at every wake-up, the accept loop on another thread) this measured
    // about 10% less CPU per call over stdio and a lower p50 at 16 clients over HTTP
    // (docs/performance.md). Heavy work (a search index build) runs in `spawn_blocking`, so it
    // does not stall calls.
    let mut runtime = if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        tokio::runtime::Builder::new_current_thread()
    } else {
        tokio::runtime::Builder::new_multi_thread()
    };
    let runtime = runtime.enable_all().build()?;
    let result = runtime.block_on(serve(config, args.stdio));
    runtime.shutdown_timeout(Duration::from_secs(1));
    if let Some(dir) = demo_dir {
        let _ = std::fs::remove_dir_all(dir);
    }
    result
}

async fn serve(config: Config, stdio: bool) -> CmdResult {
    // 0700: the state dir holds the call history (docs/database.md: kept private).
    crate::private_file::create_dir(&config.state_dir).map_err(|e| {
        anyhow::anyhow!(
            "cannot create state dir {}: {e}",
            config.state_dir.display()
        )
    })?;
    crate::private_file::check_dir(&config.state_dir)?;
    let db = config.db_path();
    if config.servers.iter().any(|s| s.adopts_upstream_history) {
        let mut store = crate::store::Store::open(&db)?;
        super::adopt_history(&config, &mut store, "mws")?;
    }
    // A team database (docs/teams.md): its URL is checked now, its answers are not waited for;
    // calls wait in state.db until it takes them.
    if let Some(shipper) = crate::team::ship::Shipper::of(&config)? {
        eprintln!(
            "mws: shipping calls to the team database {} as {:?}",
            shipper.target.label, shipper.user
        );
        shipper.spawn(db.clone());
    }
    let upstream = crate::upstream::fleet::connect(&config);
    // A stdio client ends this process when it exits (often with a kill): rows are written at
    // once rather than batched, so that the last call of a session is not lost.
    let log = if stdio {
        LogSink::spawn_write_through(&db)
    } else {
        LogSink::spawn(&db)
    };
    let working_set = server::working_set::watch(&db);
    let host = config.listen.host.clone();
    let port = config.listen.port;
    let up = upstream.clone();
    let closing = upstream.clone();
    tokio::spawn(promote_on_schedule(config.clone(), upstream.clone()));
    let proxy = Proxy::new(upstream, config, working_set, Some(log.clone()));
    // Tool vectors for search, in the background: keyword ranking answers until they are ready.
    tokio::spawn(server::proxy::search::keep_embedded(proxy.clone()));
    // Freed heap, and code that ran once, given back to the system once the process goes quiet.
    tokio::spawn(server::give_back::give_back_when_quiet());
    if stdio {
        // A task of its own, so that a shutdown signal ends the wait for it; the reading loop, the
        // calls and the writer share this one thread, and a call wakes no other.
        let (input, output) = (
            server::stdio::pipes::stdin(),
            server::stdio::pipes::stdout(),
        );
        let served = tokio::spawn(server::stdio::serve(proxy, input, output));
        tokio::select! {
            r = served => r.map_err(|e| anyhow::anyhow!("the stdio server stopped: {e}"))??,
            () = shutdown_signal() => up.shutdown(),
        }
    } else {
        let listener = server::app::bind(&host, port).await?;
        let addr = listener.local_addr()?;
        eprintln!("mws: serving MCP at http://{addr}/mcp");
        let (stopping, stopped) = tokio::sync::oneshot::channel::<()>();
        let signal = async move {
            shutdown_signal().await;
            // Calls in flight end now (their rows are logged) instead of waiting out callMs.
            up.shutdown();
            let _ = stopping.send(());
        };
        let served = server::app::serve(listener, proxy, signal);
        tokio::pin!(served);
        let grace = async {
            if stopped.await.is_err() {
                std::future::pending::<()>().await;
            }
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        };
        tokio::select! {
            r = &mut served => r?,
            () = grace => eprintln!(
                "mws: requests still open {SHUTDOWN_GRACE:?} after the stop signal; exiting without them"
            ),
        }
    }
    if !log.flush(FLUSH_TIMEOUT) {
        eprintln!("mws: the call log did not finish writing within {FLUSH_TIMEOUT:?}");
    }
    closing.close().await;
    Ok(0)
}

/// Runs ingest + promote at each time `promote.schedule` names, as `mws promote` does, with the
/// proxy's own catalog for the reality check (none yet: skipped, nothing dropped). The
/// working-set watcher then announces the change to clients (`tools/list_changed`). A failed
/// run is said on stderr; the next one runs as planned.
async fn promote_on_schedule(
    config: Config,
    upstream: std::sync::Arc<dyn crate::upstream::Upstream>,
) {
    let schedule = config.promote.schedule;
    while let Some(at) = schedule.next(crate::clock::now(), crate::clock::local_offset()) {
        let wait = (at - crate::clock::now()).max(time::Duration::ZERO);
        tokio::time::sleep(wait.try_into().unwrap_or_default()).await;
        let snap = upstream.catalog().await;
        let (catalog, source) = match snap.source {
            _ if snap.catalog.is_empty() => (None, "skipped"),
            crate::upstream::CatalogSource::Disk => (Some(snap.catalog), "catalog.json"),
            _ => (Some(snap.catalog), "live"),
        };
        let config = config.clone();
        let run = move || -> anyhow::Result<usize> {
            let mut store = crate::store::Store::open(&config.db_path())?;
            crate::ingest::ingest_all(&config, &mut store, false)?;
            let now_t = crate::clock::now();
            let now = crate::clock::fmt(now_t);
            let catalog = catalog.as_deref();
            let decided = super::promote::decide_now(&config, &store, catalog, now_t, true)?;
            super::promote::write(&config, &mut store, &decided, catalog, source, &now)?;
            super::promote::retain(&config, &mut store, now_t, "mws: scheduled promote")?;
            Ok(decided.outcome.listing.len())
        };
        match tokio::task::spawn_blocking(run).await {
            Ok(Ok(n)) => eprintln!("mws: scheduled promote ({schedule}): {n} tool(s) listed"),
            Ok(Err(e)) => eprintln!(
                "mws: scheduled promote failed: {}",
                crate::term::safe_lines(&format!("{e:#}"))
            ),
            Err(e) => eprintln!("mws: scheduled promote failed: {e}"),
        }
    }
}

/// Resolves on SIGINT or SIGTERM.
async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
    tracing::info!("shutting down");
}
