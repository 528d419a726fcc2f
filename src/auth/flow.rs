//! One login: find the authorization server, register, send the user (or, headless, follow the
//! redirect ourselves) to the authorization endpoint with PKCE (S256), `state` and `resource`,
//! take the code from the loopback redirect (state and `iss` checked), exchange it, and only then
//! write the token file; a refused redirect URI is named with its setting. Must not write
//! anything before the tokens are in hand, nor show a code or token.

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use sha2::Digest;
use url::Url;

use super::discover::{self, Challenge};
use super::store::{self, Tokens};
use super::{AuthError, OAuthConfig, loopback, register, token};

/// What a login needs to know about the server.
pub struct Login<'a> {
    pub url: &'a str,
    pub oauth: &'a OAuthConfig,
    /// The server's state dir (where `oauth.json` goes).
    pub dir: &'a Path,
    /// The challenge that started it (a 401 or a 403 asking for more scope), if any.
    pub challenge: Option<Challenge>,
    /// Scopes held before and scopes a server demanded since (`Tokens::wanted_scope`): asked
    /// for again, with the ones a step-up challenge names.
    pub previous_scope: Option<String>,
    /// How long to wait for the redirect.
    pub wait: Duration,
    /// Follow the authorization endpoint's redirect instead of showing the URL.
    pub headless: bool,
}

/// Random bytes, base64url without padding (PKCE verifier, state).
fn random_token(bytes: usize) -> Result<String, AuthError> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf)
        .map_err(|e| AuthError::Other(format!("the OS random source failed: {e}")))?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(buf))
}

/// The S256 code challenge of `verifier` (RFC 7636 §4.2).
pub fn challenge_s256(verifier: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(verifier))
}

/// Asks the server without a token for its `WWW-Authenticate` challenge: with `initialize`, then
/// (a server may let that through) with `tools/list`.
async fn probe(http: &reqwest::Client, url: &Url) -> Challenge {
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mws", "version": env!("CARGO_PKG_VERSION")}}});
    let list = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}});
    for body in [init, list] {
        let Ok(resp) = http
            .post(url.clone())
            .header("Accept", "application/json, text/event-stream")
            .json(&body)
            .send()
            .await
        else {
            return Challenge::default();
        };
        if let Some(c) = resp
            .headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
        {
            return discover::challenge(c);
        }
    }
    Challenge::default()
}

/// The scopes to ask for: the config's, else the challenge's, else the resource metadata's;
/// with the scopes held or demanded before, those a 403 `insufficient_scope` challenge demands
/// (whatever the config says), and `offline_access` when the authorization server offers it.
fn scopes(l: &Login<'_>, d: &discover::Discovered, challenge: &Challenge) -> Option<String> {
    let base: Vec<&str> = if let Some(s) = &l.oauth.scopes {
        s.iter().map(String::as_str).collect()
    } else if let Some(s) = &challenge.scope {
        vec![s.as_str()]
    } else if let Some(s) = d
        .resource_metadata
        .as_ref()
        .and_then(|m| m.scopes_supported.as_ref())
    {
        s.iter().map(String::as_str).collect()
    } else {
        Vec::new()
    };
    let offline = d
        .server
        .scopes_supported
        .as_ref()
        .is_some_and(|s| s.iter().any(|s| s == "offline_access"))
        && !base.is_empty();
    let demanded = challenge
        .scope
        .as_deref()
        .filter(|_| challenge.error.as_deref() == Some("insufficient_scope"));
    super::join_scopes(
        l.previous_scope
            .as_deref()
            .into_iter()
            .chain(base)
            .chain(demanded)
            .chain(offline.then_some("offline_access")),
    )
}

