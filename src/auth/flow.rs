//! One login: find the authorization server, register, send the user (or, headless, follow the
//! redirect ourselves) to the authorization endpoint with PKCE (S256), `state` and `resource`,
//! take the code from the loopback redirect (state and `iss` checked), exchange it, and only then
//! write the token file. Also the refresh of stored tokens. Must not write anything before the
//! tokens are in hand, nor show a code or token.

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
    /// Scopes held before (kept when a step-up asks for more).
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
/// with the scopes held before, and `offline_access` when the authorization server offers it.
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
    super::join_scopes(
        l.previous_scope
            .as_deref()
            .into_iter()
            .chain(base)
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
    let listener = loopback::bind().await?;
    let client = register::client(
        &http,
        &d.server,
        l.oauth,
        &listener.redirect_uri,
        scope.as_deref(),
    )
    .await?;
    let verifier = random_token(32)?;
    let state = random_token(16)?;
    let mut auth =
        super::require_secure(&d.server.authorization_endpoint, "authorization endpoint")?;
    {
        let mut q = auth.query_pairs_mut();
        q.append_pair("response_type", "code")
            .append_pair("client_id", &client.client_id)
            .append_pair("redirect_uri", &listener.redirect_uri)
            .append_pair("code_challenge", &challenge_s256(&verifier))
            .append_pair("code_challenge_method", "S256")
            .append_pair("state", &state)
            .append_pair("resource", &d.resource);
        if let Some(s) = &scope {
            q.append_pair("scope", s);
        }
    }
    let redirect_uri = listener.redirect_uri.clone();
    let waiting = tokio::spawn(listener.wait(l.wait));
    if l.headless {
        follow(&http, &auth, &redirect_uri).await?;
    } else {
        show(auth.as_str());
    }
    let params = waiting
        .await
        .map_err(|e| AuthError::Other(format!("the redirect listener stopped: {e}")))??;
    let code = check_redirect(&params, &state, &d)?;
    let g = token::exchange(
        &http,
        &d.server.token_endpoint,
        &client,
        &code,
        &verifier,
        &redirect_uri,
        &d.resource,
    )
    .await?;
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
/// `Location` to our loopback listener (only there: nothing else is fetched).
async fn follow(http: &reqwest::Client, auth: &Url, redirect_uri: &str) -> Result<(), AuthError> {
    let resp = http.get(auth.clone()).send().await.map_err(|e| {
        AuthError::Redirect(format!(
            "never came: the authorization endpoint is unreachable: {e}"
        ))
    })?;
    let location = resp
        .headers()
        .get("location")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .ok_or_else(|| {
            AuthError::Redirect(format!(
                "never came: the authorization endpoint answered HTTP {} without approving",
                resp.status().as_u16()
            ))
        })?;
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

/// The code from the redirect's parameters, after checking `state`, `error` and `iss`.
pub fn check_redirect(
    params: &std::collections::HashMap<String, String>,
    state: &str,
    d: &discover::Discovered,
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
        return Err(AuthError::Redirect(format!("reported an error: {e}{d}")));
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

/// New tokens for stored ones from their refresh token, written back; `RefreshRefused` when the
/// authorization server no longer accepts it (a new login is needed).
pub async fn refresh(dir: &Path, old: &Tokens) -> Result<Tokens, AuthError> {
    // Several mws processes (one per client session) share the store: one refreshes, the others
    // take what it wrote (a rotated refresh token would be refused the second time).
    let _held = hold_refresh_lock(dir).await?;
    let newer = store::load(dir, &old.resource).filter(|t| t.access_token != old.access_token);
    if let Some(t) = newer {
        return Ok(t);
    }
    let Some(rt) = &old.refresh_token else {
        return Err(AuthError::RefreshRefused(
            "no refresh token was issued".into(),
        ));
    };
    let g = token::refresh(
        &super::client(),
        &old.token_endpoint,
        &old.client,
        rt,
        &old.resource,
    )
    .await?;
    let now = crate::clock::now().unix_timestamp();
    let t = Tokens {
        access_token: g.access_token,
        refresh_token: g.refresh_token.or_else(|| old.refresh_token.clone()),
        expires_at: g.expires_in.map(|s| now + s as i64),
        scope: g.scope.or_else(|| old.scope.clone()),
        ..old.clone()
    };
    store::save(dir, &t).map_err(|e| {
        AuthError::Other(format!("cannot write {}: {e}", store::path(dir).display()))
    })?;
    Ok(t)
}

/// The lock file that makes one refresh at a time across processes (beside `oauth.json`).
const REFRESH_LOCK: &str = "oauth.lock";

/// How often a refresh waiting for another process's retries the lock.
const REFRESH_LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Waits (at most one request's budget and a little more) for the refresh lock.
async fn hold_refresh_lock(dir: &Path) -> Result<std::fs::File, AuthError> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = dir.join(REFRESH_LOCK);
    let fail = |e: String| AuthError::Other(format!("cannot lock {}: {e}", path.display()));
    crate::private_file::create_dir(dir).map_err(|e| fail(e.to_string()))?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&path)
        .map_err(|e| fail(e.to_string()))?;
    let deadline =
        std::time::Instant::now() + std::time::Duration::from_secs(super::REQUEST_SECS + 5);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(file),
            Err(std::fs::TryLockError::WouldBlock) if std::time::Instant::now() < deadline => {
                tokio::time::sleep(REFRESH_LOCK_POLL).await;
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(fail("another mws process held it too long".into()));
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(fail(e.to_string())),
        }
    }
}

#[cfg(test)]
#[path = "flow_tests.rs"]
mod tests;
