//! The token file of one server (`oauth.json` in its state dir, 0600 via `private_file`): the
//! tokens, when they expire, the client they were issued to and the resource they are bound to.
//! Must not hand a token out for any resource but the one it was issued for, and must not
//! print a token or a secret (`Debug` leaves them out).

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
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("resource", &self.resource)
            .field("issuer", &self.issuer)
            .field("expires_at", &self.expires_at)
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

impl Tokens {
    /// Whether the access token is past (or within `margin` seconds of) its expiry at `now`.
    pub fn expiring(&self, now: i64, margin: i64) -> bool {
        self.expires_at.is_some_and(|t| t - margin <= now)
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
        assert!(t.expiring(40, 60) && !t.expiring(39, 60));
        assert!(remove(dir.path()).unwrap());
        assert!(!remove(dir.path()).unwrap());
    }
}