/// Runs the login; `show` is given the URL to open (not called when headless).
pub async fn login(l: Login<'_>, show: &(dyn Fn(&str) + Sync)) -> Result<Tokens, AuthError> {
    let server = Url::parse(l.url)
        .map_err(|e| AuthError::Other(format!("the server URL is not valid: {e}")))?;
    if !super::secure_enough(&server) {
        return Err(AuthError::Other(
            "refusing to log in over plain http to a host that is not loopback".into(),
        ));
    }
    let http = super::client();
    let challenge = match &l.challenge {
        Some(c) => c.clone(),
        None => probe(&http, &server).await,
    };
    let d = discover::discover(&http, &server, &challenge).await?;
    // Every endpoint the login will send a secret to is checked before the first is contacted.
    if let Some(r) = &d.server.registration_endpoint {
        super::require_secure(r, "registration endpoint")?;
    }
    super::require_secure(&d.server.authorization_endpoint, "authorization endpoint")?;
    super::require_secure(&d.server.token_endpoint, "token endpoint")?;
    let scope = scopes(&l, &d, &challenge);
    let listener = loopback::bind(l.oauth.redirect_uri.as_deref()).await?;
    let client = register::client(
        &http,
        &d.server,
        l.oauth,
        &listener.redirect_uri,
        scope.as_deref(),
    )
    .await?;
    let by_hand = [&l.oauth.client_id, &l.oauth.client_metadata_url]
        .iter()
        .any(|c| c.as_deref() == Some(client.client_id.as_str()));
    let redirect_uri = listener.redirect_uri.clone();
    let hint = loopback::hint(&redirect_uri, l.oauth.redirect_uri.is_some(), by_hand);
    let verifier = random_token(32)?;
    let state = random_token(16)?;
    let mut auth =
        super::require_secure(&d.server.authorization_endpoint, "authorization endpoint")?;
    {
        let mut q = auth.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client.client_id)
            .append_pair("redirect_uri", &redirect_uri)
            .append_pair("code_challenge", &challenge_s256(&verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("resource", &d.resource);
        if let Some(s) = &scope {
            q.append_pair("scope", s);
        }
    }
    let check =
        |p: &std::collections::HashMap<String, String>| check_redirect(p, &state, &d, &hint);
    let waiting = listener.wait(l.wait, &hint, &check);
    let code = if l.headless {
        tokio::pin!(waiting);
        tokio::select! {
            code = &mut waiting => code?,
            followed = follow(&http, &auth, &redirect_uri, &hint) => {
                followed?;
                waiting.await?
            }
        }
    } else {
        show(auth.as_str());
        waiting.await?
    };
    let g = token::exchange(
        &http,
        &d.server.token_endpoint,
        &client,
        &code,
        &verifier,
        &redirect_uri,
        &d.resource,
    )
    .await
    .map_err(|e| match e {
        AuthError::Token(why) if loopback::about_redirect(&why) => {
            AuthError::Token(format!("{why}; {hint}"))
        }
        e => e,
    })?;
    let now = crate::clock::now().unix_timestamp();
    let tokens = Tokens {
        resource: l.url.to_string(),
        issuer: d.issuer.clone(),
        token_endpoint: d.server.token_endpoint.clone(),
        client,
        access_token: g.access_token,
        refresh_token: g.refresh_token,
        expires_at: g.expires_in.map(|s| now + s as i64),
        scope: g.scope.or(scope),
        issued_at: Some(now),
        demanded_scope: None,
        refresh_refused: None,
    };
    store::save(l.dir, &tokens).map_err(|e| {
        AuthError::Other(format!(
            "cannot write {}: {e}",
            store::path(l.dir).display()
        ))
    })?;
    Ok(tokens)
}

/// Headless: GETs the authorization URL without following redirects and delivers its
/// `Location` to our loopback listener (only there: nothing else is fetched). An answer that is
/// not a redirect is an error page: its text is shown, with `hint` when it is about the redirect.
async fn follow(
    http: &reqwest::Client,
    auth: &Url,
    redirect_uri: &str,
    hint: &str,
) -> Result<(), AuthError> {
    let resp = http.get(auth.clone()).send().await.map_err(|e| {
        AuthError::Redirect(format!(
            "never came: the authorization endpoint is unreachable: {e}"
        ))
    })?;
    let Some(location) = resp
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
    else {
        let status = resp.status().as_u16();
        let body = super::error_text(&resp.text().await.unwrap_or_default());
        let about = if loopback::about_redirect(&body) {
            format!(": {body}; {hint}")
        } else {
            String::new()
        };
        return Err(AuthError::Redirect(format!(
            "never came: the authorization endpoint answered HTTP {status} without approving{about}"
        )));
    };
    if !location.starts_with(redirect_uri) {
        return Err(AuthError::Redirect(
            "went somewhere other than mws's loopback listener".into(),
        ));
    }
    http.get(&location)
        .send()
        .await
        .map_err(|e| AuthError::Redirect(format!("could not be delivered: {e}")))?;
    Ok(())
}

/// The code from the redirect's parameters, after checking `state`, `error` (with `hint` when it
/// is about the redirect URI) and `iss`.
pub fn check_redirect(
    params: &std::collections::HashMap<String, String>,
    state: &str,
    d: &discover::Discovered,
    hint: &str,
) -> Result<String, AuthError> {
    if params.get("state").map(String::as_str) != Some(state) {
        return Err(AuthError::Redirect(
            "carried a state that is not this login's (a forged or stale redirect); nothing was \
             stored"
                .into(),
        ));
    }
    if let Some(e) = params.get("error") {
        let d = params
            .get("error_description")
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        let about = if loopback::about_redirect(&format!("{e}{d}")) {
            format!("; {hint}")
        } else {
            String::new()
        };
        return Err(AuthError::Redirect(format!(
            "reported an error: {e}{d}{about}"
        )));
    }
    match params.get("iss") {
        Some(iss) if iss != &d.issuer => {
            return Err(AuthError::Redirect(format!(
                "came from issuer {iss}, not {}; nothing was stored",
                d.issuer
            )));
        }
        None if d.server.authorization_response_iss_parameter_supported => {
            return Err(AuthError::Redirect(format!(
                "carried no `iss` although {} says it sends one; nothing was stored",
                d.issuer
            )));
        }
        _ => {}
    }
    params
        .get("code")
        .cloned()
        .ok_or_else(|| AuthError::Redirect("carried no authorization code".into()))
}

#[cfg(test)]
#[path = "flow_tests.rs"]
mod tests;
