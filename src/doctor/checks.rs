//! The checks of `mws doctor` that look at files: config, listen host, state dir, database,
//! permissions, transcript roots (the upstream's is `upstream.rs`). Each returns a `Check` whose problems
//! carry a fix line. Must not write anything.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use time::OffsetDateTime;

use super::Check;
use crate::clock;
use crate::config::{self, Config, ConfigError, Loaded, TranscriptKind};
use crate::store::doctor::{inspect, latest_schema_version};

/// The config file: found, valid, and which way it was found.
pub fn config(flag: Option<&Path>) -> (Check, Option<Loaded>) {
    let path = config::resolve_path(flag);
    let how = if flag.is_some() {
        "from --config"
    } else if std::env::var_os("MWS_CONFIG").is_some_and(|v| !v.is_empty()) {
        "from $MWS_CONFIG"
    } else {
        "the default location"
    };
    let p = path.display();
    match config::load(flag) {
        Ok(l) if l.found => (Check::ok("config", format!("{p} ({how}): valid")), Some(l)),
        Ok(l) => (
            Check::warn(
                "config",
                format!("no config file at {p} ({how}): using the defaults"),
                format!(
                    "run `mws init` to write a commented config at {p}, then set \"upstream\" in it"
                ),
            ),
            Some(l),
        ),
        Err(ConfigError::At {
            line,
            column,
            message,
            ..
        }) => (
            Check::fail(
                "config",
                format!("{p}:{line}:{column}: not valid: {message}"),
                fix_in_place(&path),
            ),
            None,
        ),
        Err(ConfigError::Invalid { message, .. }) => (
            Check::fail(
                "config",
                format!("{p} is not valid: {message}"),
                fix_in_place(&path),
            ),
            None,
        ),
        Err(ConfigError::Read { source, .. }) => (
            Check::fail(
                "config",
                format!("cannot read {p}: {source}"),
                format!("check the file and its permissions (`ls -l {p}`), or pass --config PATH"),
            ),
            None,
        ),
    }
}

/// The fix line of a config that does not load: edit it in place; `mws init --force` is offered
/// only when it would not drop servers the config holds (`mws setup import --apply` writes them
/// there; `mws setup undo`, which needs no loadable config, takes such an import back).
fn fix_in_place(path: &Path) -> String {
    let p = path.display();
    let holds_servers = std::fs::read_to_string(path).is_ok_and(|t| t.contains("\"servers\""));
    if holds_servers {
        format!(
            "edit {p} where the message points (not `mws init --force`: it would drop the \
             config's `servers`; `mws setup undo` takes back a `mws setup import --apply`)"
        )
    } else {
        format!(
            "edit {p} where the message points (`mws init --force` rewrites it with the defaults)"
        )
    }
}

/// A non-loopback `listen.host` is refused by `mws serve`.
pub fn listen_host(config: &Config, config_path: &Path) -> Option<Check> {
    let host = config.listen.host.as_str();
    let loopback = host == "localhost"
        || host
            .trim_matches(|c| c == '[' || c == ']')
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    (!loopback).then(|| {
        Check::fail(
            "listen",
            format!("listen.host {host:?} is not a loopback address: `mws serve` refuses it"),
            format!(
                "set \"listen\": {{\"host\": \"127.0.0.1\"}} in {}",
                config_path.display()
            ),
        )
    })
}

fn mode(path: &Path) -> Option<u32> {
    std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o777)
}

/// The state dir exists, is a directory and is private.
pub fn state_dir(config: &Config) -> Check {
    let dir = &config.state_dir;
    let d = dir.display();
    match std::fs::metadata(dir) {
        Err(_) => Check::warn(
            "state dir",
            format!("{d} does not exist yet"),
            "run `mws init` (it creates the state dir and the database)",
        ),
        Ok(m) if !m.is_dir() => Check::fail(
            "state dir",
            format!("{d} is not a directory"),
            format!("move {d} away, or set \"stateDir\" in the config to a directory"),
        ),
        Ok(m) if m.permissions().mode() & 0o077 != 0 => Check::warn(
            "state dir",
            format!(
                "{d} is open to other users (mode {:o})",
                m.permissions().mode() & 0o777
            ),
            format!("chmod 700 {d}"),
        ),
        Ok(_) => Check::ok("state dir", format!("{d}")),
    }
}

/// `state.db`: a SQLite file that passes its integrity check, at this build's schema version.
pub fn database(config: &Config) -> Check {
    let path = config.db_path();
    let p = path.display();
    let fresh = format!(
        "move it aside and start a fresh one: `mv {p} {p}.broken && mws init` (the call history in it \
         is lost; `sqlite3 {p}.broken .recover` may save some of it)"
    );
    let size = match std::fs::metadata(&path) {
        Err(_) => {
            return Check::warn(
                "database",
                format!("no database yet at {p}"),
                "run `mws init`, or start `mws serve`: either creates it",
            );
        }
        Ok(m) => m.len(),
    };
    let health = match inspect(&path) {
        Ok(h) => h,
        Err(e) => {
            return Check::fail(
                "database",
                format!("{p} is not a readable SQLite database: {e}"),
                fresh,
            );
        }
    };
    // SQLite read it (through the WAL), but the header overwritten on disk may be hidden there.
    if let Ok(Some(problem)) = crate::store::health::file_header_problem(&path) {
        return Check::fail(
            "database",
            format!("{p} is corrupt: {problem}"),
            format!("stop mws, then {fresh}"),
        );
    }
    if health.integrity != ["ok"] {
        let mut c = Check::fail(
            "database",
            format!("{p} failed its integrity check"),
            format!("stop mws, then {fresh}"),
        );
        for line in health.integrity.iter().take(5) {
            c = c.detail(line.clone());
        }
        return c;
    }
    let latest = latest_schema_version();
    match health.schema_version {
        None if size == 0 => Check::warn(
            "database",
            format!("{p} is empty"),
            "run `mws init`: it creates the schema",
        ),
        None => Check::fail(
            "database",
            format!("{p} is a SQLite file without the mws schema"),
            format!(
                "\"stateDir\" may point at another program's files: set it to a directory of its own, \
                 or {fresh}"
            ),
        ),
        Some(v) if v < latest => Check::warn(
            "database",
            format!("{p}: schema version {v}, this mws uses {latest}"),
            "run `mws init` (or any command that opens the database): it upgrades the schema",
        ),
        Some(v) if v > latest => Check::fail(
            "database",
            format!("{p}: schema version {v} is newer than this mws knows ({latest})"),
            "upgrade mws: a newer version wrote this database",
        ),
        Some(v) => Check::ok("database", format!("{p}: integrity ok, schema version {v}")),
    }
}

