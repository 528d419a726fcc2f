//! The OAuth side of the HTTP wire: the stored token as `Authorization: Bearer` (only for the URL
//! it was issued for), refreshed before it expires and on a 401; a 403 asking for more scope
//! (or a 401 with nothing to refresh) becomes `WireError::NeedsLogin`, except in headless mode
//! where the login (or step-up) runs here. Must not log a token.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};

use crate::auth::{self, discover, flow, store};
use crate::upstream::wire::WireError;

/// Seconds before expiry at which a token is refreshed rather than sent.
const REFRESH_MARGIN_SECS: i64 = 60;
/// Times one request is sent with a refreshed token or after a step-up login before it fails;
/// raising it lets a server that keeps asking for more scope loop longer.
pub(super) const MAX_TRIES: u32 = 3;
/// How long a headless login (in serve) waits for its redirect.
const HEADLESS_WAIT_SECS: u64 = 20;

pub(super) struct Auth {
    dir: PathBuf,
    /// The token file in `dir` (`store::path`).
    file: PathBuf,
    url: String,
    /// The server's name for `mws login`.
    login: String,
    oauth: auth::OAuthConfig,
    /// One refresh or login at a time.
    busy: tokio::sync::Mutex<()>,
    /// Headless logins since the server last accepted a request: at most `MAX_TRIES - 1` (the
    /// first login is `mws login`'s), so a server that never is satisfied is not asked forever.
    logins: std::sync::atomic::AtomicU32,
    /// The token file as last read, by its identity (`Stamp`): a call costs one `stat` instead of
    /// reading and parsing the file (three times: `before`, `current`, `add`).
    cache: Mutex<Option<(Stamp, Option<Arc<store::Tokens>>)>>,
}

/// What identifies one version of the token file: `private_file` writes a new file and renames
/// it over the old one, so a login, a refresh or a logout changes the inode (`None`: no file).
type Stamp = Option<(u64, u64, i64, i64)>;

fn stamp(path: &std::path::Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((m.ino(), m.len(), m.mtime(), m.mtime_nsec()))
}

/// What to do after an answer.
pub(super) enum After {
    /// Send the request again (the token was refreshed or a login done).
    Retry,
    /// Hand the answer back as it is.
    Keep,
}

impl Auth {
    pub fn new(dir: PathBuf, url: &str, oauth: Option<auth::OAuthConfig>, login: &str) -> Auth {
        Auth {
            file: store::path(&dir),
            dir,
            login: login.to_string(),
            url: url.to_string(),
            oauth: oauth.unwrap_or_default(),
            busy: tokio::sync::Mutex::new(()),
            logins: std::sync::atomic::AtomicU32::new(0),
            cache: Mutex::default(),
        }
    }

    /// "run `mws login <name>` (why)".
    fn needs(&self, why: &str) -> WireError {
        WireError::NeedsLogin(format!("run `mws login {}` ({why})", self.login))
    }

    /// The error once `MAX_TRIES` authorizations did not satisfy the server.
    pub fn gave_up(&self) -> WireError {
        self.needs(&format!(
            "it still refused the request after {MAX_TRIES} authorizations"
        ))
    }

    /// The stored tokens for this server, read again only when the file changed.
    fn stored(&self) -> Option<Arc<store::Tokens>> {
        let now = stamp(&self.file);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((seen, tokens)) = cache.as_ref()
            && *seen == now
        {
            return tokens.clone();
        }
        let tokens = now
            .and_then(|_| store::load(&self.dir, &self.url))
            .map(Arc::new);
        *cache = Some((now, tokens.clone()));
        tokens
    }

    /// Adds `Authorization: Bearer` from the token file unless the config sets its own.
    pub fn add(&self, h: &mut HeaderMap) {
        if h.contains_key(AUTHORIZATION) {
            return;
        }
        if let Some(t) = self.stored()
            && let Ok(mut v) = HeaderValue::try_from(format!("Bearer {}", t.access_token))
        {
            v.set_sensitive(true);
            h.insert(AUTHORIZATION, v);
        }
    }

    /// Refreshes a token that is about to expire (a failure is left to the 401 that follows).
    pub async fn before(&self) {
        let now = crate::clock::now().unix_timestamp();
        let Some(t) = self.stored() else { return };
        if !t.expiring(now, REFRESH_MARGIN_SECS) || t.refresh_token.is_none() {
            return;
        }
        let _one = self.busy.lock().await;
        if let Some(t) = self
            .stored()
            .filter(|t| t.expiring(now, REFRESH_MARGIN_SECS))
            && let Err(e) = flow::refresh(&self.dir, &t).await
        {
            tracing::debug!("refreshing the token before it expires failed: {e}");
        }
    }

    /// Handles a 401 or 403 answer: `Retry` after a refresh or a (headless) login, `Err` when
    /// the user must log in, `Keep` for any other answer.
    pub async fn after(
        &self,
        status: u16,
        headers: &HeaderMap,
        sent: Option<&str>,
    ) -> Result<After, WireError> {
        let challenge = headers
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok())
            .map(discover::challenge)
            .unwrap_or_default();
        let step_up = status == 403 && challenge.error.as_deref() == Some("insufficient_scope");
        if status != 401 && !step_up {
            if (200..300).contains(&status) {
                self.logins.store(0, std::sync::atomic::Ordering::Relaxed);
            }
            return Ok(After::Keep);
        }
        let _one = self.busy.lock().await;
        let now = self.stored();
        // Another request refreshed it meanwhile.
        if status == 401
            && let Some(t) = &now
            && sent != Some(t.access_token.as_str())
        {
            return Ok(After::Retry);
        }
        if status == 401
            && let Some(t) = &now
            && t.refresh_token.is_some()
        {
            match flow::refresh(&self.dir, t).await {
                Ok(_) => return Ok(After::Retry),
                Err(e) => tracing::debug!("refreshing the token after a 401 failed: {e}"),
            }
        }
        let why = if step_up {
            format!(
                "it asks for more scope ({})",
                challenge.scope.as_deref().unwrap_or("unnamed")
            )
        } else if now.is_some() {
            "its token was refused and could not be refreshed".to_string()
        } else {
            "it answered 401 and mws holds no token for it".to_string()
        };
        if !auth::headless() {
            return Err(self.needs(&why));
        }
        if self
            .logins
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1
            >= MAX_TRIES
        {
            return Err(self.gave_up());
        }
        let login = flow::Login {
            url: &self.url,
            oauth: &self.oauth,
            dir: &self.dir,
            challenge: Some(challenge),
            previous_scope: now.and_then(|t| t.scope.clone()),
            wait: std::time::Duration::from_secs(HEADLESS_WAIT_SECS),
            headless: true,
        };
        match flow::login(login, &|_| {}).await {
            Ok(_) => Ok(After::Retry),
            Err(e) => Err(self.needs(&format!("{why}; the login failed: {e}"))),
        }
    }

    /// The token now sent, to tell a stale 401 from a fresh one.
    pub fn current(&self) -> Option<String> {
        self.stored().map(|t| t.access_token.clone())
    }
}
