//! The `servers` field: a map of name → server, in the shape clients use for `mcpServers` (`url` +
//! `headers`, or `command` + `args` + `env` + `cwd`), read in file order with duplicate names and
//! names unusable in a tool name refused; and `${VAR}` expansion of one server when it starts,
//! with the refusal of a secret sent over plain http off loopback. Must not do I/O beyond reading
//! the environment, and must not print a header value, an env value or an expanded URL.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, Visitor};

use super::checked::{DEFAULT_SEP, Object, check_url};
use super::{HttpUpstream, StdioUpstream, Upstream};

/// Longest server name. Every exposed tool name starts with `<server>__`, and a client adds
/// `mcp__<serverName>__` before that within its 64-character limit; raising it leaves less room
/// for the tool's own name.
pub const MAX_SERVER_NAME: usize = 24;

/// One entry of `servers`.
#[derive(Debug, Clone, PartialEq)]
pub struct Server {
    pub name: String,
    /// As written: `${VAR}` not expanded yet (`expand` does it when the server starts).
    pub upstream: Upstream,
    /// Headers may go over plain `http://` to a host that is not loopback.
    pub allow_insecure_http: bool,
    /// This server was the single `upstream` before: history stored without a server prefix is
    /// renamed to its `<server>__<tool>` names (`store::adopt`), and so are unprefixed `pins`.
    pub adopts_upstream_history: bool,
    /// Other names the same server had in a client (`mws setup import --apply` writes them): a
    /// direct call under one of them, before mws, counts as this server's (`ingest::names`).
    pub aliases: Vec<String>,
    /// What the server is for, in the user's words: search ranks its tools higher for a request
    /// that says so (docs/search.md, "Servers' purpose").
    pub description: Option<String>,
}

/// A server entry as written: both shapes in one, so an unknown field gets a did-you-mean over all
/// of them. The URL is checked after `${VAR}` expansion (a variable may hold the host).
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawServer {
    url: Option<String>,
    #[serde(default, deserialize_with = "super::checked::headers")]
    headers: Option<BTreeMap<String, String>>,
    allow_insecure_http: Option<bool>,
    #[serde(default)]
    adopts_upstream_history: bool,
    #[serde(default)]
    aliases: Vec<String>,
    description: Option<String>,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<PathBuf>,
    oauth: Option<crate::auth::OAuthConfig>,
    /// Written by some clients' configs (`"type": "stdio"`/`"http"`); checked against the shape.
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// Reads `servers`: an object of name → entry, in file order.
pub fn servers<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Server>, D::Error> {
    d.deserialize_map(ServersVisitor)
}

struct ServersVisitor;

impl<'de> Visitor<'de> for ServersVisitor {
    type Value = Vec<Server>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of server name to server")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<Server>, A::Error> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        while let Some(name) = map.next_key::<String>()? {
            if let Err(why) = check_name(&name) {
                return Err(de::Error::custom(why));
            }
            if !seen.insert(name.clone()) {
                return Err(de::Error::custom(format!(
                    "server name \"{name}\" appears twice; each server needs its own name"
                )));
            }
            let raw: Object<RawServer> = map.next_value()?;
            let server = shape(&name, raw.0).map_err(de::Error::custom)?;
            if server.adopts_upstream_history
                && let Some(other) = out.iter().find(|s: &&Server| s.adopts_upstream_history)
            {
                return Err(de::Error::custom(format!(
                    "`adoptsUpstreamHistory` is set on both \"{}\" and \"{name}\"; only the \
                     server that was `upstream` takes over its history",
                    other.name
                )));
            }
            out.push(server);
        }
        if out.is_empty() {
            return Err(de::Error::custom(
                "expected at least one server (or leave `servers` out and use `upstream`)",
            ));
        }
        Ok(out)
    }
}

/// `pins` without a configured server's prefix, prefixed with the server that adopts the
/// former upstream's history (if one does).
pub fn prefix_pins(pins: &mut [String], servers: &[Server]) {
    let Some(heir) = servers.iter().find(|s| s.adopts_upstream_history) else {
        return;
    };
    for p in pins {
        let known = servers.iter().any(|s| {
            p.strip_prefix(s.name.as_str())
                .is_some_and(|r| r.starts_with("__"))
        });
        if !known {
            *p = format!("{}__{p}", heir.name);
        }
    }
}