/// State files must be 0600: they say which tools this user calls and when, and the token files
/// (`oauth.json`, the single upstream's and each server's) hold OAuth tokens and client secrets.
pub fn permissions(config: &Config) -> Option<Check> {
    let db = config.db_path();
    let mut files: Vec<PathBuf> = vec![
        db.clone(),
        PathBuf::from(format!("{}-wal", db.display())),
        PathBuf::from(format!("{}-shm", db.display())),
        config.catalog_path(),
        config.working_set_path(),
        crate::auth::store::path(&config.state_dir),
    ];
    files.extend(
        config.servers.iter().map(|s| {
            crate::auth::store::path(&crate::upstream::fleet::server_dir(config, &s.name))
        }),
    );
    let present: Vec<(PathBuf, u32)> = files
        .into_iter()
        .filter_map(|f| mode(&f).map(|m| (f, m)))
        .collect();
    if present.is_empty() {
        return None;
    }
    let open: Vec<&(PathBuf, u32)> = present.iter().filter(|(_, m)| m & 0o077 != 0).collect();
    if open.is_empty() {
        return Some(Check::ok(
            "permissions",
            format!("{} state file(s), all 0600", present.len()),
        ));
    }
    let names: Vec<String> = open.iter().map(|(f, _)| f.display().to_string()).collect();
    let mut c = Check::fail(
        "permissions",
        format!("{} state file(s) readable by other users", open.len()),
        format!("chmod 600 {}", names.join(" ")),
    );
    for (f, m) in open {
        c = c.detail(format!("{} has mode {m:o}", f.display()));
    }
    Some(c)
}

/// Each transcript root: found, how many transcripts, the newest.
pub fn transcripts(config: &Config, config_path: &Path, now: OffsetDateTime) -> Vec<Check> {
    let cfg = config_path.display();
    if config.transcripts.is_empty() {
        return vec![Check::warn(
            "transcripts",
            "no transcript roots configured: promotion learns only from calls through the proxy",
            format!(
                "add {{\"type\": \"claude-code\", \"root\": \"~/.claude/projects\"}} to \"transcripts\" in {cfg}"
            ),
        )];
    }
    config
        .transcripts
        .iter()
        .map(|t| {
            let kind = t.kind.as_str();
            let root = t.root.display();
            let client = match t.kind {
                TranscriptKind::ClaudeCode => "Claude Code",
                TranscriptKind::Codex => "Codex",
            };
            if !t.root.is_dir() {
                return Check::warn(
                    "transcripts",
                    format!("{kind}: {root} not found"),
                    format!(
                        "if you use {client}, set this root in \"transcripts\" in {cfg} to where its \
                         transcripts are; if not, remove the entry"
                    ),
                );
            }
            let (files, newest, errors) = scan(&t.root, t.kind);
            if files == 0 {
                return Check::warn(
                    "transcripts",
                    format!("{kind}: {root} has no transcripts yet"),
                    format!("nothing to do if you have not used {client} with mws yet"),
                );
            }
            let when = newest
                .map(|t| {
                    let t = OffsetDateTime::from(t);
                    format!(", newest {}{}", &clock::fmt(t)[..16].replace('T', " "), age(now - t))
                })
                .unwrap_or_default();
            let c = Check::ok(
                "transcripts",
                format!("{kind}: {root}: {files} file(s){when}"),
            );
            if errors > 0 {
                c.detail(format!("{errors} entries could not be read"))
            } else {
                c
            }
        })
        .collect()
}

fn age(d: time::Duration) -> String {
    if d.whole_days() >= 1 {
        format!(" ({}d ago)", d.whole_days())
    } else if d.whole_hours() >= 1 {
        format!(" ({}h ago)", d.whole_hours())
    } else {
        " (within the hour)".into()
    }
}

/// Counts the transcript files of an adapter under `root` and finds the newest mtime.
fn scan(root: &Path, kind: TranscriptKind) -> (u64, Option<SystemTime>, u64) {
    let mut files = 0;
    let mut newest: Option<SystemTime> = None;
    let mut errors = 0;
    for entry in walkdir::WalkDir::new(root) {
        let Ok(e) = entry else {
            errors += 1;
            continue;
        };
        let name = e.file_name().to_string_lossy();
        let wanted = e.file_type().is_file()
            && name.ends_with(".jsonl")
            && (kind == TranscriptKind::ClaudeCode || name.starts_with("rollout-"));
        if wanted {
            files += 1;
            if let Some(m) = e.metadata().ok().and_then(|m| m.modified().ok()) {
                newest = newest.max(Some(m));
            }
        }
    }
    (files, newest, errors)
}
