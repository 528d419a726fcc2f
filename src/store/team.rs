//! The SQL of shipping this machine's calls to a team database (`crate::team`): the rows not
//! shipped yet (the spool), how far shipping got, and giving up the oldest rows when the spool is
//! full. Must not decide anything: when to ship and what to say is in `crate::team::ship`.

use rusqlite::{OptionalExtension, params};

use super::{Store, StoreError};

/// One `calls` row as it is shipped (never arguments, results or query text: there are none).
#[derive(Debug, Clone, PartialEq)]
pub struct ShipRow {
    pub id: i64,
    pub ts: String,
    pub session_id: String,
    pub tool: String,
    pub via: String,
    pub ok: bool,
    pub error_kind: Option<String>,
    pub ms: Option<i64>,
    pub client: Option<String>,
    pub client_call_id: Option<String>,
    pub source_key: String,
}

/// A session some shipped row belongs to.
#[derive(Debug, Clone, PartialEq)]
pub struct ShipSession {
    pub id: String,
    pub source: String,
    pub client: Option<String>,
    pub first_seen: String,
    pub last_seen: String,
}

/// The spool of one team database: what waits, what was given up, and how the last try went.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spool {
    pub pending: u64,
    pub given_up: u64,
    pub shipped_through: i64,
    pub last_shipped: Option<String>,
    pub last_error: Option<String>,
    pub last_error_at: Option<String>,
}

impl Store {
    /// How far `database` has this machine's calls (0: nothing yet, the whole history waits).
    fn shipped_through(&self, database: &str) -> Result<i64, StoreError> {
        Ok(self
            .conn
            .query_row(
                "SELECT shipped_through FROM team_shipping WHERE database = ?1",
                [database],
                |r| r.get(0),
            )
            .optional()?
            .unwrap_or(0))
    }

    /// The oldest `limit` rows `database` does not have yet, in `calls.id` order, with their
    /// sessions.
    pub fn unshipped(
        &self,
        database: &str,
        limit: usize,
    ) -> Result<(Vec<ShipRow>, Vec<ShipSession>), StoreError> {
        let after = self.shipped_through(database)?;
        let mut stmt = self.conn.prepare_cached(
            "SELECT id, ts, session_id, tool, via, ok, error_kind, ms, client, client_call_id,
                    source_key
             FROM calls WHERE id > ?1 ORDER BY id LIMIT ?2",
        )?;
        let rows: Vec<ShipRow> = stmt
            .query_map(params![after, limit as i64], |r| {
                Ok(ShipRow {
                    id: r.get(0)?,
                    ts: r.get(1)?,
                    session_id: r.get(2)?,
                    tool: r.get(3)?,
                    via: r.get(4)?,
                    ok: r.get(5)?,
                    error_kind: r.get(6)?,
                    ms: r.get(7)?,
                    client: r.get(8)?,
                    client_call_id: r.get(9)?,
                    source_key: r.get(10)?,
                })
            })?
            .collect::<Result<_, _>>()?;
        let mut ids: Vec<&str> = rows.iter().map(|r| r.session_id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        let mut get = self.conn.prepare_cached(
            "SELECT id, source, client, first_seen, last_seen FROM sessions WHERE id = ?1",
        )?;
        let mut sessions = Vec::with_capacity(ids.len());
        for id in ids {
            let s = get
                .query_row([id], |r| {
                    Ok(ShipSession {
                        id: r.get(0)?,
                        source: r.get(1)?,
                        client: r.get(2)?,
                        first_seen: r.get(3)?,
                        last_seen: r.get(4)?,
                    })
                })
                .optional()?;
            sessions.extend(s);
        }
        Ok((rows, sessions))
    }

    /// Records that `database` has every row up to `through`.
    pub fn mark_shipped(&self, database: &str, through: i64, now: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO team_shipping (database, shipped_through, last_shipped)
             VALUES (?1, ?2, ?3)
             ON CONFLICT (database) DO UPDATE SET
                 shipped_through = MAX(shipped_through, excluded.shipped_through),
                 last_shipped = excluded.last_shipped, last_error = NULL, last_error_at = NULL",
            params![database, through, now],
        )?;
        Ok(())
    }

