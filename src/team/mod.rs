//! A team's shared usage history on PostgreSQL (docs/teams.md): connecting (the URL checked, a
//! password from `${VAR}`, plain on loopback or a Unix socket, TLS with a checked certificate
//! anywhere else), the schema (its own migrations in
//! `migrations-postgres/`, under an advisory lock so that many members' first connections do not
//! race), and every error worded for the user. The SQL is in `queries`; shipping this machine's
//! calls is `ship`. Never prints the URL (it may carry a password).

pub mod queries;
pub mod report;
pub mod retention;
pub mod ship;

use std::path::PathBuf;
use std::time::Duration;

use postgres::config::{Host, SslMode};
use postgres::error::SqlState;
use postgres::{Client, NoTls};

use crate::config::Config;
use crate::config::servers::expand_text;

mod embedded {
    refinery::embed_migrations!("migrations-postgres");
}

/// How long a connection attempt may take before the database counts as unreachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Any key: the lock every member's mws takes while it creates or upgrades the tables.
const MIGRATION_LOCK: i64 = 0x6d77_735f_7465_616d; // "mws_team"

/// Where the config (or `MWS_DATABASE_URL`) puts the team database; `None`: no team.
pub fn database_url(config: &Config) -> Option<String> {
    config.store.postgres.clone().or_else(|| {
        std::env::var("MWS_DATABASE_URL")
            .ok()
            .filter(|u| !u.is_empty())
    })
}

/// Whose history this is: config `user`, else the OS login name.
pub fn user(config: &Config) -> String {
    if let Some(u) = &config.user {
        return u.clone();
    }
    for var in ["USER", "LOGNAME"] {
        if let Ok(u) = std::env::var(var)
            && !u.is_empty()
        {
            return u;
        }
    }
    // SAFETY: getpwuid returns a pointer into static storage or null; read at once.
    unsafe {
        let pw = libc::getpwuid(libc::geteuid());
        if !pw.is_null() && !(*pw).pw_name.is_null() {
            return std::ffi::CStr::from_ptr((*pw).pw_name)
                .to_string_lossy()
                .into_owned();
        }
    }
    format!("uid-{}", unsafe { libc::geteuid() })
}

/// What went wrong reaching or preparing the team database, in the user's words. Never holds
/// the URL or a password.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct TeamError(pub String);

/// A checked team database URL: the libpq settings and the label it is known by
/// (`host:port/dbname`, the key of this machine's spool for it).
#[derive(Clone)]
pub struct Target {
    config: postgres::Config,
    pub label: String,
    /// `sslmode=require`: TLS, the server's certificate checked against the system's roots and
    /// `ca_file`.
    tls: bool,
    ca_file: Option<PathBuf>,
}

/// The label only: the settings hold the password.
impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("label", &self.label)
            .finish()
    }
}

