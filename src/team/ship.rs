//! Shipping this machine's calls to the team database: the rows of `calls` it does not have yet
//! (the spool, in state.db, so it survives restarts) go in `calls.id` order, in batches, each in
//! one transaction, and the spool's mark moves only after the database committed; a batch sent
//! again after a crash is skipped there by source key. `mws serve` ships in a thread of its own,
//! off every call's path; `mws promote`, `mws report` and `mws what-if` ship what waits before
//! they read this user's history from the database (`for_promotion`, `scan_for_report`,
//! `scan_for_whatif`).

use std::time::Duration;

use postgres::Client;

use super::{Target, TeamError, pg_text, queries};
use crate::clock;
use crate::store::Store;

/// Rows per transaction. Raising it means fewer round trips but a longer transaction when the
/// database has been away and a backlog waits.
pub const BATCH_ROWS: usize = 2_000;

/// How often `mws serve` looks for new rows while the database answers.
pub const IDLE: Duration = Duration::from_secs(1);

/// Longest wait between attempts while the database does not answer (doubling from `IDLE`).
pub const MAX_RETRY: Duration = Duration::from_secs(30);

/// Who ships and where: the database, the user the rows belong to, and the spool's bound.
#[derive(Clone)]
pub struct Shipper {
    pub target: Target,
    pub user: String,
    pub in_team_figures: bool,
    pub spool_max_rows: u64,
}

impl Shipper {
    /// The config's shipper, if it names a team database.
    pub fn of(config: &crate::config::Config) -> Result<Option<Shipper>, TeamError> {
        Ok(Target::of(config)?.map(|target| Shipper {
            target,
            user: super::user(config),
            in_team_figures: config.store.in_team_figures,
            spool_max_rows: config.store.spool_max_rows,
        }))
    }

    /// Ships everything waiting, connecting first if `client` is `None`. Returns how many rows
    /// arrived new. On failure the rows stay in the spool, the failure is recorded there, and
    /// `client` is dropped so that the next attempt reconnects.
    pub fn ship_pending(
        &self,
        store: &Store,
        client: &mut Option<Client>,
    ) -> Result<u64, TeamError> {
        let label = &self.target.label;
        let store_err = |e: crate::store::StoreError| TeamError(format!("state.db: {e}"));
        let given_up = store
            .give_up_oldest(label, self.spool_max_rows)
            .map_err(store_err)?;
        if given_up > 0 {
            tracing::error!(
                "team database {label}: more than store.spoolMaxRows ({}) calls waited for it; \
                 the oldest {given_up} were given up: they stay in this machine's state.db, the \
                 team database will not have them",
                self.spool_max_rows
            );
        }
        let result = self.ship_all(store, client);
        if let Err(e) = &result {
            *client = None;
            let _ = store.ship_failed(label, &e.0, &clock::fmt(clock::now()));
        }
        result
    }

    fn ship_all(&self, store: &Store, client: &mut Option<Client>) -> Result<u64, TeamError> {
        let label = &self.target.label;
        let mut new = 0;
        loop {
            let (rows, sessions) = store
                .unshipped(label, BATCH_ROWS)
                .map_err(|e| TeamError(format!("state.db: {e}")))?;
            let Some(last) = rows.last().map(|r| r.id) else {
                return Ok(new);
            };
            let now = clock::fmt(clock::now());
            let fresh = client.is_none();
            if fresh {
                *client = Some(self.target.connect()?);
            }
            let mut sent = queries::ship(
                client.as_mut().expect("connected above"),
                &self.user,
                self.in_team_figures,
                &now,
                &rows,
                &sessions,
            );
            // A kept connection the server or the network dropped since the last batch: one
            // new connection, one more try, before the rows wait for the next attempt.
            if sent.is_err() && !fresh {
                let c = client.insert(self.target.connect()?);
                sent = queries::ship(c, &self.user, self.in_team_figures, &now, &rows, &sessions);
            }
            new +=
                sent.map_err(|e| TeamError(format!("team database {label}: {}", pg_text(&e))))?;
            store
                .mark_shipped(label, last, &now)
                .map_err(|e| TeamError(format!("state.db: {e}")))?;
        }
    }

