//! The token file of one server (`oauth.json` in its state dir, 0600 via `private_file`): the
//! tokens, when they were issued and expire (and so when to refresh them), the client they were
//! issued to, the resource they are bound to, the scopes a server demanded since (step-up), and a
//! refresh the authorization server refused. Must not hand a token out for any resource but the
//! one it was issued for, and must not print a token or a secret (`Debug` leaves them out).

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::register::Client;

/// The file name in a server's state dir.
pub const FILE: &str = "oauth.json";

/// What a login left.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    /// The server URL (`resource`) the tokens were issued for.
    pub resource: String,
    pub issuer: String,
    pub token_endpoint: String,
    pub client: Client,
    pub access_token: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refresh_token: Option<String>,
    /// Unix seconds; `None`: the server did not say.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub expires_at: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub scope: Option<String>,
    /// Unix seconds when the access token was granted; with `expires_at`, its lifetime.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub issued_at: Option<i64>,
    /// Scopes a server asked for (403 `insufficient_scope`) since these tokens were granted: the
    /// next login asks for them too.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub demanded_scope: Option<String>,
    /// Why the authorization server refused the refresh token: no refresh is tried again until a
    /// login writes new tokens (which have no such mark).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub refresh_refused: Option<String>,
}

/// Percent of an access token's lifetime (`expires_at - issued_at`) after which it is refreshed
/// before being sent. Lowering it refreshes more often; raising it toward 100 leaves less time
/// for the refresh before the token expires (a token stored without `issued_at` is refreshed
/// when it has expired).
pub const REFRESH_AT_PERCENT: i64 = 80;

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("resource", &self.resource)
            .field("issuer", &self.issuer)
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .field("demanded_scope", &self.demanded_scope)
            .field("refresh_refused", &self.refresh_refused)
            .finish_non_exhaustive()
    }
}

impl Tokens {
    /// Whether the access token has expired at `now`.
    pub fn expired(&self, now: i64) -> bool {
        self.expires_at.is_some_and(|t| t <= now)
    }

    /// Whether the access token should be refreshed before it is sent at `now`:
    /// `REFRESH_AT_PERCENT` of its lifetime has passed (or, without `issued_at`, it expired).
    pub fn refresh_due(&self, now: i64) -> bool {
        match (self.issued_at, self.expires_at) {
            (Some(from), Some(to)) if to > from => {
                now >= from + (to - from) * REFRESH_AT_PERCENT / 100
            }
            _ => self.expired(now),
        }
    }

    /// The scopes held and the scopes demanded since, as one `scope` value.
    pub fn wanted_scope(&self) -> Option<String> {
        super::join_scopes(
            self.scope
                .iter()
                .chain(&self.demanded_scope)
                .map(String::as_str),
        )
    }
}

pub fn path(dir: &Path) -> PathBuf {
    dir.join(FILE)
}

/// The stored tokens for `resource`; `None` when there are none, or they belong to another URL,
/// or the file cannot be read as tokens.
pub fn load(dir: &Path, resource: &str) -> Option<Tokens> {
    let text = std::fs::read(path(dir)).ok()?;
    let t: Tokens = serde_json::from_slice(&text).ok()?;
    super::discover::resource_matches(&t.resource, &url::Url::parse(resource).ok()?).then_some(t)
}

/// Writes the tokens whole (a reader never sees half a file).
pub fn save(dir: &Path, t: &Tokens) -> std::io::Result<()> {
    let body = serde_json::to_vec_pretty(t).map_err(std::io::Error::other)?;
    crate::private_file::write(&path(dir), &body)
}

/// Removes the token file; `Ok(false)` when there was none.
pub fn remove(dir: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(path(dir)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn tokens(resource: &str) -> Tokens {
        Tokens {
            resource: resource.into(),
            issuer: "https://as.example".into(),
            token_endpoint: "https://as.example/token".into(),
            client: Client {
                client_id: "c".into(),
                client_secret: Some("s3cret".into()),
                auth_method: "client_secret_basic".into(),
            },
            access_token: "at-value".into(),
            refresh_token: Some("rt-value".into()),
            expires_at: Some(100),
            scope: None,
            issued_at: None,
            demanded_scope: None,
            refresh_refused: None,
        }
    }

    #[test]
    fn tokens_are_private_and_bound_to_their_resource() {
        let dir = tempfile::tempdir().unwrap();
        let t = tokens("https://mcp.example/mcp");
        save(dir.path(), &t).unwrap();
        let mode = std::fs::metadata(path(dir.path()))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(load(dir.path(), "https://mcp.example/mcp"), Some(t.clone()));
        assert_eq!(load(dir.path(), "https://other.example/mcp"), None);
        let shown = format!("{t:?}");
        assert!(
            !shown.contains("at-value") && !shown.contains("rt-value") && !shown.contains("s3cret")
        );
        assert!(t.expired(100) && !t.expired(99));
        assert!(remove(dir.path()).unwrap());
        assert!(!remove(dir.path()).unwrap());
    }

    /// A token is refreshed once `REFRESH_AT_PERCENT` of its lifetime has passed, however short
    /// the lifetime: a 60 s token is sent as it is for 48 s.
    #[test]
    fn refresh_is_due_at_a_fraction_of_the_lifetime() {
        for (issued, expires, now, due) in [
            (Some(1000), Some(1060), 1047, false),
            (Some(1000), Some(1060), 1048, true),
            (Some(1000), Some(1010), 1007, false),
            (Some(1000), Some(1010), 1008, true),
            (Some(1000), Some(4600), 3879, false),
            (Some(1000), Some(4600), 3880, true),
            (None, Some(1060), 1059, false),
            (None, Some(1060), 1060, true),
            (Some(1000), None, 999_999, false),
        ] {
            let t = Tokens {
                issued_at: issued,
                expires_at: expires,
                ..tokens("https://m/mcp")
            };
            assert_eq!(t.refresh_due(now), due, "{issued:?} {expires:?} {now}");
        }
    }
}
