//! Discovery: the `WWW-Authenticate` challenge of a 401/403, the protected-resource metadata
//! (RFC 9728: the challenge's `resource_metadata`, then both well-known forms) with its
//! `resource` checked against the server's URL, and the authorization server's metadata (RFC 8414
//! and OpenID Connect well-known forms, issuer checked), with the 2025-03-26 fallbacks (the
//! server's origin as the authorization server, `/authorize`, `/token`, `/register`). Must not
//! send a token.

use serde::Deserialize;
use url::Url;

use super::AuthError;

/// What a `WWW-Authenticate: Bearer ...` header says.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

/// Reads the Bearer challenge's parameters (`key="quoted"` or `key=token`, comma-separated).
pub fn challenge(header: &str) -> Challenge {
    let rest = header.trim();
    let rest = match rest.split_once(char::is_whitespace) {
        Some((scheme, r)) if scheme.eq_ignore_ascii_case("bearer") => r,
        _ if rest.eq_ignore_ascii_case("bearer") => "",
        _ => return Challenge::default(),
    };
    let mut out = Challenge::default();
    let mut chars = rest.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| *c == ',' || c.is_whitespace()) {
            chars.next();
        }
        let key: String = chars
            .by_ref()
            .take_while(|c| *c != '=')
            .collect::<String>()
            .trim()
            .to_ascii_lowercase();
        if key.is_empty() {
            return out;
        }
        let mut value = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            while let Some(c) = chars.next() {
                match c {
                    '\\' => value.extend(chars.next()),
                    '"' => break,
                    c => value.push(c),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                value.push(c);
            }
            value = value.trim().to_string();
        }
        match key.as_str() {
            "resource_metadata" => out.resource_metadata = Some(value),
            "scope" => out.scope = Some(value),
            "error" => out.error = Some(value),
            _ => {}
        }
    }
}

/// Protected-resource metadata (RFC 9728), the fields mws uses.
#[derive(Debug, Clone, Deserialize)]
pub struct ResourceMetadata {
    pub resource: String,
    #[serde(default)]
    pub authorization_servers: Vec<String>,
    pub scopes_supported: Option<Vec<String>>,
}

/// Authorization-server metadata (RFC 8414), the fields mws uses.
#[derive(Debug, Clone, Deserialize)]
pub struct ServerMetadata {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub scopes_supported: Option<Vec<String>>,
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    pub code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub authorization_response_iss_parameter_supported: bool,
    #[serde(default)]
    pub client_id_metadata_document_supported: bool,
}

/// Where a server's authorization is found.
#[derive(Debug, Clone)]
pub struct Discovered {
    /// The `resource` parameter: the metadata's resource, or the server's URL without one.
    pub resource: String,
    pub resource_metadata: Option<ResourceMetadata>,
    pub server: ServerMetadata,
    /// The issuer as mws found it (compared with the redirect's `iss`).
    pub issuer: String,
}

/// Well-known URLs of the protected-resource metadata for `server`: path-inserted, then root.
pub fn resource_metadata_urls(server: &Url) -> Vec<Url> {
    let mut out = Vec::new();
    let path = server.path().trim_end_matches('/');
    let at = |p: &str| {
        let mut u = server.clone();
        u.set_path(p);
        u.set_query(None);
        u.set_fragment(None);
        u
    };
    if !path.is_empty() {
        out.push(at(&format!("/.well-known/oauth-protected-resource{path}")));
    }
    out.push(at("/.well-known/oauth-protected-resource"));
    out
}

/// Well-known URLs of an issuer's metadata: RFC 8414 and OpenID Connect, path forms first.
pub fn server_metadata_urls(issuer: &Url) -> Vec<Url> {
    let path = issuer.path().trim_end_matches('/');
    let at = |p: &str| {
        let mut u = issuer.clone();
        u.set_path(p);
        u.set_query(None);
        u
    };
    if path.is_empty() {
        vec![
            at("/.well-known/oauth-authorization-server"),
            at("/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            at(&format!("/.well-known/oauth-authorization-server{path}")),
            at(&format!("/.well-known/openid-configuration{path}")),
            at(&format!("{path}/.well-known/openid-configuration")),
        ]
    }
}

/// `resource` from the metadata may stand for `server`: same origin, and the server's path
/// starts with the resource's path.
pub fn resource_matches(resource: &str, server: &Url) -> bool {
    let Ok(r) = Url::parse(resource) else {
        return false;
    };
    let norm = |p: &str| format!("{}/", p.trim_end_matches('/'));
    r.origin() == server.origin() && norm(server.path()).starts_with(&norm(r.path()))
}

/// Issuers compare as strings, a trailing `/` aside.
fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// A GET of JSON metadata: `Ok(None)` when the URL answers 4xx (not there), `Err` when it is
/// down or its body is not the expected JSON.
async fn get_json<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &Url,
    what: &str,
) -> Result<Option<T>, AuthError> {
    super::require_secure(url.as_str(), what)?;
    let resp = http
        .get(url.clone())
        .header("MCP-Protocol-Version", "2025-11-25")
        .header("Accept", "application/json")
        .send()
        .await
        .map_err(|e| AuthError::Metadata(format!("{what} at {url} {}", super::unanswered(&e))))?;
    let status = resp.status();
    if status.is_client_error() {
        return Ok(None);
    }
    if !status.is_success() {
        return Err(AuthError::Metadata(format!(
            "{what} at {url} answered HTTP {}",
            status.as_u16()
        )));
    }
    let body = resp
        .bytes()
        .await
        .map_err(|e| AuthError::Metadata(format!("{what} at {url}: {e}")))?;
    serde_json::from_slice(&body)
        .map(Some)
        .map_err(|e| AuthError::Metadata(format!("{what} at {url} is malformed: {e}")))
}

