//! The OAuth side of the HTTP wire: the stored token as `Authorization: Bearer` (only for the URL
//! it was issued for), refreshed once most of its lifetime has passed (`store::REFRESH_AT_PERCENT`)
//! and on a 401; a refused refresh is remembered and not tried again until a login; a 403 asking
//! for more scope is remembered for the next login and (like a 401 with nothing to refresh)
//! becomes `WireError::NeedsLogin`, except in headless mode where the login (or step-up) runs
//! here. Must not log a token.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};

use crate::auth::{self, AuthError, discover, flow, refresh, store};
use crate::upstream::wire::WireError;
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

    /// "the refresh token was refused; run `mws login <name>` (why)": at once, without asking
    /// the authorization server again.
    fn refused(&self, why: &str) -> WireError {
        WireError::NeedsLogin(format!(
            "the refresh token was refused; run `mws login {}` ({why}; it is not tried again \
             until a login writes new tokens)",
            self.login
        ))
    }

    /// Refreshes a token once most of its lifetime has passed (a failure is left to the 401 that
    /// follows); `Err` at once when its refresh was refused and it has expired (in headless mode
    /// the 401 that follows runs a login instead).
    pub async fn before(&self) -> Result<(), WireError> {
        let now = crate::clock::now().unix_timestamp();
        let Some(t) = self.stored() else {
            return Ok(());
        };
        if let Some(why) = &t.refresh_refused {
            return if t.expired(now) && !auth::headless() {
                Err(self.refused(why))
            } else {
                Ok(())
            };
        }
        if !t.refresh_due(now) || t.refresh_token.is_none() {
            return Ok(());
        }
        let _one = self.busy.lock().await;
        let Some(t) = self.stored().filter(|t| t.refresh_due(now)) else {
            return Ok(());
        };
        match refresh::refresh(&self.dir, &t).await {
            Err(AuthError::RefreshRefused(why)) if t.expired(now) && !auth::headless() => {
                Err(self.refused(&why))
            }
            Err(e) => {
                tracing::debug!("refreshing the token before it expires failed: {e}");
                Ok(())
            }
            Ok(_) => Ok(()),
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
            match refresh::refresh(&self.dir, t).await {
                Ok(_) => return Ok(After::Retry),
                Err(AuthError::RefreshRefused(why)) if !auth::headless() => {
                    return Err(self.refused(&why));
                }
                Err(e) => tracing::debug!("refreshing the token after a 401 failed: {e}"),
            }
        }
        let why = if step_up {
            let asked = challenge.scope.as_deref().unwrap_or("unnamed");
            let remembered = match &challenge.scope {
                Some(s) => refresh::remember_demanded(&self.dir, &self.url, s)
                    .await
                    .unwrap_or_else(|e| {
                        tracing::debug!("remembering the scopes asked for failed: {e}");
                        None
                    }),
                None => None,
            };
            match remembered {
                Some(all) => {
                    let held = now.iter().filter_map(|t| t.scope.as_deref());
                    let next = auth::join_scopes(held.chain([all.as_str()])).unwrap_or_default();
                    format!("it asks for more scope ({asked}); the next login asks for {next}")
                }
                None => format!("it asks for more scope ({asked})"),
            }
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
            previous_scope: self.stored().and_then(|t| t.wanted_scope()),
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

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
