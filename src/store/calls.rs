//! Writing `calls` rows and their `sessions`: a new row, and the row of a call both the proxy and a
//! transcript recorded, written as `call::merge` says whichever of the two arrives first. The
//! proxy's log (`log.rs`) and ingest (`ingest.rs`) both write through here. Must not decide
//! which fields win: that rule is `call::merge`.

use rusqlite::{Connection, OptionalExtension, params};

use crate::call::{self, Call, Status};

/// A session as a batch of calls saw it (a proxy batch, an ingested call, a seeded history).
pub(super) struct SessionSeen<'a> {
    pub id: &'a str,
    /// `proxy`, or the transcript's `via`.
    pub source: &'a str,
    pub client: Option<&'a str>,
    pub first: &'a str,
    pub last: &'a str,
}

impl<'a> SessionSeen<'a> {
    /// The session of one call.
    pub fn of(c: &'a Call) -> SessionSeen<'a> {
        SessionSeen {
            id: &c.session_id,
            source: if c.from_a_transcript() {
                &c.via
            } else {
                "proxy"
            },
            client: c.client.as_deref(),
            first: &c.ts,
            last: &c.ts,
        }
    }

    /// Widens the span to cover another call of the same session.
    pub fn saw(&mut self, c: &'a Call) {
        self.client = self.client.or(c.client.as_deref());
        self.first = self.first.min(c.ts.as_str());
        self.last = self.last.max(c.ts.as_str());
    }
}

/// Creates a session or widens the one there: its time span grows to cover `first`..`last`, and
/// a client name is filled in once known. The source stays the one that created it.
pub(super) fn upsert_session(conn: &Connection, s: &SessionSeen<'_>) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO sessions (id, source, client, first_seen, last_seen) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (id) DO UPDATE SET first_seen = min(first_seen, excluded.first_seen),
                                        last_seen = max(last_seen, excluded.last_seen),
                                        client = COALESCE(sessions.client, excluded.client)",
    )?
    .execute(params![s.id, s.source, s.client, s.first, s.last])?;
    Ok(())
}

/// The columns of a `calls` row, in the order `insert_row`, `rewrite_row` and `read_row` use.
const COLUMNS: &str = "ts, session_id, tool, via, ok, error_kind, ms, client, client_call_id, \
                       source_key, bytes_saved, project";

/// `insert_row`'s statement, spelled out so that the proxy's log writer builds no string per call
/// (the test `insert_row_names_the_columns` keeps it in step with `COLUMNS`).
const INSERT_ROW: &str = "INSERT OR IGNORE INTO calls \
     (ts, session_id, tool, via, ok, error_kind, ms, client, client_call_id, source_key, \
     bytes_saved, project) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

/// Inserts one `calls` row; a source key already there is left alone (a call is recorded once).
pub(super) fn insert_row(conn: &Connection, c: &Call) -> rusqlite::Result<()> {
    conn.prepare_cached(INSERT_ROW)?.execute(params![
        c.ts,
        c.session_id,
        c.tool,
        c.via,
        c.ok(),
        c.error_kind(),
        c.ms,
        c.client,
        c.client_call_id,
        c.source_key,
        c.bytes_saved,
        c.project
    ])?;
    Ok(())
}

/// Who stored a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Proxy,
    Transcript,
}

/// The first row `side` stored for the client call id `id`: its row id and the call.
pub(super) fn row_for_call_id(
    conn: &Connection,
    id: &str,
    side: Side,
) -> rusqlite::Result<Option<(i64, Call)>> {
    let which = match side {
        Side::Proxy => "NOT LIKE",
        Side::Transcript => "LIKE",
    };
    conn.prepare_cached(&format!(
        "SELECT id, {COLUMNS} FROM calls
         WHERE client_call_id = ?1 AND via {which} 'transcript:%' ORDER BY id LIMIT 1"
    ))?
    .query_row([id], |r| {
        let ok: bool = r.get(5)?;
        let kind: Option<String> = r.get(6)?;
        let call = Call {
            ts: r.get(1)?,
            session_id: r.get(2)?,
            tool: r.get(3)?,
            via: r.get(4)?,
            status: Status::from_stored(ok, kind.as_deref()),
            ms: r.get(7)?,
            client: r.get(8)?,
            client_call_id: r.get(9)?,
            source_key: r.get(10)?,
            bytes_saved: r.get(11)?,
            project: r.get(12)?,
            ..Call::default()
        };
        Ok((r.get(0)?, call))
    })
    .optional()
}

/// Makes row `id`, which holds one of the two sightings, the call's one row: `call::merge` of
/// the proxy's and the transcript's. Both arrival orders end here.
pub(super) fn write_merged(
    conn: &Connection,
    id: i64,
    proxy: &Call,
    transcript: &Call,
) -> rusqlite::Result<()> {
    let c = call::merge(proxy, transcript);
    conn.prepare_cached(
        "UPDATE calls SET ts = ?2, session_id = ?3, tool = ?4, via = ?5, ok = ?6, error_kind = ?7,
                          ms = ?8, client = ?9, client_call_id = ?10, source_key = ?11,
                          bytes_saved = ?12, project = ?13
         WHERE id = ?1",
    )?
    .execute(params![
        id,
        c.ts,
        c.session_id,
        c.tool,
        c.via,
        c.ok(),
        c.error_kind(),
        c.ms,
        c.client,
        c.client_call_id,
        c.source_key,
        c.bytes_saved,
        c.project
    ])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_row_names_the_columns() {
        assert!(INSERT_ROW.contains(&format!("({COLUMNS})")), "{INSERT_ROW}");
    }
}
