//! The SQLite store `state.db`: open with pragmas, permissions and migrations. All SQL lives in this
//! module and its children (`store/*.rs`), one file per concern. Must not decide anything: the
//! rules (promotion, matching, reporting) are in the pure modules that call it.

pub mod catalog;
pub mod doctor;
pub mod ingest;
pub mod log;
pub mod promote;
pub mod report;
pub mod serve;

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::Connection;

pub use log::{CallRecord, LogEvent, LogSink, SearchRecord};
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
    Sql(#[from] rusqlite::Error),
}

/// One connection to `state.db`. A process has one writer; readers may open more.
pub struct Store {
    pub(crate) conn: Connection,
    path: PathBuf,
}

impl Store {
    /// Opens (creating if needed, mode 0600, parent dir 0700) and migrates the database at `path`.
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let io = |error| StoreError::Io {
            path: path.to_path_buf(),
            error,
        };
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
            && !dir.exists()
        {
            std::fs::create_dir_all(dir).map_err(io)?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io)?;
        }
        // Create the file ourselves so that it is 0600 from the first byte.
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(path)
            .map_err(io)?;
        let sq = |error| StoreError::Sqlite {
            path: path.to_path_buf(),
            error,
        };
        let mut conn = Connection::open(path).map_err(sq)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sq)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sq)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sq)?;
        conn.pragma_update(None, "foreign_keys", "ON").map_err(sq)?;
        conn.pragma_update(None, "mmap_size", MMAP_BYTES)
            .map_err(sq)?;
        migrate(&mut conn, &file, path)?;
        // The -wal and -shm files inherit nothing from the main file: tighten them too.
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
        Ok(())
    }

    /// The underlying connection, for store submodules and tests.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// Runs pending migrations while holding an exclusive lock on the database file, so that two
/// processes opening a new database at once do not both try to create the tables.
fn migrate(conn: &mut Connection, file: &File, path: &Path) -> Result<(), StoreError> {
    file.lock().map_err(|error| StoreError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    let result = embedded::migrations::runner().run(conn);
    let _ = file.unlock();
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
