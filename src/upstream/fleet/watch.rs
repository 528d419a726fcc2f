//! The fleet's background work per server: a watcher that marks the server ready once it has a
//! catalog and tells the fleet when its catalog changes (asking again, with a growing pause, while
//! it has none), and a relay of its notifications. Holds the fleet only weakly: both end with it.
//! Must not wait on one server for another.

use std::sync::Weak;
use std::time::Duration;

use super::members::FleetInner;
use crate::upstream::CatalogSource;

/// First wait before asking a server with no catalog again; it doubles up to `RETRY_MAX`.
/// Raising them asks a down server less often, and shows its tools later once it is back.
const RETRY_START: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(60);

/// Keeps member `i`'s readiness and the fleet's version current: asks for its catalog (waiting at
/// most `listMs` when it has none), again on every change it announces, and with a growing pause
/// while it has nothing.
pub async fn watch_member(fleet: Weak<FleetInner>, i: usize) {
    let (up, mut changes) = match fleet.upgrade() {
        Some(f) => (f.members[i].up.clone(), f.members[i].up.changes()),
        None => return,
    };
    let mut pause = RETRY_START;
    loop {
        let snap = up.catalog().await;
        let has = snap.source != CatalogSource::None;
        {
            let Some(f) = fleet.upgrade() else { return };
            if has {
                f.members[i].ready.send_replace(true);
            }
            f.announce().await;
        }
        if has {
            if changes.changed().await.is_err() {
                return;
            }
        } else {
            tokio::select! {
                () = tokio::time::sleep(pause) => {}
                r = changes.changed() => if r.is_err() { return },
            }
            pause = (pause * 2).min(RETRY_MAX);
        }
    }
}

/// Passes member `i`'s notifications (progress, log messages, resource updates) on.
pub async fn relay_notes(fleet: Weak<FleetInner>, i: usize) {
    let mut rx = match fleet.upgrade() {
        Some(f) => f.members[i].up.notifications(),
        None => return,
    };
    loop {
        match rx.recv().await {
            Ok(msg) => {
                let Some(f) = fleet.upgrade() else { return };
                let _ = f.notes.send(msg);
            }
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
        }
    }
}
