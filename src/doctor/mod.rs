//! `mws doctor`: checks config, state dir and database, upstream, transcript roots and the listen
//! port, each with a line saying how to fix a problem, plus how to register mws with clients.
//! Reads and probes only; never writes state (a broken database is reported, not repaired).

pub mod checks;
pub mod definitions;
pub mod port;
pub mod registration;
pub mod safety;
pub mod semantic;
pub mod servers;
pub mod team;
pub mod upstream;

use std::fmt::Write as _;
use std::path::Path;

use serde::Serialize;
use time::OffsetDateTime;

use crate::config::{self, Config};
use crate::term::Safe;

/// How a check came out. Only `Fail` makes `mws doctor` exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Warn,
    Fail,
}

impl Status {
    fn label(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        }
    }
}

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Check {
    /// `config`, `state dir`, `database`, `permissions`, `upstream` (or one `server` per server),
    /// `definitions` (only with held tools), `transcripts`, `search` (only with
    /// `search.semantic`), `team` (only with a team database), `port`, `registration` (only
    /// after `mws setup import --apply`).
    pub name: &'static str,
    pub status: Status,
    /// One line: what was found.
    pub summary: String,
    /// More lines worth reading (an error's text, what the fallback is).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<String>,
    /// What to do about it; set on every `warn` and `fail`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

impl Check {
    pub fn ok(name: &'static str, summary: impl Into<String>) -> Check {
        Check {
            name,
            status: Status::Ok,
            summary: summary.into(),
            details: Vec::new(),
            fix: None,
        }
    }
    pub fn warn(name: &'static str, summary: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            status: Status::Warn,
            fix: Some(fix.into()),
            ..Check::ok(name, summary)
        }
    }
    pub fn fail(name: &'static str, summary: impl Into<String>, fix: impl Into<String>) -> Check {
        Check {
            status: Status::Fail,
            fix: Some(fix.into()),
            ..Check::ok(name, summary)
        }
    }
    pub fn detail(mut self, line: impl Into<String>) -> Check {
        self.details.push(line.into());
        self
    }
    pub fn details(mut self, lines: Vec<String>) -> Check {
        self.details.extend(lines);
        self
    }
}

/// How to point clients at this proxy.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hints {
    pub url: String,
    pub claude_code: String,
    pub codex: String,
    pub notes: Vec<String>,
    /// The backup set of the `mws setup import --apply` that registered mws with the clients
    /// (not undone): the registration lines are then not printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registered_by: Option<std::path::PathBuf>,
}

/// Everything `mws doctor` found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diagnosis {
    pub ok: bool,
    pub checks: Vec<Check>,
    pub hints: Hints,
}

/// Runs every check for the config at `flag` (or the default lookup), at time `now`.
pub fn diagnose(flag: Option<&Path>, now: OffsetDateTime) -> Diagnosis {
    let (config_check, loaded) = checks::config(flag);
    let mut list = vec![config_check];
    let config = match &loaded {
        Some(l) => l.config.clone(),
        None => Config::default(),
    };
    let config_path = config::resolve_path(flag);
    if loaded.is_some() {
        list.extend(checks::listen_host(&config, &config_path));
        list.push(checks::state_dir(&config));
        list.push(checks::database(&config));
        list.extend(checks::permissions(&config));
        if config.servers.is_empty() {
            let c = upstream::check(&config, &config_path);
            list.push(servers::with_upstream_login(c, &config));
        } else {
            list.extend(servers::checks(&config, &config_path));
        }
        list.extend(definitions::check(&config));
        list.extend(checks::transcripts(&config, &config_path, now));
        list.extend(semantic::check(&config));
        list.extend(team::check(&config));
        list.push(port::check(&config, &config_path));
        list.extend(registration::check(&config, &config_path));
    } else {
        list.push(Check::warn(
            "other checks",
            "skipped: they need a valid config",
            "fix the config first, then run `mws doctor` again",
        ));
    }
    Diagnosis {
        ok: list.iter().all(|c| c.status != Status::Fail),
        hints: hints(&config),
        checks: list,
    }
}

/// The registration commands for this config's `serverName`, host and port.
pub fn hints(config: &Config) -> Hints {
    let host = if config.listen.host.contains(':') {
        format!("[{}]", config.listen.host)
    } else {
        config.listen.host.clone()
    };
    let url = format!("http://{host}:{}/mcp", config.listen.port);
    let name = &config.server_name;
    Hints {
        claude_code: format!("claude mcp add --transport http {name} {url}"),
        codex: format!("[mcp_servers.{name}]\nurl = \"{url}\""),
        notes: vec![
            format!(
                "Register mws under the name `{name}` (serverName in the config): ingest finds past \
                 calls in transcripts by the mcp__{name}__<tool> prefix."
            ),
            "Claude Code defers MCP tools behind its tool search by default; mws marks every tool \
             it lists with _meta {\"anthropic/alwaysLoad\": true} so the working set stays loaded. \
             Do not set \"alwaysLoad\": false for this server in Claude Code's config: that strips it."
                .into(),
            "Add `-s user` to the claude command to register mws for every project.".into(),
        ],
        url,
        registered_by: crate::setup::backup::latest(&config.state_dir),
    }
}

/// The diagnosis as text: one line per check, an indented `fix:` under each problem, then hints.
/// Paths, names and upstream answers in it are shown with terminal controls escaped.
pub fn text(d: &Diagnosis) -> String {
    let mut out = String::new();
    let width = d.checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in &d.checks {
        let _ = writeln!(
            out,
            "{:<4}  {:<width$}  {}",
            c.status.label(),
            c.name,
            Safe(&c.summary)
        );
        let pad = " ".repeat(width + 8);
        for line in &c.details {
            let _ = writeln!(out, "{pad}{}", Safe(line));
        }
        if let Some(fix) = &c.fix {
            let _ = writeln!(out, "{pad}fix: {}", Safe(fix));
        }
    }
    let h = &d.hints;
    if let Some(set) = &h.registered_by {
        let _ = writeln!(
            out,
            "\nmws is registered with your clients by `mws setup import --apply` (backups in \
             {}); `mws setup undo` takes it back.",
            Safe(&set.display().to_string())
        );
    } else {
        registration_lines(&mut out, h);
    }
    let fails = d.checks.iter().filter(|c| c.status == Status::Fail).count();
    let warns = d.checks.iter().filter(|c| c.status == Status::Warn).count();
    let _ = writeln!(
        out,
        "\n{}",
        match (fails, warns) {
            (0, 0) => "Everything looks fine.".to_string(),
            (0, w) => format!("No failures; {w} warning(s)."),
            (f, w) => format!("{f} check(s) failed, {w} warning(s): see the fix lines above."),
        }
    );
    out
}

/// How to register mws with each client, for a user who has not run `mws setup import --apply`.
fn registration_lines(out: &mut String, h: &Hints) {
    let _ = write!(
        out,
        "\nRegister mws with your clients ({}):\n  Claude Code:  {}\n  Codex (~/.codex/config.toml):\n",
        Safe(&h.url),
        Safe(&h.claude_code)
    );
    for line in h.codex.lines() {
        let _ = writeln!(out, "    {}", Safe(line));
    }
    for n in &h.notes {
        let _ = writeln!(out, "  {}", Safe(n));
    }
}