/// Finds the authorization of `server` from its challenge (if it sent one).
pub async fn discover(
    http: &reqwest::Client,
    server: &Url,
    challenge: &Challenge,
) -> Result<Discovered, AuthError> {
    let mut candidates = Vec::new();
    if let Some(u) = &challenge.resource_metadata {
        let u = server.join(u).map_err(|e| {
            AuthError::Metadata(format!("the challenge's resource_metadata {u:?}: {e}"))
        })?;
        candidates.push(u);
    }
    candidates.extend(resource_metadata_urls(server));
    let mut prm = None;
    for url in &candidates {
        if let Some(m) =
            get_json::<ResourceMetadata>(http, url, "protected-resource metadata").await?
        {
            prm = Some(m);
            break;
        }
    }
    let (issuer, resource) = match &prm {
        Some(m) => {
            if !resource_matches(&m.resource, server) {
                return Err(AuthError::Metadata(format!(
                    "protected-resource metadata names resource {} for server URL {server}; \
                     refusing to authorize for another resource",
                    m.resource
                )));
            }
            let Some(issuer) = m.authorization_servers.first() else {
                return Err(AuthError::Metadata(
                    "protected-resource metadata names no authorization server".into(),
                ));
            };
            (issuer.clone(), m.resource.clone())
        }
        // 2025-03-26: no resource metadata; the server's origin is the authorization server.
        None => (
            server.origin().ascii_serialization(),
            server.as_str().to_string(),
        ),
    };
    let issuer_url = Url::parse(&issuer)
        .map_err(|e| AuthError::Metadata(format!("authorization server {issuer:?}: {e}")))?;
    if !super::secure_enough(&issuer_url) {
        return Err(AuthError::Metadata(format!(
            "authorization server {issuer} is plain http off loopback"
        )));
    }
    let mut found = None;
    for url in server_metadata_urls(&issuer_url) {
        if let Some(m) =
            get_json::<ServerMetadata>(http, &url, "authorization server metadata").await?
        {
            found = Some(m);
            break;
        }
    }
    let server_md = match found {
        Some(m) => {
            if !same_issuer(&m.issuer, &issuer) {
                return Err(AuthError::Metadata(format!(
                    "authorization server metadata says issuer {} but was found for {issuer}",
                    m.issuer
                )));
            }
            m
        }
        None if prm.is_none() => fallback(&issuer_url),
        None => {
            return Err(AuthError::Metadata(format!(
                "authorization server {issuer} publishes no metadata (tried RFC 8414 and OpenID \
                 Connect well-known URLs)"
            )));
        }
    };
    if let Some(m) = &server_md.code_challenge_methods_supported
        && !m.iter().any(|m| m == "S256")
    {
        return Err(AuthError::Metadata(format!(
            "authorization server {issuer} does not support PKCE with S256"
        )));
    }
    Ok(Discovered {
        resource,
        resource_metadata: prm,
        issuer: server_md.issuer.clone(),
        server: server_md,
    })
}

/// The 2025-03-26 default endpoints at the server's origin.
fn fallback(origin: &Url) -> ServerMetadata {
    let at = |p: &str| origin.join(p).map(String::from).unwrap_or_default();
    ServerMetadata {
        issuer: origin.origin().ascii_serialization(),
        authorization_endpoint: at("/authorize"),
        token_endpoint: at("/token"),
        registration_endpoint: Some(at("/register")),
        scopes_supported: None,
        token_endpoint_auth_methods_supported: None,
        code_challenge_methods_supported: None,
        authorization_response_iss_parameter_supported: false,
        client_id_metadata_document_supported: false,
    }
}

#[cfg(test)]
#[path = "discover_tests.rs"]
mod tests;