impl Target {
    /// Expands `${VAR}` (`lookup` reads a variable) and checks the URL: it parses, and it reaches
    /// PostgreSQL either on this machine (loopback or a Unix socket) or over TLS
    /// (`sslmode=require`), so that no password crosses a network in the clear.
    pub fn parse(url: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<Target, TeamError> {
        crate::config::team_store::check_scheme(url)
            .map_err(|e| TeamError(format!("store.postgres: {e}")))?;
        let url =
            expand_text(url, lookup).map_err(|e| TeamError(format!("store.postgres: {e}")))?;
        let mut config: postgres::Config = url.parse().map_err(|e: postgres::Error| {
            TeamError(format!(
                "store.postgres is not a PostgreSQL URL mws can read: {}",
                pg_text(&e)
            ))
        })?;
        config.connect_timeout(CONNECT_TIMEOUT);
        config.application_name("mws");
        let hosts = config.get_hosts();
        if hosts.is_empty() {
            return Err(TeamError(
                "store.postgres names no host: write postgres://USER@127.0.0.1/DB, or \
                 ?host=/run/postgresql for a Unix socket"
                    .into(),
            ));
        }
        let tls = config.get_ssl_mode() == SslMode::Require;
        if !tls {
            for h in hosts {
                if let Host::Tcp(name) = h
                    && !is_loopback(name)
                {
                    return Err(TeamError(format!(
                        "store.postgres: {name} is not on this machine: add ?sslmode=require to \
                         the URL, so that mws speaks TLS to it and checks its certificate \
                         (store.caFile for a private CA), or reach it through a tunnel on \
                         loopback"
                    )));
                }
            }
            // On this machine: plain, never a TLS attempt that could fail on a local certificate.
            config.ssl_mode(SslMode::Disable);
        }
        let label = label(&config);
        Ok(Target {
            config,
            label,
            tls,
            ca_file: None,
        })
    }

    /// Also trusts the PEM certificates in `path` for the server's TLS certificate.
    pub fn with_ca_file(mut self, path: Option<PathBuf>) -> Target {
        self.ca_file = path;
        self
    }

    /// From the config (`store.postgres` or `MWS_DATABASE_URL`); `Ok(None)`: no team database.
    pub fn of(config: &Config) -> Result<Option<Target>, TeamError> {
        database_url(config)
            .map(|u| {
                Target::parse(&u, &|v| std::env::var(v).ok()).map(|t| {
                    let ca = config.store.ca_file.as_deref();
                    t.with_ca_file(ca.map(crate::config::expand_tilde))
                })
            })
            .transpose()
    }

    /// Connects and brings the schema up to date.
    pub fn connect(&self) -> Result<Client, TeamError> {
        let mut client = self.connect_only()?;
        migrate(&mut client, &self.label)?;
        Ok(client)
    }

    /// Connects without touching the schema (`mws doctor`).
    pub fn connect_only(&self) -> Result<Client, TeamError> {
        let connected = if self.tls {
            let tls = tokio_postgres_rustls::MakeRustlsConnect::new(self.tls_config()?);
            self.config.connect(tls)
        } else {
            self.config.connect(NoTls)
        };
        connected.map_err(|e| TeamError(connect_error(&self.config, &self.label, &e)))
    }

    /// The system's root certificates and `ca_file`'s.
    fn tls_config(&self) -> Result<rustls::ClientConfig, TeamError> {
        use rustls::pki_types::CertificateDer;
        use rustls::pki_types::pem::PemObject;
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
        if let Some(path) = &self.ca_file {
            let bad = |e: &dyn std::fmt::Display| {
                TeamError(format!("store.caFile {}: {e}", path.display()))
            };
            let certs = CertificateDer::pem_file_iter(path).map_err(|e| bad(&e))?;
            let mut any = false;
            for cert in certs {
                roots.add(cert.map_err(|e| bad(&e))?).map_err(|e| bad(&e))?;
                any = true;
            }
            if !any {
                return Err(bad(&"no PEM certificate in it"));
            }
        }
        Ok(rustls::ClientConfig::builder()
            .with_root_certificates(roots)
            .with_no_client_auth())
    }
}

fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    h == "localhost"
        || h.parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// `host:port/dbname`: what the database is called in messages and in the spool.
fn label(c: &postgres::Config) -> String {
    let host = match c.get_hosts().first() {
        Some(Host::Tcp(h)) => h.clone(),
        Some(Host::Unix(p)) => p.display().to_string(),
        None => String::new(),
    };
    let port = c.get_ports().first().copied().unwrap_or(5432);
    let user = c.get_user().unwrap_or("");
    let db = c.get_dbname().unwrap_or(user);
    format!("{host}:{port}/{db}")
}

/// A connection error in words, with what to do where mws knows.
fn connect_error(c: &postgres::Config, label: &str, e: &postgres::Error) -> String {
    let user = c.get_user().unwrap_or("(none)");
    if let Some(db) = e.as_db_error() {
        let code = db.code();
        let what = if *code == SqlState::INVALID_PASSWORD {
            format!(
                "password authentication failed for user {user:?}: check the password in \
                 store.postgres (or the ${{VAR}} it names)"
            )
        } else if *code == SqlState::INVALID_CATALOG_NAME {
            format!("{} (create it: createdb -O {user} ...)", db.message())
        } else if *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION {
            format!("{} (pg_hba.conf or the role)", db.message())
        } else {
            db.message().to_string()
        };
        return format!("team database {label}: {what}");
    }
    format!("cannot reach the team database {label}: {}", pg_text(e))
}

/// A PostgreSQL error in one line, with the server's own message where there is one.
pub fn pg_text(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        // Display names the kind only ("error connecting to server"); the cause is the source.
        None => {
            let mut text = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(s) = src {
                text = format!("{text}: {s}");
                src = s.source();
            }
            text
        }
    }
}

