//! `mws doctor` with `servers`: one check per server (era, tools, status, last error, the names
//! shortened to fit clients' limit and the warnings of its catalog), probed together through the
//! same fleet the proxy runs. Must not write anything.

use std::path::Path;

use super::Check;
use crate::config::Config;
use crate::probe;
use crate::upstream::ServerState;

/// Each server of `config.servers`, probed within `timeouts.listMs`.
pub fn checks(config: &Config, config_path: &Path) -> Vec<Check> {
    let cfg = config_path.display().to_string();
    match probe::for_command(config) {
        Ok(p) => p
            .status
            .servers
            .iter()
            .map(|s| with_login(check(s, &cfg), config, s))
            .collect(),
        Err(e) => vec![Check::fail(
            "server",
            format!("the servers could not be asked: {e}"),
            "run `MWS_LOG=debug mws doctor` to see why",
        )],
    }
}

/// The check with the server's login state (HTTP servers with tokens or an `oauth` entry), and
/// `mws login` as the fix when it needs one.
fn with_login(mut c: Check, config: &Config, s: &ServerState) -> Check {
    let Some(server) = config.servers.iter().find(|x| x.name == s.name) else {
        return c;
    };
    let crate::config::Upstream::Http(h) = &server.upstream else {
        return c;
    };
    let dir = crate::upstream::fleet::server_dir(config, &s.name);
    let url = crate::config::servers::expand(server, &|v| std::env::var(v).ok())
        .ok()
        .and_then(|u| match u {
            crate::config::Upstream::Http(h) => Some(h.url),
            crate::config::Upstream::Stdio(_) => None,
        })
        .unwrap_or_else(|| h.url.clone());
    let tokens = crate::auth::store::load(&dir, &url);
    let now = crate::clock::now().unix_timestamp();
    if let Some(line) = login_state(tokens.as_ref(), h.oauth.is_some(), now) {
        c = c.detail(line);
    }
    if s.status.needs_login {
        c = refused(c, tokens.is_some() || has_authorization(h), &s.name);
    }
    c
}

/// Whether the entry sends its own `Authorization` header.
pub(super) fn has_authorization(h: &crate::config::HttpUpstream) -> bool {
    h.headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"))
}

/// A server that answered 401 or 403 did answer: it "refuses the token" (one was sent) or "needs
/// a login" (none was) rather than being "not reachable", and the fix is `mws login <name>`.
pub fn refused(mut c: Check, token_sent: bool, name: &str) -> Check {
    if let Some(head) = c.summary.strip_suffix(": not reachable") {
        let what = if token_sent {
            "refuses the token"
        } else {
            "needs a login"
        };
        c.summary = format!("{head}: {what}");
    }
    c.fix = Some(format!("run `mws login {name}`"));
    c
}

/// The single upstream's check with its login state (`mws login upstream`).
pub fn with_upstream_login(mut c: Check, config: &Config) -> Check {
    let crate::config::Upstream::Http(h) = &config.upstream else {
        return c;
    };
    let tokens = crate::auth::store::load(&config.state_dir, &h.url);
    let now = crate::clock::now().unix_timestamp();
    if let Some(line) = login_state(tokens.as_ref(), h.oauth.is_some(), now) {
        c = c.detail(line);
    }
    c
}

/// A line on a server's login: logged in (and until when), or not.
pub fn login_state(
    t: Option<&crate::auth::store::Tokens>,
    oauth: bool,
    now: i64,
) -> Option<String> {
    let Some(t) = t else {
        return oauth.then(|| "not logged in (run `mws login` with its name)".to_string());
    };
    let scope = t
        .scope
        .as_deref()
        .map(|s| format!(", scopes {s}"))
        .unwrap_or_default();
    let until = match t.expires_at {
        None => "its token does not say when it expires".to_string(),
        Some(at) if at <= now && t.refresh_token.is_none() => {
            "its token has expired and cannot be refreshed: log in again".to_string()
        }
        Some(at) => {
            let when = time::OffsetDateTime::from_unix_timestamp(at)
                .map(crate::clock::fmt)
                .unwrap_or_default();
            let past = if at <= now { "expired" } else { "expires" };
            let refresh = if t.refresh_token.is_some() && t.refresh_refused.is_none() {
                " (refreshed as needed)"
            } else {
                ""
            };
            format!("its token {past} {when}{refresh}")
        }
    };
    let mut line = format!("logged in with OAuth{scope}; {until}");
    if t.refresh_refused.is_some() {
        line.push_str("; its refresh token was refused: log in again");
    }
    if let Some(d) = &t.demanded_scope {
        line.push_str(&format!(
            "; it asked for more scope ({d}): log in again (the login asks for it)"
        ));
    }
    Some(line)
}

