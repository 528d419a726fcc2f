//! The SQLite store `state.db`: open with pragmas, permissions and migrations. All SQL lives in this
//! module and its children (`store/*.rs`), one file per concern. Must not decide anything: the
//! rules (promotion, matching, reporting) are in the pure modules that call it.

pub mod adopt;
pub mod calls;
pub mod catalog;
pub mod clean;
pub mod doctor;
pub mod health;
pub mod ingest;
pub mod log;
pub mod projects;
pub mod promote;
pub mod report;
pub mod retention;
pub mod seed;
pub mod serve;
pub mod status;
pub mod team;
pub mod vectors;
pub mod whatif;

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

pub use log::{LogEvent, LogSink, ScriptRecord, SearchRecord};
pub use promote::PromotionRecord;

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// How long a statement waits for another writer before failing with "database is locked".
/// Raising it trades a hard failure for a longer wait under heavy concurrent writing.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Bytes of the database file read through a memory map instead of `read` calls. Raising it
/// speeds up scans of bigger histories (promotion, report) at the cost of address space; the
/// pages are the OS page cache either way.
pub const MMAP_BYTES: i64 = 256 << 20;

/// Page cache of each of `mws serve`'s long-lived connections (the call-log writer, the
/// working-set watcher), in KiB. SQLite's default is 2 MiB per connection; the writer appends and
/// the watcher reads one small table, so more mostly buys resident memory. Raising it saves
/// re-reads of index pages from the OS page cache as the call log grows.
pub const SERVE_CACHE_KIB: i64 = 512;

/// WAL pages after which a commit of `mws serve`'s call-log writer copies the WAL back into the
/// database (SQLite's default is 1,000). A busy proxy's batch rewrites the same hot index leaves
/// (one per tool per index), so a longer WAL copies each of them once for more batches, with
/// fewer fsyncs. Raising it saves more of that work; the WAL file grows to about 4 KiB per page
/// and stays that size.
pub const SERVE_WAL_PAGES: i64 = 4000;

/// Errors of the store. The path-carrying variants put the cause in their own message and do not
/// chain it as `source()`: anyhow's `{:#}` would otherwise print it twice.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: {error}")]
    Sqlite {
        path: PathBuf,
        error: rusqlite::Error,
    },
    #[error("{path}: migration failed: {error}")]
    Migrate {
        path: PathBuf,
        error: refinery::Error,
    },
    #[error(transparent)]
    OpenDir(#[from] crate::private_file::OpenDirError),
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
}

/// One connection to `state.db`. A process has one writer; readers may open more.
pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed, mode 0600, parent dir 0700) and migrates the database at `path`.
    /// A parent directory other users may write to is refused (`private_file::check_dir`).
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let io = |error| StoreError::Io {
            path: path.to_path_buf(),
            error,
        };
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
            && !dir.exists()
        {
            crate::private_file::create_dir(dir).map_err(io)?;
        }
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            crate::private_file::check_dir(dir)?;
        }
        create_private(path).map_err(io)?;
        let sq = |error| StoreError::Sqlite {
            path: path.to_path_buf(),
            error,
        };
        let mut conn = Connection::open(path).map_err(sq)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sq)?;
        // Takes effect on a new file only (before its first table, and before WAL mode writes
        // the header): retention then gives freed pages back in steps (`store::retention`). An
        // older file keeps its mode until a VACUUM
        // (docs/database.md#what-is-kept-and-for-how-long).
        conn.pragma_update(None, "auto_vacuum", "INCREMENTAL")
            .map_err(sq)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sq)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sq)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sq)?;
        conn.pragma_update(None, "mmap_size", MMAP_BYTES)
            .map_err(sq)?;
        migrate(&mut conn, path)?;
        // SQLite gives new -wal and -shm files the main file's mode; ones left by an older build
        // may be wider. chmod goes by path and opens nothing (see `create_private`).
        for suffix in ["-wal", "-shm"] {
            let side = PathBuf::from(format!("{}{suffix}", path.display()));
            if side.exists() {
                let _ = std::fs::set_permissions(&side, std::fs::Permissions::from_mode(0o600));
            }
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Trims a connection that lives as long as `mws serve`: no memory map (every page of the
    /// database the writer's inserts touched through it stayed resident in the proxy, ~7 MB
    /// after 20,000 logged calls) and a `SERVE_CACHE_KIB` page cache. Reads then go through the
    /// OS page cache, which is shared and not the proxy's resident set.
    pub fn trim_for_serving(&self) -> Result<(), StoreError> {
        self.conn.pragma_update(None, "mmap_size", 0)?;
        self.conn
            .pragma_update(None, "cache_size", -SERVE_CACHE_KIB)?;
        self.conn
            .pragma_update(None, "wal_autocheckpoint", SERVE_WAL_PAGES)?;
        Ok(())
    }

    /// The underlying connection, for store submodules and tests.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// The connection for a transaction of a store submodule (`vectors::write`).
    pub fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

/// Serialises `create_private` within the process (see there).
static CREATING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Creates the database file with mode 0600 when there is none, so that it is private from the
/// first byte. An existing file is never opened here: closing any descriptor of a file drops
/// every POSIX lock the process holds on it, SQLite's own included, and a `sqlite3` reader then
/// believes it is the last connection, checkpoints and deletes the WAL the proxy still writes to.
/// A new file has no connection yet; the mutex keeps another thread's `Store::open` from opening
/// one before the descriptor is closed.
fn create_private(path: &Path) -> std::io::Result<()> {
    let _creating = CREATING.lock().unwrap_or_else(|e| e.into_inner());
    match OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(file) => drop(file),
        // A directory there: the same error opening it would give (stat opens nothing).
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
                return Err(std::io::Error::from_raw_os_error(libc::EISDIR));
            }
        }
        Err(e) => return Err(e),
    }
    Ok(())
}

/// Runs pending migrations while holding an exclusive lock on the database's directory, so that
/// two processes opening a new database at once do not both try to create the tables. The lock
/// is a `flock` on the directory, not on `state.db`: see `create_private` for why the database
/// file itself must not be opened outside SQLite.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let io = |error| StoreError::Io {
        path: path.to_path_buf(),
        error,
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let lock = File::open(dir).map_err(io)?;
    lock.lock().map_err(io)?;
    let result = embedded::migrations::runner().run(conn);
    drop(lock);
    result.map(|_| ()).map_err(|error| StoreError::Migrate {
        path: path.to_path_buf(),
        error,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_tables_views_and_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/state.db");
        let store = Store::open(&path).unwrap();
        let names: Vec<String> = store
            .conn
            .prepare("SELECT name FROM sqlite_master WHERE type IN ('table','view') ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for want in [
            "calls",
            "catalog",
            "daily_calls",
            "daily_searches",
            "ingest_files",
            "promotion_runs",
            "searches",
            "sessions",
            "tool_usage",
            "transitions",
            "working_set",
        ] {
            assert!(names.iter().any(|n| n == want), "missing {want}: {names:?}");
        }
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        drop(store);
        // Re-opening an up-to-date database is a no-op.
        Store::open(&path).unwrap();
    }
}
