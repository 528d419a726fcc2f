//! What `mws doctor` says about a team database (`store.postgres`): whether the URL is usable,
//! whether the database answers and at which schema version, and this machine's spool for it
//! (rows waiting, rows given up, the last failure). No line without a team database. Reads
//! only: the tables are created by `mws serve` or `mws promote`, not here.

use super::Check;
use crate::config::Config;
use crate::store::Store;
use crate::team::{Target, pg_text, schema_version, user};

/// The `team` check, or `None` without a team database.
pub fn check(config: &Config) -> Option<Check> {
    let target = match Target::of(config) {
        Ok(Some(t)) => t,
        Ok(None) => return None,
        Err(e) => {
            return Some(Check::fail(
                "team",
                e.0,
                "fix store.postgres (or MWS_DATABASE_URL); docs/teams.md shows the form",
            ));
        }
    };
    let label = &target.label;
    let spool = Store::open(&config.db_path())
        .and_then(|s| s.spool(label))
        .ok();
    let mut details = Vec::new();
    if let Some(s) = &spool {
        details.push(format!(
            "spool: {} call(s) waiting in state.db; last shipped {}",
            s.pending,
            s.last_shipped.as_deref().unwrap_or("never")
        ));
        if let Some(e) = &s.last_error {
            details.push(format!(
                "last failure ({}): {e}",
                s.last_error_at.as_deref().unwrap_or("?")
            ));
        }
    }
    let given_up = spool.as_ref().map_or(0, |s| s.given_up);
    let who = user(config);
    let check = match target.connect_only() {
        Err(e) => Check::warn(
            "team",
            e.0,
            "calls still succeed and wait in state.db; they are sent when the database answers",
        ),
        Ok(mut client) => match schema_version(&mut client) {
            Err(e) => Check::warn(
                "team",
                format!("{label}: {}", pg_text(&e)),
                "see the message",
            ),
            Ok(v) => {
                let tables = match v {
                    Some(v) => format!("tables at version {v}"),
                    None => "no mws tables yet (`mws serve` or `mws promote` creates them)".into(),
                };
                if given_up > 0 {
                    Check::warn(
                        "team",
                        format!(
                            "{label} answers ({tables}); {given_up} call(s) were given up when \
                             the spool was full"
                        ),
                        "raise store.spoolMaxRows if the database is often away for long",
                    )
                } else {
                    Check::ok("team", format!("{label} answers as {who:?} ({tables})"))
                }
            }
        },
    };
    Some(check.details(details))
}