/// Refuses a config that sets both `upstream` and `servers` (`plain`: the config as JSON).
pub fn one_of(plain: &str) -> Result<(), super::Problem> {
    #[derive(Deserialize)]
    struct Present {
        upstream: Option<de::IgnoredAny>,
        servers: Option<de::IgnoredAny>,
    }
    let Ok(p) = serde_json::from_str::<Present>(plain) else {
        return Ok(());
    };
    if p.upstream.is_some() && p.servers.is_some() {
        return Err(super::Problem {
            line: 0,
            column: 0,
            message: "set either `upstream` (one server, tool names as it names them) or \
                      `servers` (several, tool names `<server>__<tool>`), not both"
                .into(),
        });
    }
    Ok(())
}

/// A server name usable in `<server>__<tool>`: 1 to `MAX_SERVER_NAME` of `A-Z a-z 0-9 _ -`,
/// starting with a letter or digit, without `__` (which separates server and tool).
pub fn check_name(name: &str) -> Result<(), String> {
    let rule = format!(
        "a server name is 1 to {MAX_SERVER_NAME} of A-Z a-z 0-9 _ -, starts with a letter or \
         digit and has no \"__\" (it becomes the tool name prefix <server>__)"
    );
    let ok_chars = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
    let ok = !name.is_empty()
        && name.len() <= MAX_SERVER_NAME
        && ok_chars
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && !name.ends_with('_')
        && !name.contains("__");
    if ok {
        Ok(())
    } else {
        Err(format!("server name {name:?} cannot be used: {rule}"))
    }
}

fn shape(name: &str, r: RawServer) -> Result<Server, String> {
    let at = format!("server \"{name}\"");
    let upstream = match (r.url, r.command) {
        (Some(_), Some(_)) => {
            return Err(format!(
                "{at}: set either `url` (Streamable HTTP) or `command` (a stdio child), not both"
            ));
        }
        (None, None) => {
            return Err(format!(
                "{at}: expected `url` (Streamable HTTP) or `command` (a stdio child)"
            ));
        }
        (Some(url), None) => {
            for (f, set) in [
                ("args", r.args.is_some()),
                ("env", r.env.is_some()),
                ("cwd", r.cwd.is_some()),
            ] {
                if set {
                    return Err(format!(
                        "{at}: `{f}` belongs to a stdio server (`command`), not to `url`"
                    ));
                }
            }
            if matches!(r.kind.as_deref(), Some("stdio")) {
                return Err(format!(
                    "{at}: `type` is \"stdio\" but the server has a `url`"
                ));
            }
            if !url.contains("${") {
                check_url(&url).map_err(|e| format!("{at}: `url`: {e}"))?;
            }
            Upstream::Http(HttpUpstream {
                url,
                headers: r.headers.unwrap_or_default(),
                oauth: r.oauth,
            })
        }
        (None, Some(command)) => {
            if r.headers.is_some() || r.allow_insecure_http.is_some() || r.oauth.is_some() {
                let f = if r.headers.is_some() {
                    "headers"
                } else if r.oauth.is_some() {
                    "oauth"
                } else {
                    "allowInsecureHttp"
                };
                return Err(format!(
                    "{at}: `{f}` belongs to an HTTP server (`url`), not to `command`"
                ));
            }
            if matches!(r.kind.as_deref(), Some("http" | "streamable-http" | "sse")) {
                return Err(format!(
                    "{at}: `type` says HTTP but the server has a `command`"
                ));
            }
            if command.trim().is_empty() {
                return Err(format!("{at}: `command` is empty"));
            }
            Upstream::Stdio(StdioUpstream {
                command,
                args: r.args.unwrap_or_default(),
                env: r.env.unwrap_or_default(),
                cwd: r.cwd,
            })
        }
    };
    if let Some(k) = r.kind.as_deref()
        && !matches!(k, "stdio" | "http" | "streamable-http" | "sse")
    {
        return Err(format!(
            "{at}: `type` \"{k}\" is not one of \"stdio\", \"http\", \"streamable-http\", \"sse\""
        ));
    }
    Ok(Server {
        name: name.to_string(),
        upstream,
        allow_insecure_http: r.allow_insecure_http.unwrap_or(false),
        adopts_upstream_history: r.adopts_upstream_history,
        aliases: r.aliases,
        description: match r.description {
            Some(d) => Some(check_description(&d).map_err(|e| format!("{at}: {e}"))?),
            None => None,
        },
    })
}

/// Longest server `description`, in characters.
pub const MAX_DESCRIPTION: usize = 500;

