//! The refresh of stored tokens, one at a time across mws processes (`oauth.lock`), and the two
//! marks a running proxy leaves in the token file: the scopes a server demanded (step-up, asked
//! for by the next login) and a refresh token the authorization server refused (not sent again
//! until a login writes new tokens). Must not show a token, and must not write tokens it did not
//! get from the token endpoint (a mark rewrites the stored ones unchanged).

use std::path::Path;

use super::store::{self, Tokens};
use super::{AuthError, token};

/// New tokens for stored ones from their refresh token, written back; `RefreshRefused` when the
/// authorization server no longer accepts it (a new login is needed). A refusal is remembered in
/// the token file, and later calls return it without asking again.
pub async fn refresh(dir: &Path, old: &Tokens) -> Result<Tokens, AuthError> {
    // Several mws processes (one per client session) share the store: one refreshes, the others
    // take what it wrote (a rotated refresh token would be refused the second time).
    let _held = hold_refresh_lock(dir).await?;
    let current = store::load(dir, &old.resource);
    if let Some(t) = current
        .as_ref()
        .filter(|t| t.access_token != old.access_token)
    {
        return Ok(t.clone());
    }
    let old = current.as_ref().unwrap_or(old);
    if let Some(why) = &old.refresh_refused {
        return Err(AuthError::RefreshRefused(why.clone()));
    }
    let Some(rt) = &old.refresh_token else {
        return Err(AuthError::RefreshRefused(
            "no refresh token was issued".into(),
        ));
    };
    let g = match token::refresh(
        &super::client(),
        &old.token_endpoint,
        &old.client,
        rt,
        &old.resource,
    )
    .await
    {
        Ok(g) => g,
        Err(AuthError::RefreshRefused(why)) => {
            if current.is_some() {
                let marked = Tokens {
                    refresh_refused: Some(why.clone()),
                    ..old.clone()
                };
                save(dir, &marked)?;
            }
            return Err(AuthError::RefreshRefused(why));
        }
        Err(e) => return Err(e),
    };
    let now = crate::clock::now().unix_timestamp();
    let t = Tokens {
        access_token: g.access_token,
        refresh_token: g.refresh_token.or_else(|| old.refresh_token.clone()),
        expires_at: g.expires_in.map(|s| now + s as i64),
        issued_at: Some(now),
        scope: g.scope.or_else(|| old.scope.clone()),
        ..old.clone()
    };
    save(dir, &t)?;
    Ok(t)
}

/// Remembers that the server of the tokens in `dir` asked for `scope` (a 403
/// `insufficient_scope`), so that the next login asks for it; the scopes demanded so far, or
/// `None` when there are no stored tokens to remember it beside.
pub async fn remember_demanded(
    dir: &Path,
    resource: &str,
    scope: &str,
) -> Result<Option<String>, AuthError> {
    let _held = hold_refresh_lock(dir).await?;
    let Some(t) = store::load(dir, resource) else {
        return Ok(None);
    };
    let demanded = super::join_scopes(t.demanded_scope.iter().map(String::as_str).chain([scope]));
    if demanded != t.demanded_scope {
        save(
            dir,
            &Tokens {
                demanded_scope: demanded.clone(),
                ..t
            },
        )?;
    }
    Ok(demanded)
}

fn save(dir: &Path, t: &Tokens) -> Result<(), AuthError> {
    store::save(dir, t)
        .map_err(|e| AuthError::Other(format!("cannot write {}: {e}", store::path(dir).display())))
}

/// The lock file that makes one refresh at a time across processes (beside `oauth.json`).
const REFRESH_LOCK: &str = "oauth.lock";

/// How often a refresh waiting for another process's retries the lock.
const REFRESH_LOCK_POLL: std::time::Duration = std::time::Duration::from_millis(50);

/// Waits (at most one request's budget and a little more) for the refresh lock.
async fn hold_refresh_lock(dir: &Path) -> Result<std::fs::File, AuthError> {
    let path = dir.join(REFRESH_LOCK);
    let fail = |e: String| AuthError::Other(format!("cannot lock {}: {e}", path.display()));
    let file = crate::private_file::open_lock(&path).map_err(|e| fail(e.to_string()))?;
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
