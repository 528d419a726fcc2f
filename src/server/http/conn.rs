//! The accept loop behind `app::serve`: one HTTP/1.1 connection task per client, with hyper's
//! header-read timeout (axum's own `serve` sets no timer, so a client trickling its headers held a
//! connection forever), graceful shutdown of every connection, and a return once all have closed.
//! Must not look at requests: that is the router's job.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::watch;

/// How long a client may take to send a request's line and headers once it started (the
/// connection is closed past it). Raising it tolerates slower clients, and lets a client that
/// trickles its headers hold a connection and its task that much longer.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long the loop waits before accepting again after `accept` failed (out of file
/// descriptors, say). Raising it sheds load longer; lowering it spins sooner.
const ACCEPT_RETRY: Duration = Duration::from_millis(100);

/// Serves `app` on `listener` until `shutdown` resolves, then calls `stopping` (which ends the
/// long-lived streams), lets every connection finish gracefully and returns once all are closed.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
    stopping: impl FnOnce(),
) -> std::io::Result<()> {
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection task holds a receiver; `closed()` resolves once they all dropped theirs.
    let (open_tx, open_rx) = watch::channel(());
    tokio::pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            r = listener.accept() => match r {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    tracing::debug!("accept failed: {e}");
                    tokio::time::sleep(ACCEPT_RETRY).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        // No Nagle delay on replies: an SSE reply is written in several pieces, and a JSON-RPC
        // answer should leave as soon as it is complete.
        let _ = tcp.set_nodelay(true);
        let service = TowerToHyperService::new(app.clone());
        let mut stop = stop_rx.clone();
        let open = open_rx.clone();
        tokio::spawn(async move {
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT);
            let conn = builder.serve_connection(TokioIo::new(tcp), service);
            tokio::pin!(conn);
            let mut stopping = false;
            loop {
                tokio::select! {
                    r = conn.as_mut() => {
                        if let Err(e) = r {
                            tracing::debug!("connection ended: {e}");
                        }
                        break;
                    }
                    _ = stop.wait_for(|s| *s), if !stopping => {
                        stopping = true;
                        conn.as_mut().graceful_shutdown();
                    }
                }
            }
            drop(open);
        });
    }
    drop(listener);
    stopping();
    let _ = stop_tx.send(true);
    drop(open_rx);
    open_tx.closed().await;
    Ok(())
}
