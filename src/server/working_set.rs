//! Keeps the working sets the proxy lists in memory and fresh: a background thread reads the
//! store's `working_set` and `project_tools` tables at start and again whenever `PRAGMA data_version` says another
//! connection committed, so `mws promote` shows up without a restart and a `tools/list` never
//! touches the disk. Must not write to the store.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::promote::projects::WorkingSets;
use crate::store::{self, Store};

/// How often the watcher asks SQLite whether the database changed. Raising it delays how soon a
/// promotion shows up; lowering it costs a cheap pragma more often.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// The working sets as last read (the user-wide one and each project's, in listing order);
/// `listed::for_project` picks a session's.
pub type WorkingSet = Arc<WorkingSets>;

/// Starts the watcher for the database at `path`. The thread ends when every receiver is dropped.
/// A database that cannot be opened or read gives an empty working set (reported once on stderr)
/// and is tried again on the next poll.
pub fn watch(path: &Path) -> watch::Receiver<WorkingSet> {
    let (tx, rx) = watch::channel(Arc::new(WorkingSets::default()));
    let path = path.to_path_buf();
    // The first read happens before returning, so the first tools/list already has the set.
    let mut state = Reader::new(path);
    if let Some(ws) = state.poll() {
        let _ = tx.send(Arc::new(ws));
    }
    std::thread::Builder::new()
        .name("mws-working-set".into())
        .spawn(move || {
            loop {
                std::thread::sleep(POLL_INTERVAL);
                if tx.is_closed() {
                    return;
                }
                if let Some(ws) = state.poll() {
                    tx.send_if_modified(|cur| {
                        if **cur == ws {
                            false
                        } else {
                            *cur = Arc::new(ws);
                            true
                        }
                    });
                }
            }
        })
        .expect("spawn working-set watcher thread");
    rx
}

struct Reader {
    path: PathBuf,
    store: Option<Store>,
    version: Option<i64>,
    reported: bool,
}

impl Reader {
    fn new(path: PathBuf) -> Reader {
        Reader {
            path,
            store: None,
            version: None,
            reported: false,
        }
    }

    /// The working set when it may have changed since the last poll, else `None`.
    fn poll(&mut self) -> Option<WorkingSets> {
        if self.store.is_none() {
            match Store::open(&self.path).and_then(|s| s.trim_for_serving().map(|()| s)) {
                Ok(s) => self.store = Some(s),
                Err(e) => {
                    self.report(&e.to_string());
                    return None;
                }
            }
        }
        let conn = self.store.as_ref()?.conn();
        let read = store::serve::data_version(conn).and_then(|v| {
            if self.version == Some(v) {
                Ok(None)
            } else {
                store::serve::working_sets(conn).map(|ws| Some((v, ws)))
            }
        });
        match read {
            Ok(Some((v, ws))) => {
                self.version = Some(v);
                self.reported = false;
                Some(ws)
            }
            Ok(None) => None,
            Err(e) => {
                self.report(&e.to_string());
                self.store = None;
                self.version = None;
                None
            }
        }
    }

    fn report(&mut self, e: &str) {
        if !self.reported {
            tracing::error!("working set: cannot read {}: {e}", self.path.display());
            self.reported = true;
        }
    }
}
