//! The SQL the running proxy reads: the working set in listing order, and SQLite's
//! `data_version` so that a watcher notices another process's commit without re-reading tables;
//! and the same working set read-only, for the one-shot commands (`listed::stored_working_set`);
//! and the usage prior of search (sessions with a successful call per tool), read-only.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use crate::promote::Why;
use crate::promote::projects::{SetTool, WorkingSets};
use crate::search::Prior;

/// The `working_set` table's tool names ordered by position (then name, for equal positions).
pub fn working_set(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare_cached("SELECT tool FROM working_set ORDER BY position, tool")?;
    let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
    rows.collect()
}

/// Both working sets the proxy lists from: the `working_set` table (with each tool's reason and
/// project count) and the project listings of `project_tools`.
pub fn working_sets(conn: &Connection) -> rusqlite::Result<WorkingSets> {
    let mut stmt = conn
        .prepare_cached("SELECT tool, reason, projects FROM working_set ORDER BY position, tool")?;
    let user = stmt
        .query_map([], |r| {
            Ok(SetTool {
                tool: r.get(0)?,
                why: Why::parse(&r.get::<_, String>(1)?),
                projects: r.get(2)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    Ok(WorkingSets {
        user,
        projects: super::projects::project_listings(conn)?,
    })
}

/// `working_set` from the database at `path`, opened read-only (never created nor migrated).
pub fn read_working_set(path: &Path) -> rusqlite::Result<Vec<String>> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(super::BUSY_TIMEOUT)?;
    working_set(&conn)
}

/// Distinct sessions with a successful call per tool since `since`, from the database at `path`
/// opened read-only: the usage prior of search (`search::Prior`). Empty when there is no
/// database yet.
pub fn read_prior(path: &Path, since: &str) -> rusqlite::Result<Prior> {
    if !path.exists() {
        return Ok(Prior::default());
    }
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(super::BUSY_TIMEOUT)?;
    let mut stmt = conn.prepare(
        "SELECT tool, COUNT(DISTINCT session_id) FROM calls WHERE ts >= ?1 AND ok = 1 GROUP BY tool",
    )?;
    let rows = stmt
        .query_map([since], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, u32>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(Prior::from_sessions(rows))
}

/// `PRAGMA data_version`: changes when another connection commits to the database.
pub fn data_version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA data_version", [], |r| r.get(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn ordered_by_position_and_versioned() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        let reader = Store::open(&path).unwrap();
        let v0 = data_version(reader.conn()).unwrap();
        assert!(working_set(reader.conn()).unwrap().is_empty());
        let writer = Store::open(&path).unwrap();
        writer
            .conn()
            .execute_batch(
                "INSERT INTO working_set (tool, position, reason, since) VALUES
                 ('b_tool', 2, 'pin', '2026-11-29T00:00:00.000Z'),
                 ('a_tool', 1, 'promoted', '2026-11-29T00:00:00.000Z');",
            )
            .unwrap();
        assert_ne!(data_version(reader.conn()).unwrap(), v0);
        assert_eq!(working_set(reader.conn()).unwrap(), ["a_tool", "b_tool"]);
    }
}
