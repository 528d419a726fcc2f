//! What the status page shows, as data: the per-day figures folded in once per `calls` row
//! (`Daily`) and `gather`, which reads everything else one render needs from `report::compute`
//! and the `store::report` queries. Must never read tool arguments, results or search queries.

use std::collections::BTreeMap;

use time::OffsetDateTime;

use crate::catalog::Catalog;
use crate::config::Config;
use crate::report::hit_rate::{ListedAt, listed_intervals};
use crate::report::{self, Inputs, Report, Tokenizer, TokenizerKind, UpstreamInfo, Window};
use crate::server::proxy::tools_list::choose;
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
        // The projects' own tools only: their calls would mean scanning the window's calls at
        // every refresh, where the page reads only the rows added since the last one.
        projects: &store.report_project_tools()?,
        per_project: config.promote.per_project,
    });
    Ok(Status {
        report,
        days: daily.rows(first_day, last_day),
        recent: store.status_recent_calls(RECENT_CALLS)?,
        last_run: store.status_last_run(MAX_DECISIONS)?,
        held: crate::upstream::held::gather(config).pending,
    })
}