/// One server's check.
pub fn check(s: &ServerState, cfg: &str) -> Check {
    let head = format!("{} ({})", s.name, s.target);
    let fix_entry = format!("fix \"servers\".\"{}\" in {cfg}", s.name);
    let mut c = if let Some(why) = &s.start_error {
        Check::fail("server", format!("{head}: not started"), fix_entry).detail(why.clone())
    } else if let Some(e) = &s.status.list_error {
        Check::fail(
            "server",
            format!("{head}: answers, but its tool list cannot be used"),
            "fix the server's tools/list answer",
        )
        .detail(e.clone())
    } else if s.status.reachable {
        let era = s.status.era.map(|e| e.as_str()).unwrap_or("era unknown");
        Check::ok(
            "server",
            format!("{head}: reachable, {era}, {} tools", s.tools),
        )
    } else {
        let http = s.target.starts_with("http://") || s.target.starts_with("https://");
        let fix = if http {
            format!(
                "start the server so that it answers at {}, or {fix_entry}",
                s.target
            )
        } else {
            format!("start it, or {fix_entry} (run its command in a shell to see why)")
        };
        let mut c = Check::fail("server", format!("{head}: not reachable"), fix);
        if let Some(e) = &s.status.last_error {
            c = c.detail(e.clone());
        }
        c
    };
    if c.status == super::Status::Fail {
        c = c.detail(match s.tools {
            0 => "no stored catalog: none of its tools are listed until it answers".to_string(),
            n => format!("meanwhile its {n} tools are listed from its stored catalog"),
        });
    }
    for (exposed, full) in &s.shortened {
        c = c.detail(format!(
            "{full} is exposed as {exposed} (clients accept tool names of at most 64 characters, \
             their mcp__<serverName>__ prefix included)"
        ));
    }
    if !s.warnings.is_empty() && c.status == super::Status::Ok {
        c.status = super::Status::Warn;
        c.fix = Some("fix these tool definitions in the server".into());
    }
    for w in &s.warnings {
        c = c.detail(w.clone());
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upstream::UpstreamStatus;

    #[test]
    fn a_server_per_state() {
        let up = ServerState {
            name: "github".into(),
            target: "https://h/mcp".into(),
            status: UpstreamStatus {
                reachable: true,
                era: Some(crate::mcp::Era::Modern),
                ..UpstreamStatus::default()
            },
            tools: 3,
            shortened: vec![("github__a_b12".into(), "github__a_very_long".into())],
            ..ServerState::default()
        };
        let c = check(&up, "c.json");
        assert_eq!(c.status, super::super::Status::Ok);
        assert_eq!(
            c.summary,
            "github (https://h/mcp): reachable, 2026-07-28 (stateless), 3 tools"
        );
        assert!(c.details[0].starts_with("github__a_very_long is exposed as github__a_b12"));
        let down = ServerState {
            name: "gh".into(),
            target: "https://h/mcp".into(),
            ..ServerState::default()
        };
        assert_eq!(
            check(&down, "c.json").fix.as_deref(),
            Some(
                "start the server so that it answers at https://h/mcp, or fix \"servers\".\"gh\" in c.json"
            )
        );
        let stopped = ServerState {
            name: "db".into(),
            target: "node x".into(),
            start_error: Some("environment variable DB is not set (in `env.DB`)".into()),
            tools: 2,
            ..ServerState::default()
        };
        let c = check(&stopped, "c.json");
        assert_eq!(c.status, super::super::Status::Fail);
        assert_eq!(c.summary, "db (node x): not started");
        assert_eq!(
            c.details,
            [
                "environment variable DB is not set (in `env.DB`)",
                "meanwhile its 2 tools are listed from its stored catalog"
            ]
        );
        assert_eq!(c.fix.as_deref(), Some("fix \"servers\".\"db\" in c.json"));
    }

    #[test]
    fn login_states() {
        let t = crate::auth::store::Tokens {
            resource: "https://h/mcp".into(),
            issuer: "https://as".into(),
            token_endpoint: "https://as/token".into(),
            client: crate::auth::register::Client {
                client_id: "c".into(),
                client_secret: None,
                auth_method: "none".into(),
            },
            access_token: "a".into(),
            refresh_token: None,
            expires_at: Some(100),
            scope: Some("read".into()),
            issued_at: None,
            demanded_scope: None,
            refresh_refused: None,
        };
        assert_eq!(login_state(None, false, 0), None);
        assert_eq!(
            login_state(None, true, 0).as_deref(),
            Some("not logged in (run `mws login` with its name)")
        );
        let line = login_state(Some(&t), true, 0).unwrap();
        assert!(
            line.starts_with("logged in with OAuth, scopes read; its token expires 1970-01-01"),
            "{line}"
        );
        assert_eq!(
            login_state(Some(&t), true, 200).as_deref(),
            Some(
                "logged in with OAuth, scopes read; its token has expired and cannot be refreshed: log in again"
            )
        );
        let marked = crate::auth::store::Tokens {
            refresh_token: Some("r".into()),
            refresh_refused: Some("invalid_grant".into()),
            demanded_scope: Some("write".into()),
            ..t
        };
        let line = login_state(Some(&marked), true, 200).unwrap();
        assert!(
            line.ends_with(
                "its token expired 1970-01-01T00:01:40.000Z; its refresh token was refused: log \
                 in again; it asked for more scope (write): log in again (the login asks for it)"
            ),
            "{line}"
        );
    }
}