/// The schema version the database's mws tables are at; `None`: no mws tables yet.
pub fn schema_version(client: &mut Client) -> Result<Option<i64>, postgres::Error> {
    let has: bool = client
        .query_one(
            "SELECT to_regclass('refinery_schema_history') IS NOT NULL",
            &[],
        )?
        .get(0);
    if !has {
        return Ok(None);
    }
    client
        .query_one(
            "SELECT MAX(version)::BIGINT FROM refinery_schema_history",
            &[],
        )
        .map(|r| r.get(0))
}

/// Creates or upgrades the tables under an advisory lock; refuses a schema from a newer mws.
fn migrate(client: &mut Client, label: &str) -> Result<(), TeamError> {
    let fail = |e: &dyn std::fmt::Display| TeamError(format!("team database {label}: {e}"));
    client
        .execute("SELECT pg_advisory_lock($1)", &[&MIGRATION_LOCK])
        .map_err(|e| fail(&e))?;
    let result = (|| {
        let runner = embedded::migrations::runner();
        let known = runner
            .get_migrations()
            .iter()
            .map(|m| i64::from(m.version()))
            .max()
            .unwrap_or(0);
        if let Some(v) = schema_version(client)
            .map_err(|e| fail(&e))?
            .filter(|v| *v > known)
        {
            return Err(fail(&format!(
                "its tables are from a newer mws (schema version {v}; this mws knows up to \
                 {known}): upgrade mws on this machine"
            )));
        }
        runner.run(client).map(|_| ()).map_err(|e| {
            // refinery's own text is generic ("error asserting migrations table"): the
            // database's message is further down the chain.
            let mut text = e.to_string();
            let mut src = std::error::Error::source(&e);
            while let Some(s) = src {
                if let Some(pg) = s.downcast_ref::<postgres::Error>() {
                    text = pg_text(pg);
                    break;
                }
                src = s.source();
            }
            if text.contains("permission denied") {
                fail(&format!(
                    "mws may not create its tables there ({text}): as the database's owner, \
                     GRANT CREATE ON SCHEMA public TO the role in store.postgres"
                ))
            } else {
                fail(&format!("creating mws's tables failed: {text}"))
            }
        })
    })();
    let _ = client.execute("SELECT pg_advisory_unlock($1)", &[&MIGRATION_LOCK]);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> Result<Target, TeamError> {
        Target::parse(url, &|v| (v == "PW").then(|| "s3cret".to_string()))
    }

    #[test]
    fn urls_are_checked_and_never_echoed() {
        let t = parse("postgres://mws:${PW}@127.0.0.1:5433/team").unwrap();
        assert_eq!(t.label, "127.0.0.1:5433/team");
        assert_eq!(
            parse("postgresql://ada@localhost/").unwrap().label,
            "localhost:5432/ada"
        );
        let sock = parse("postgres://ada@%2Frun%2Fpostgresql/mws").unwrap();
        assert_eq!(sock.label, "/run/postgresql:5432/mws");
        let e = parse("mysql://x@127.0.0.1/db").unwrap_err().0;
        assert_eq!(
            e,
            "store.postgres: expected a postgres:// URL, found a mysql:// one"
        );
        let e = parse("postgres://mws:${NOPE}@127.0.0.1/db").unwrap_err().0;
        assert_eq!(e, "store.postgres: environment variable NOPE is not set");
        let e = parse("postgres://mws:hunter2@127.0.0.1:notaport/db")
            .unwrap_err()
            .0;
        assert!(
            e.starts_with("store.postgres is not a PostgreSQL URL"),
            "{e}"
        );
        assert!(!e.contains("hunter2"), "{e}");
        let e = parse("postgres://mws:hunter2@db.example.com/db")
            .unwrap_err()
            .0;
        assert!(e.contains("db.example.com is not on this machine"), "{e}");
        assert!(!e.contains("hunter2"), "{e}");
    }
}