/// A server's `description`: at most `MAX_DESCRIPTION` characters, no control characters.
fn check_description(d: &str) -> Result<String, String> {
    if d.chars().count() > MAX_DESCRIPTION {
        return Err(format!(
            "`description` is {} characters long; the most is {MAX_DESCRIPTION}",
            d.chars().count()
        ));
    }
    if d.chars().any(char::is_control) {
        return Err("`description` holds a control character (a newline, a tab…)".into());
    }
    Ok(d.to_string())
}

/// Why a server could not start from its config: an unset variable, a bad URL after expansion,
/// a secret that would cross a network in clear.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("server \"{server}\": {message}")]
pub struct StartError {
    pub server: String,
    pub message: String,
}

/// The server's upstream with `${VAR}` expanded in `url`, `headers`, `command`, `args` and `env` values
/// (`lookup` reads a variable), checked: a URL that is http(s) with a host, and no headers over
/// plain `http://` to a host that is not loopback unless `allowInsecureHttp`.
pub fn expand(
    server: &Server,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<Upstream, StartError> {
    let fail = |message: String| StartError {
        server: server.name.clone(),
        message,
    };
    let sub = |field: &str, v: &str| {
        expand_text(v, lookup).map_err(|e| fail(format!("{e} (in `{field}`)")))
    };
    match &server.upstream {
        Upstream::Http(h) => {
            let url = sub("url", &h.url)?;
            let parsed = check_url(&url).map_err(|e| fail(format!("`url`: {e}")))?;
            let mut headers = BTreeMap::new();
            for (k, v) in &h.headers {
                headers.insert(k.clone(), sub(&format!("headers.{k}"), v)?);
            }
            if !headers.is_empty() && !server.allow_insecure_http {
                insecure_headers(&parsed, Some("this server")).map_err(fail)?;
            }
            let mut oauth = h.oauth.clone();
            if let Some(o) = oauth.as_mut()
                && let Some(secret) = &o.client_secret
            {
                o.client_secret = Some(sub("oauth.clientSecret", secret)?);
            }
            Ok(Upstream::Http(HttpUpstream {
                url,
                headers,
                oauth,
            }))
        }
        Upstream::Stdio(s) => {
            let mut args = Vec::with_capacity(s.args.len());
            for (i, a) in s.args.iter().enumerate() {
                args.push(sub(&format!("args[{i}]"), a)?);
            }
            let mut env = BTreeMap::new();
            for (k, v) in &s.env {
                env.insert(k.clone(), sub(&format!("env.{k}"), v)?);
            }
            Ok(Upstream::Stdio(StdioUpstream {
                command: sub("command", &s.command)?,
                args,
                env,
                cwd: s.cwd.as_ref().map(|c| super::expand_tilde(c)),
            }))
        }
    }
}

/// Refuses configured headers over plain `http://` to a host that is not loopback (a bearer token
/// must not cross a network in clear). `whose` names where `allowInsecureHttp` goes, when the
/// setting has one.
pub fn insecure_headers(url: &reqwest::Url, whose: Option<&str>) -> Result<(), String> {
    if url.scheme() == "http" && !super::is_loopback(url.host_str().unwrap_or("")) {
        let or = whose.map_or(String::new(), |w| {
            format!(", or set \"allowInsecureHttp\": true on {w} if the network is trusted")
        });
        return Err(format!(
            "refusing to send `headers` over plain http:// to a host that is not loopback (a \
             token would cross the network in clear); use https://{or}"
        ));
    }
    Ok(())
}

/// `text` with every `${NAME}` replaced by the variable's value, and every `${NAME:-default}` by
/// the value or, when the variable is unset or empty, by `default` (as in the shell; the default
/// ends at the first `}`, so it cannot hold one). `$` not followed by `{` stays.
pub fn expand_text(text: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed ${{: write ${{NAME}} or {DEFAULT_FORM}"));
        };
        let (var, default) = match after[..end].split_once(DEFAULT_SEP) {
            Some((var, default)) => (var, Some(default)),
            None => (&after[..end], None),
        };
        if var.is_empty() {
            return Err(format!("empty ${{}}: write ${{NAME}} or {DEFAULT_FORM}"));
        }
        if default.is_some_and(|d| d.contains("${")) {
            return Err(format!(
                "the default of ${{{var}:-...}} holds ${{: {DEFAULT_FORM} ends at the first }}"
            ));
        }
        match (lookup(var), default) {
            (Some(v), Some(d)) if v.is_empty() => out.push_str(d),
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => return Err(format!("environment variable {var} is not set")),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// How a default is written, for messages.
const DEFAULT_FORM: &str = "${NAME:-default} (a default cannot hold })";

#[cfg(test)]
#[path = "servers_tests.rs"]
mod tests;
