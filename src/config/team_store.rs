//! The `store` object of the config (docs/teams.md): where the usage history is shared besides
//! this machine's state.db. Only the values and their shape; connecting lives in `crate::team`.
//! Must not do I/O and must never print the URL (it may carry a password).

use serde::Deserialize;

/// Default bound of the spool: rows this machine keeps waiting for an unreachable team database
/// before it gives up the oldest (they stay in state.db, only the team never sees them).
pub const DEFAULT_SPOOL_MAX_ROWS: u64 = 1_000_000;

/// `store`: the team's PostgreSQL database, if any.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct TeamStore {
    /// `postgres://user:${PGPASSWORD}@127.0.0.1/mws`; `None` also reads `MWS_DATABASE_URL`.
    #[serde(deserialize_with = "postgres_url")]
    pub postgres: Option<String>,
    /// Rows waiting for the database, at most; past it the oldest are given up, loudly.
    pub spool_max_rows: u64,
    /// `false` keeps this user out of every team figure (priors and `mws report --team`).
    pub in_team_figures: bool,
    /// PEM certificates to trust for the database's TLS certificate, beside the system's.
    pub ca_file: Option<std::path::PathBuf>,
}

impl Default for TeamStore {
    fn default() -> Self {
        TeamStore {
            postgres: None,
            spool_max_rows: DEFAULT_SPOOL_MAX_ROWS,
            in_team_figures: true,
            ca_file: None,
        }
    }
}

/// A `postgres://` or `postgresql://` URL. The rest (host, password, `${VAR}`) is checked when
/// mws connects, where the message can say what was reached.
fn postgres_url<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = String::deserialize(d)?;
    check_scheme(&s).map_err(serde::de::Error::custom)?;
    Ok(Some(s))
}

/// Refuses anything but a PostgreSQL URL, naming the scheme seen (never the whole URL).
pub fn check_scheme(url: &str) -> Result<(), String> {
    match url.split_once("://") {
        Some(("postgres" | "postgresql", _)) => Ok(()),
        Some((scheme, _)) => Err(format!(
            "expected a postgres:// URL, found a {scheme}:// one"
        )),
        None => Err("expected a postgres:// URL such as postgres://mws@127.0.0.1/mws".into()),
    }
}