    /// Records why shipping to `database` failed (the rows stay in the spool).
    pub fn ship_failed(&self, database: &str, error: &str, now: &str) -> Result<(), StoreError> {
        self.conn.execute(
            "INSERT INTO team_shipping (database, last_error, last_error_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (database) DO UPDATE SET
                 last_error = excluded.last_error, last_error_at = excluded.last_error_at",
            params![database, error, now],
        )?;
        Ok(())
    }

    /// The spool of `database`.
    pub fn spool(&self, database: &str) -> Result<Spool, StoreError> {
        let row = self
            .conn
            .query_row(
                "SELECT shipped_through, given_up, last_shipped, last_error, last_error_at
                 FROM team_shipping WHERE database = ?1",
                [database],
                |r| {
                    Ok(Spool {
                        shipped_through: r.get(0)?,
                        given_up: r.get::<_, i64>(1)? as u64,
                        last_shipped: r.get(2)?,
                        last_error: r.get(3)?,
                        last_error_at: r.get(4)?,
                        pending: 0,
                    })
                },
            )
            .optional()?
            .unwrap_or_default();
        let pending: i64 = self.conn.query_row(
            "SELECT COUNT(*) FROM calls WHERE id > ?1",
            [row.shipped_through],
            |r| r.get(0),
        )?;
        Ok(Spool {
            pending: pending as u64,
            ..row
        })
    }

    /// Gives up the oldest waiting rows so that at most `keep` wait for `database`: they stay in
    /// state.db, the team database never gets them. Returns how many were given up now.
    pub fn give_up_oldest(&self, database: &str, keep: u64) -> Result<u64, StoreError> {
        let spool = self.spool(database)?;
        if spool.pending <= keep {
            return Ok(0);
        }
        let drop = spool.pending - keep;
        let through: i64 = self.conn.query_row(
            "SELECT id FROM calls WHERE id > ?1 ORDER BY id LIMIT 1 OFFSET ?2",
            params![spool.shipped_through, drop as i64 - 1],
            |r| r.get(0),
        )?;
        self.conn.execute(
            "INSERT INTO team_shipping (database, shipped_through, given_up) VALUES (?1, ?2, ?3)
             ON CONFLICT (database) DO UPDATE SET
                 shipped_through = excluded.shipped_through,
                 given_up = given_up + excluded.given_up",
            params![database, through, drop as i64],
        )?;
        Ok(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::call::{Call, Status};
    use crate::store::LogEvent;

    fn call(store: &mut Store, key: &str, ts: &str) {
        let c = Call {
            ts: ts.into(),
            session_id: "s1".into(),
            tool: "t".into(),
            via: "direct".into(),
            status: Some(Status::Ok),
            source_key: key.into(),
            ..Call::default()
        };
        store.write_log(&[LogEvent::Call(c)]).unwrap();
    }

    #[test]
    fn the_spool_ships_in_order_and_gives_up_the_oldest_past_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.db")).unwrap();
        for n in 0..5 {
            call(
                &mut store,
                &format!("proxy:{n}"),
                &format!("2026-01-0{}T00:00:00.000Z", n + 1),
            );
        }
        let db = "127.0.0.1:5432/mws";
        assert_eq!(store.spool(db).unwrap().pending, 5);
        let (rows, sessions) = store.unshipped(db, 2).unwrap();
        let keys: Vec<&str> = rows.iter().map(|r| r.source_key.as_str()).collect();
        assert_eq!(keys, ["proxy:0", "proxy:1"]);
        assert_eq!(sessions.len(), 1);
        store.mark_shipped(db, rows[1].id, "now").unwrap();
        assert_eq!(store.spool(db).unwrap().pending, 3);
        store
            .ship_failed(db, "connection refused", "later")
            .unwrap();
        let s = store.spool(db).unwrap();
        assert_eq!(s.last_error.as_deref(), Some("connection refused"));
        assert_eq!(store.give_up_oldest(db, 1).unwrap(), 2);
        let s = store.spool(db).unwrap();
        assert_eq!((s.pending, s.given_up), (1, 2));
        let (rows, _) = store.unshipped(db, 10).unwrap();
        assert_eq!(rows[0].source_key, "proxy:4");
        // Another database starts from the whole history.
        assert_eq!(store.spool("other/mws").unwrap().pending, 5);
    }
}
