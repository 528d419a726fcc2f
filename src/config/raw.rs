//! The `upstream` field as written: both shapes (HTTP, stdio) in one struct, so that an unknown
//! field gets a did-you-mean over all of them, then checked into `Upstream`. Must not do I/O.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::{HttpUpstream, StdioUpstream, Upstream};

/// Both shapes of `upstream` in one, so that an unknown field gets a did-you-mean over all of them.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct RawUpstream {
    #[serde(default, deserialize_with = "super::checked::http_url")]
    url: Option<String>,
    #[serde(default, deserialize_with = "super::checked::headers")]
    headers: Option<BTreeMap<String, String>>,
    command: Option<String>,
    args: Option<Vec<String>>,
    env: Option<BTreeMap<String, String>>,
    cwd: Option<PathBuf>,
    allow_insecure_http: Option<bool>,
    oauth: Option<crate::auth::OAuthConfig>,
}

impl TryFrom<RawUpstream> for Upstream {
    type Error = String;
    fn try_from(r: RawUpstream) -> Result<Upstream, String> {
        match (r.url, r.command) {
            (Some(_), Some(_)) => Err("set either `url` (Streamable HTTP) or `command` (a stdio \
                                       child), not both"
                .into()),
            (None, None) => {
                Err("expected `url` (Streamable HTTP) or `command` (a stdio child)".into())
            }
            (Some(url), None) => {
                let stdio_only = [
                    ("args", r.args.is_some()),
                    ("env", r.env.is_some()),
                    ("cwd", r.cwd.is_some()),
                ];
                if let Some((f, _)) = stdio_only.iter().find(|(_, set)| *set) {
                    return Err(format!(
                        "`{f}` belongs to a stdio upstream (`command`), not to `url`"
                    ));
                }
                let headers = r.headers.unwrap_or_default();
                if !headers.is_empty() && r.allow_insecure_http != Some(true) {
                    let parsed = super::checked::check_url(&url)?;
                    super::servers::insecure_headers(&parsed, Some("`upstream`"))?;
                }
                Ok(Upstream::Http(HttpUpstream {
                    url,
                    headers,
                    oauth: r.oauth,
                }))
            }
            (None, Some(command)) => {
                for (f, set) in [
                    ("headers", r.headers.is_some()),
                    ("allowInsecureHttp", r.allow_insecure_http.is_some()),
                    ("oauth", r.oauth.is_some()),
                ] {
                    if set {
                        return Err(format!(
                            "`{f}` belongs to an HTTP upstream (`url`), not to `command`"
                        ));
                    }
                }
                Ok(Upstream::Stdio(StdioUpstream {
                    command,
                    args: r.args.unwrap_or_default(),
                    env: r.env.unwrap_or_default(),
                    cwd: r.cwd,
                }))
            }
        }
    }
}