    /// Ships for as long as the process lives, in a thread of its own: every `IDLE` while the
    /// database answers, backing off to `MAX_RETRY` while it does not. Says when shipping
    /// stops working and when it works again, not at every attempt.
    pub fn spawn(self, db: std::path::PathBuf) {
        let run = move || {
            let mut client = None;
            let mut store: Option<Store> = None;
            let mut wait = IDLE;
            let mut failing = false;
            loop {
                if store.is_none() {
                    store = Store::open(&db)
                        .and_then(|s| s.trim_for_serving().map(|()| s))
                        .inspect_err(|e| tracing::warn!("team shipping: state.db: {e}"))
                        .ok();
                }
                let outcome = match &store {
                    Some(s) => self.ship_pending(s, &mut client),
                    None => Err(TeamError("state.db could not be opened".into())),
                };
                match outcome {
                    Ok(_) => {
                        if failing {
                            tracing::info!(
                                "team database {}: shipping calls again",
                                self.target.label
                            );
                        }
                        failing = false;
                        wait = IDLE;
                    }
                    Err(e) => {
                        if !failing {
                            tracing::warn!(
                                "{e}; calls wait in this machine's state.db and are sent when it \
                                 answers (`mws doctor` shows the spool)"
                            );
                        }
                        failing = true;
                        wait = (wait * 2).min(MAX_RETRY);
                    }
                }
                std::thread::sleep(wait);
            }
        };
        std::thread::Builder::new()
            .name("mws-team-shipper".into())
            .spawn(run)
            .expect("spawn the team shipper thread");
    }
}

/// What promotion reads from the team database: this user's usage over every machine they use
/// and the team priors (empty while `promote.team` is 0).
pub struct ForPromotion {
    pub usage: Vec<crate::promote::Usage>,
    pub priors: Vec<(String, u32)>,
}

/// Ships what waits (unless `ship` is false: a dry run), then reads this user's usage since
/// `window` and the team priors. `Ok(None)`: no team database.
pub fn for_promotion(
    config: &crate::config::Config,
    store: &crate::store::Store,
    window: &str,
    also: &[&str],
    ship: bool,
) -> Result<Option<ForPromotion>, TeamError> {
    let Some(shipper) = Shipper::of(config)? else {
        return Ok(None);
    };
    let mut client = None;
    if ship {
        shipper.ship_pending(store, &mut client)?;
    }
    let mut client = match client {
        Some(c) => c,
        None => shipper.target.connect()?,
    };
    let label = &shipper.target.label;
    let fail = |e: postgres::Error| TeamError(format!("team database {label}: {}", pg_text(&e)));
    let usage = queries::usage(&mut client, &shipper.user, window, also).map_err(fail)?;
    let priors = match config.promote.team {
        0 => Vec::new(),
        n => queries::team_priors(&mut client, &shipper.user, window, n).map_err(fail)?,
    };
    Ok(Some(ForPromotion { usage, priors }))
}

/// Connects for a command that reads the team database (`mws report`, `--team`, `mws what-if`)
/// after shipping what waits; `Ok(None)`: no team database.
pub fn read_after_shipping(
    config: &crate::config::Config,
    store: &Store,
) -> Result<Option<(Shipper, Client)>, TeamError> {
    let Some(shipper) = Shipper::of(config)? else {
        return Ok(None);
    };
    let mut client = None;
    shipper.ship_pending(store, &mut client)?;
    let client = client.map_or_else(|| shipper.target.connect(), Ok)?;
    Ok(Some((shipper, client)))
}

/// Hands `f` this user's calls in `[since, until]` for `mws report`: from the team database when
/// there is one and it answers (every machine of this user's), after shipping what waits;
/// `Ok(false)`: no team database, read state.db instead.
pub fn scan_for_report(
    config: &crate::config::Config,
    store: &Store,
    span: &crate::store::report::Span,
    f: impl FnMut(&crate::store::report::CallRef<'_>),
) -> Result<bool, TeamError> {
    let Some((shipper, mut client)) = read_after_shipping(config, store)? else {
        return Ok(false);
    };
    queries::report_scan_calls(&mut client, &shipper.user, &span.since, &span.until, f).map_err(
        |e| {
            TeamError(format!(
                "team database {}: {}",
                shipper.target.label,
                pg_text(&e)
            ))
        },
    )?;
    Ok(true)
}

/// Hands `f` this user's calls oldest first for `mws what-if`: from the team database when there
/// is one and it answers (after shipping what waits), so that what-if replays the history
/// promotion reads; `Ok(false)`: no team database, read state.db instead.
pub fn scan_for_whatif(
    config: &crate::config::Config,
    store: &Store,
    f: impl FnMut(&str, &str, &str, bool),
) -> Result<bool, TeamError> {
    let Some((shipper, mut client)) = read_after_shipping(config, store)? else {
        return Ok(false);
    };
    queries::scan_calls(&mut client, &shipper.user, f).map_err(|e| {
        TeamError(format!(
            "team database {}: {}",
            shipper.target.label,
            pg_text(&e)
        ))
    })?;
    Ok(true)
}
