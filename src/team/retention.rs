//! Retention on a team's PostgreSQL database (docs/teams.md#how-long-rows-are-kept): the calls and
//! sessions older than this member's `historyDays` cutoff are deleted in short batches, each its
//! own transaction, so that teammates' shipping never waits long. A member removes its own rows
//! and those of members not seen since the cutoff (whose rows are all older than it); another
//! active member's rows are theirs to remove under their own horizon. Must not decide the cutoff
//! (`config::history`) and never deletes a row at or after it.

use postgres::Client;

use super::ship::Shipper;
use super::{TeamError, pg_text};

/// Rows one transaction deletes. Raising it takes fewer round trips and holds each
/// transaction's row locks longer.
pub const BATCH_ROWS: i64 = 5_000;

/// Deletes `user`'s calls and sessions older than `cutoff`, and every row of members last seen
/// before it, a batch at a time; returns the calls deleted. Ends at the first batch short of
/// `BATCH_ROWS`, and after as many batches as the rows counted at its start need.
pub fn delete_before(
    client: &mut Client,
    user: &str,
    cutoff: &str,
) -> Result<u64, postgres::Error> {
    const WHOSE: &str = "(user_name = $2 OR user_name IN
                             (SELECT user_name FROM members WHERE last_seen < $1))";
    let mut deleted = 0u64;
    for (table, ts) in [("calls", "ts"), ("sessions", "last_seen")] {
        let old: i64 = client
            .query_one(
                &format!("SELECT COUNT(*) FROM {table} WHERE {ts} < $1 AND {WHOSE}"),
                &[&cutoff, &user],
            )?
            .get(0);
        let delete = client.prepare(&format!(
            "DELETE FROM {table} WHERE ctid IN
                 (SELECT ctid FROM {table} WHERE {ts} < $1 AND {WHOSE} LIMIT $3)"
        ))?;
        for _ in 0..=old / BATCH_ROWS {
            let n = client.execute(&delete, &[&cutoff, &user, &BATCH_ROWS])?;
            if table == "calls" {
                deleted += n;
            }
            if (n as i64) < BATCH_ROWS {
                break;
            }
        }
    }
    Ok(deleted)
}

/// Applies the cutoff on the config's team database; `Ok(None)`: no team database.
pub fn retain(config: &crate::config::Config, cutoff: &str) -> Result<Option<u64>, TeamError> {
    let Some(shipper) = Shipper::of(config)? else {
        return Ok(None);
    };
    let mut client = shipper.target.connect()?;
    delete_before(&mut client, &shipper.user, cutoff)
        .map(Some)
        .map_err(|e| {
            TeamError(format!(
                "team database {}: {}",
                shipper.target.label,
                pg_text(&e)
            ))
        })
}
