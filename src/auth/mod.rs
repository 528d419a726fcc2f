//! mws as an OAuth 2.1 client of a remote MCP server (the MCP authorization spec, both eras):
//! discovery (`discover.rs`), client registration (`register.rs`), the authorization-code flow
//! with PKCE and its loopback redirect (`flow.rs`, `loopback.rs`), token requests (`token.rs`),
//! the token file (`store.rs`) and its refresh and marks (`refresh.rs`). Must not log or print a token, a code or a client secret, and
//! must not send a token to any URL but the server it was issued for.

pub mod discover;
#[cfg(test)]
#[cfg(test)]
pub mod fake_as;
#[cfg(test)]
mod finish_tests;
pub mod flow;
pub mod loopback;
pub mod refresh;
pub mod register;
pub mod store;
pub mod token;

use serde::Deserialize;

/// Environment variable that makes a login follow the authorization endpoint's redirect itself
/// instead of opening a browser: for an authorization server that approves at once (test
/// fixtures, the conformance driver). Never set it for a real server.
pub const HEADLESS_ENV: &str = "MWS_OAUTH_HEADLESS";

/// `oauth` of a server entry (docs/configuration.md#oauth): a pre-registered client, the scopes to
/// ask for, a client ID metadata document URL, or a fixed loopback redirect URI.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OAuthConfig {
    /// A client id registered with the authorization server by hand (skips dynamic registration).
    pub client_id: Option<String>,
    /// Its secret, if it has one (`${VAR}` expanded from the environment).
    pub client_secret: Option<String>,
    /// Scopes to ask for instead of the ones the server suggests.
    pub scopes: Option<Vec<String>>,
    /// An HTTPS URL where mws's client ID metadata document is published; used as the client id
    /// when the authorization server supports such documents.
    pub client_metadata_url: Option<String>,
    /// The loopback redirect URI registered for a pre-registered client (`http://127.0.0.1:PORT/
    /// path`), checked by `loopback::check_redirect_uri` when read; unset: a random port.
    #[serde(default, deserialize_with = "redirect_uri")]
    pub redirect_uri: Option<String>,
}

fn redirect_uri<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let s = String::deserialize(d)?;
    loopback::check_redirect_uri(&s).map_err(serde::de::Error::custom)?;
    Ok(Some(s))
}

/// Why a login or a token request failed; shown after the server's name.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum AuthError {
    #[error("{0}")]
    Metadata(String),
    #[error("registration refused: {0}")]
    Registration(String),
    #[error("the authorization redirect {0}")]
    Redirect(String),
    /// No redirect came back: the browser was closed, or the authorization server showed an error
    /// page (a refused redirect URI never comes back); the second field names the redirect URI
    /// and its setting (`loopback::hint`).
    #[error(
        "no redirect arrived within {0}s: the browser was closed, or the authorization server \
         refused the redirect URI and showed an error instead ({1}); run `mws login` again"
    )]
    Timeout(u64, String),
    #[error("the token endpoint {0}")]
    Token(String),
    /// The refresh token was refused: only a new login helps.
    #[error("the refresh token was refused ({0}); run `mws login` again")]
    RefreshRefused(String),
    #[error("{0}")]
    Other(String),
}

/// A login or token failure with the server it concerns: `server "x": ...`.
#[derive(Debug, thiserror::Error)]
#[error("server \"{server}\": {why}")]
pub struct Failed {
    pub server: String,
    pub why: AuthError,
}

/// Whether headless mode is on (see `HEADLESS_ENV`).
pub fn headless() -> bool {
    std::env::var(HEADLESS_ENV).is_ok_and(|v| v == "1")
}

/// Scopes as the `scope` parameter: space-separated, each once, in order.
pub fn join_scopes<'a>(scopes: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in scopes.into_iter().flat_map(str::split_whitespace) {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

/// `url` may carry a secret or a token: https, or http to a loopback host.
pub fn secure_enough(url: &url::Url) -> bool {
    url.scheme() == "https"
        || (url.scheme() == "http"
            && matches!(
                url.host(),
                Some(url::Host::Domain("localhost"))
                    | Some(url::Host::Ipv4(std::net::Ipv4Addr::LOCALHOST))
                    | Some(url::Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
            ))
}

/// Refuses to contact `url` (the `role` of a login: metadata, registration, authorization,
/// token) unless `secure_enough`, before any connection is made: a login sends a code, a PKCE
/// verifier, a client secret or a token there.
pub fn require_secure(url: &str, role: &str) -> Result<url::Url, AuthError> {
    let parsed = url::Url::parse(url)
        .map_err(|e| AuthError::Metadata(format!("the {role} {url:?} is not a valid URL: {e}")))?;
    if secure_enough(&parsed) {
        return Ok(parsed);
    }
    Err(AuthError::Metadata(format!(
        "refusing the {role} {url}: it is plain http to a host that is not loopback, and a login \
         would send a secret (a code, a verifier, a client secret or a token) there in clear; \
         the server must use https"
    )))
}

/// What a request that timed out or failed to connect says: "did not answer within N s" for a
/// timeout, "is unreachable" otherwise.
pub fn unanswered(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        format!("did not answer within {REQUEST_SECS} s")
    } else {
        format!("is unreachable: {}", strip_url(e))
    }
}

fn strip_url(e: &reqwest::Error) -> String {
    let mut s = e.to_string();
    if let Some(u) = e.url() {
        s = s
            .replace(&format!(" ({u})"), "")
            .replace(&format!(" for url ({u})"), "");
    }
    s
}

/// The HTTP client for auth requests: no redirects followed (an endpoint that redirects is not
/// trusted to move a secret), bounded time.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(REQUEST_SECS))
        .build()
        .unwrap_or_default()
}

/// Seconds one discovery, registration or token request may take.
pub(crate) const REQUEST_SECS: u64 = 30;

/// An OAuth error body as a short line (`error: error_description`), or the first bytes of
/// anything else. Never echoes a token: error bodies carry none.
pub fn error_text(body: &str) -> String {
    #[derive(Deserialize)]
    struct E {
        error: String,
        error_description: Option<String>,
    }
    match serde_json::from_str::<E>(body) {
        Ok(E {
            error,
            error_description: Some(d),
        }) => format!("{error}: {d}"),
        Ok(E { error, .. }) => error,
        Err(_) => body.chars().take(120).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_become_one_line() {
        assert_eq!(
            error_text(r#"{"error":"invalid_grant","error_description":"expired"}"#),
            "invalid_grant: expired"
        );
        assert_eq!(
            error_text(r#"{"error":"invalid_client"}"#),
            "invalid_client"
        );
        assert_eq!(error_text("<html>"), "<html>");
    }

    #[test]
    fn scopes_are_joined_once_each() {
        assert_eq!(join_scopes(["a b", "b", "c"]), Some("a b c".into()));
        assert_eq!(join_scopes([""]), None);
    }

    #[test]
    fn only_https_or_loopback_http_is_secure_enough() {
        let ok = |u: &str| secure_enough(&url::Url::parse(u).unwrap());
        assert!(ok("https://example.com/mcp"));
        assert!(ok("http://localhost:1/mcp"));
        assert!(ok("http://127.0.0.1:1/mcp"));
        assert!(!ok("http://example.com/mcp"));
    }
}
