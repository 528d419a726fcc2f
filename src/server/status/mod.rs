//! The status page at `/` on the proxy's own listener (docs/status-page.md): the servers and
//! their health, what is listed and why, tokens listed against the whole catalog, the hit rate and
//! the calls per day, the latest calls, searches answered with nothing, the last promotion and
//! the tool definitions held for approval.
//! It sits behind the same guards as `/mcp` and shares nothing with the call path: its own
//! database connection, read on a blocking thread. Figures come from `report::compute` and the
//! `store::report` queries; per-day figures are folded in once per `calls` row (`Daily`). Must
//! never show or read tool arguments, results or search queries.

pub mod chart;
pub mod page;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use time::OffsetDateTime;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::report::hit_rate::{ListedAt, listed_intervals};
use crate::report::{self, Inputs, Report, Tokenizer, TokenizerKind, UpstreamInfo, Window};
use crate::server::proxy::Proxy;
use crate::server::proxy::listing::choose;
use crate::store::report::{CallRef, RefusedRow, Span};
use crate::store::status::{RecentCall, RunRow};
use crate::store::{Store, StoreError};

/// Days of history the charts and the search figures cover, today included. Raising it shows a
/// longer history, and the first render after a start reads that many more days of calls.
pub const WINDOW_DAYS: i64 = 28;
/// Latest calls listed. Raising it lengthens the table.
pub const RECENT_CALLS: usize = 20;
/// Most decisions of the last promotion shown (changes first). Raising it lengthens the table.
pub const MAX_DECISIONS: usize = 60;
/// Seconds between the page's own refreshes. Lowering it reads the database more often.
pub const REFRESH_SECS: u32 = 30;

/// The page's Content-Security-Policy: nothing may load, not even from mws itself; inline styles
/// and the inline SVG charts are all the page has.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
                       base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// One day's calls (UTC day).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Day {
    /// `YYYY-MM-DD`.
    pub day: String,
    pub calls: u64,
    pub ok: u64,
    /// Successful calls, not through `call_tool`, to a tool listed at the time.
    pub hits: u64,
}

impl Day {
    /// `hits / ok`, as `mws report` counts the hit rate; `None` on a day without a success.
    pub fn hit_rate(&self) -> Option<f64> {
        (self.ok > 0).then(|| self.hits as f64 / self.ok as f64)
    }
}

/// Per-day figures, folded in from `calls` one row at a time and kept between renders: a render
/// reads only the rows added since the last (by row id). A call is judged against the listing at
/// its time, which later promotion runs do not change.
#[derive(Debug, Default)]
pub struct Daily {
    last_id: i64,
    days: BTreeMap<String, Day>,
}

impl Daily {
    /// Counts one call.
    pub fn add(&mut self, c: &CallRef<'_>, listed: &ListedAt) {
        let key = c.ts.get(..10).unwrap_or(c.ts);
        if !self.days.contains_key(key) {
            let day = Day {
                day: key.to_string(),
                ..Day::default()
            };
            self.days.insert(key.to_string(), day);
        }
        let d = self.days.get_mut(key).expect("inserted above");
        d.calls += 1;
        if c.ok {
            d.ok += 1;
            if c.via != "call_tool" && listed.contains(c.tool, c.ts) {
                d.hits += 1;
            }
        }
    }

    /// Reads the calls added since the last update, from `first_day` on, and forgets older days.
    pub fn update(
        &mut self,
        store: &Store,
        first_day: &str,
        listed: &ListedAt,
    ) -> Result<(), StoreError> {
        let max = store.status_max_call_id()?;
        if max < self.last_id {
            // Rows went away (a restored or cleaned database): count again.
            *self = Daily::default();
        }
        let since = format!("{first_day}T00:00:00.000Z");
        store.status_calls_after(self.last_id, max, &since, |c| self.add(c, listed))?;
        self.last_id = max;
        self.days.retain(|d, _| d.as_str() >= first_day);
        Ok(())
    }

    /// Every day from `first_day` to `last_day`, oldest first, days without calls as zeros.
    pub fn rows(&self, first_day: time::Date, last_day: time::Date) -> Vec<Day> {
        let mut out = Vec::new();
        let mut d = first_day;
        while d <= last_day {
            let key = day_key(d);
            out.push(self.days.get(&key).cloned().unwrap_or(Day {
                day: key,
                ..Day::default()
            }));
            match d.next_day() {
                Some(n) => d = n,
                None => break,
            }
        }
        out
    }
}

fn day_key(d: time::Date) -> String {
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

/// Everything the page shows.
#[derive(Debug, Clone)]
pub struct Status {
    /// What is listed and why, the token sizes, the listing mode, the searches and the upstream.
    pub report: Report,
    /// The window's days, oldest first.
    pub days: Vec<Day>,
    pub recent: Vec<RecentCall>,
    pub last_run: Option<RunRow>,
    /// Tool definitions held for the user's approval (docs/tool-approval.md).
    pub held: Vec<crate::upstream::held::Pending>,
}

/// Reads the page's figures at `now`: the listing through `report::compute` (the same figures as
/// `mws report`), the per-day figures through `daily`.
pub fn gather(
    store: &Store,
    daily: &mut Daily,
    config: &Config,
    catalog: &Catalog,
    upstream: &UpstreamInfo,
    now: OffsetDateTime,
) -> Result<Status, StoreError> {
    let last_day = now.date();
    let first_day = last_day - time::Duration::days(WINDOW_DAYS - 1);
    let since = format!("{}T00:00:00.000Z", day_key(first_day));
    let window = Window {
        label: format!("{WINDOW_DAYS}d"),
        duration: now - time::PrimitiveDateTime::new(first_day, time::Time::MIDNIGHT).assume_utc(),
    };
    let span = Span {
        since,
        until: crate::clock::fmt(now),
    };
    let working_set = store.report_working_set()?;
    let names: Vec<String> = working_set.iter().map(|w| w.tool.clone()).collect();
    let chosen = choose(catalog, &names, config);
    let intervals = listed_intervals(
        &store.report_transitions()?,
        &working_set,
        &config.pins,
        &span,
    );
    daily.update(store, &day_key(first_day), &ListedAt::new(&intervals))?;
    let wanted: Vec<&str> = names.iter().map(String::as_str).collect();
    let report = report::compute(&Inputs {
        now,
        window: &window,
        tokenizer: &Tokenizer::load(TokenizerKind::O200k),
        catalog,
        listed: &chosen.tools,
        mode: &chosen.mode,
        pins: &config.pins,
        working_set: &working_set,
        usage: &[],
        last_success: &store.report_last_success(&wanted)?,
        clients: &[],
        sessions: 0,
        searches: &store.report_searches(&span)?,
        refused: &RefusedRow::default(),
        policy_hidden: crate::listed::hidden_by_policy(catalog, config),
        hits: 0,
        upstream,
        // The page does not show it (`mws report` and `mws doctor` do).
        semantic_ranking: None,
    });
    Ok(Status {
        report,
        days: daily.rows(first_day, last_day),
        recent: store.status_recent_calls(RECENT_CALLS)?,
        last_run: store.status_last_run(MAX_DECISIONS)?,
        held: crate::upstream::held::gather(config).pending,
    })
}

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

/// Text made safe for HTML element content and quoted attribute values.
pub fn esc(s: &str) -> Cow<'_, str> {
    if !s.contains(['&', '<', '>', '"', '\'']) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests;
