//! The status page at `/` on the proxy's own listener (docs/status-page.md): the servers and
//! their health, what is listed and why, tokens listed against the whole catalog, the hit rate and
//! the calls per day, the latest calls, searches answered with nothing, the last promotion and
//! the tool definitions held for approval.
//! It sits behind the same guards as `/mcp` and shares nothing with the call path: its own
//! database connection, read on a blocking thread. This file is the route and the page's cached
//! connection; `gather.rs` reads the figures (`report::compute`, the `store::report` queries, the
//! per-day `Daily`), `page.rs` and `chart.rs` render them, `html.rs` escapes. Must never show or
//! read tool arguments, results or search queries.

pub mod chart;
pub mod gather;
pub mod html;
pub mod page;

pub use gather::{Daily, Day, MAX_DECISIONS, RECENT_CALLS, Status, WINDOW_DAYS, gather};
pub use html::esc;

use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use time::OffsetDateTime;

use crate::catalog::Catalog;
use crate::report::UpstreamInfo;
use crate::server::proxy::Proxy;
use crate::store::{Store, StoreError};

/// Seconds between the page's own refreshes. Lowering it reads the database more often.
pub const REFRESH_SECS: u32 = 30;

/// The page's Content-Security-Policy: nothing may load, not even from mws itself; inline styles
/// and the inline SVG charts are all the page has.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
                       base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// The page's state: its own connection (opened on first use) and the per-day figures.
pub struct Page {
    proxy: Arc<Proxy>,
    cached: Mutex<Cached>,
}

#[derive(Default)]
struct Cached {
    store: Option<Store>,
    daily: Daily,
}

impl Page {
    pub fn new(proxy: Arc<Proxy>) -> Page {
        Page {
            proxy,
            cached: Mutex::default(),
        }
    }

    /// The page as HTML. Blocking: reads the database.
    pub fn render(
        &self,
        catalog: &Catalog,
        upstream: &UpstreamInfo,
        now: OffsetDateTime,
    ) -> Result<String, StoreError> {
        let config = self.proxy.config();
        let mut cached = self.cached.lock().unwrap_or_else(|p| p.into_inner());
        let Cached { store, daily } = &mut *cached;
        let store = match store {
            Some(s) => s,
            None => {
                let s = Store::open(&config.db_path())?;
                s.trim_for_serving()?;
                store.insert(s)
            }
        };
        let status = gather(store, daily, config, catalog, upstream, now)?;
        Ok(page::html(&status, REFRESH_SECS))
    }
}

/// The routes of the status page (only `/`); the caller puts the guards in front.
pub fn router(proxy: Arc<Proxy>) -> Router {
    Router::new()
        .route("/", get(get_status))
        .with_state(Arc::new(Page::new(proxy)))
}

async fn get_status(State(page): State<Arc<Page>>) -> Response {
    let up = page.proxy.upstream();
    let snap = up.catalog().await;
    let info = UpstreamInfo::of(
        crate::upstream::target(page.proxy.config()),
        &up.status(),
        snap.source.name(),
    );
    let now = crate::clock::now();
    let page2 = page.clone();
    let rendered =
        tokio::task::spawn_blocking(move || page2.render(&snap.catalog, &info, now)).await;
    let text = [(header::CONTENT_TYPE, "text/plain; charset=utf-8")];
    match rendered {
        Ok(Ok(html)) => (
            [
                (header::CONTENT_TYPE, "text/html; charset=utf-8"),
                (header::CONTENT_SECURITY_POLICY, CSP),
                (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
                (header::CACHE_CONTROL, "no-store"),
                (header::REFERRER_POLICY, "no-referrer"),
            ],
            html,
        )
            .into_response(),
        Ok(Err(e)) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            text,
            format!("status page: cannot read the database: {e}\n"),
        )
            .into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            text,
            format!("status page: rendering failed: {e}\n"),
        )
            .into_response(),
    }
}

#[cfg(test)]
mod tests;
