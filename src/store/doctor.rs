//! The SQL behind `mws doctor`: look at a database without changing it (read-only, no
//! migrations), so that a broken or newer file is reported rather than touched.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

/// What `inspect` found.
#[derive(Debug, Clone, PartialEq)]
pub struct DbHealth {
    /// `["ok"]` when healthy, else SQLite's own list of problems.
    pub integrity: Vec<String>,
    /// The newest applied migration, `None` when the file has no migration table.
    pub schema_version: Option<i64>,
}

/// The newest migration this build carries (what `Store::open` migrates to).
pub fn latest_schema_version() -> i64 {
    super::embedded::migrations::runner()
        .get_migrations()
        .iter()
        .map(|m| i64::from(m.version()))
        .max()
        .unwrap_or(0)
}

/// Opens `path` read-only and runs `PRAGMA integrity_check` and reads the schema version.
pub fn inspect(path: &Path) -> Result<DbHealth, rusqlite::Error> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(super::BUSY_TIMEOUT)?;
    let mut st = conn.prepare("PRAGMA integrity_check")?;
    let integrity = st
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<Vec<_>, _>>()?;
    let has_history: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE name = 'refinery_schema_history')",
        [],
        |r| r.get(0),
    )?;
    let schema_version = if has_history {
        conn.query_row(
            "SELECT MAX(version) FROM refinery_schema_history",
            [],
            |r| r.get(0),
        )?
    } else {
        None
    };
    Ok(DbHealth {
        integrity,
        schema_version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn healthy_new_and_garbage_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        drop(Store::open(&path).unwrap());
        let h = inspect(&path).unwrap();
        assert_eq!(h.integrity, ["ok"]);
        assert_eq!(h.schema_version, Some(latest_schema_version()));
        assert!(latest_schema_version() >= 1);

        let junk = dir.path().join("junk.db");
        std::fs::write(
            &junk,
            b"this is not a database, just some text\n".repeat(200),
        )
        .unwrap();
        let e = inspect(&junk).unwrap_err().to_string();
        assert_eq!(e, "file is not a database");

        let empty = dir.path().join("empty.db");
        std::fs::write(&empty, b"").unwrap();
        let h = inspect(&empty).unwrap();
        assert_eq!(h.schema_version, None);
    }
}
