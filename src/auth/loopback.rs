//! The one-shot redirect listener of a login: loopback only, on a random port or the one
//! `oauth.redirectUri` names (checked here when the config is read), waits for one
//! `GET <path>?...`, checks it with the login's rule (state, error, `iss`) and answers the browser
//! with the truth: "login received" only for a redirect that passed, "NOT accepted" and why
//! otherwise. Must not listen on anything but loopback, nor log the query (it holds the
//! authorization code).

use std::collections::HashMap;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use url::Url;

use super::AuthError;

/// Longest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;
/// Connections accepted before giving up on a stray client that never sends the callback.
const MAX_CONNECTIONS: usize = 32;
/// The path of the redirect URI on a random port.
const PATH: &str = "/callback";

pub struct Listener {
    inner: TcpListener,
    pub redirect_uri: String,
    path: String,
}

/// Checks `oauth.redirectUri`: an `http://` URL to 127.0.0.1, [::1] or localhost with a port
/// 1–65535, no query or fragment (mws listens there itself, without TLS).
pub fn check_redirect_uri(s: &str) -> Result<Url, String> {
    let want = "write the redirect URI registered with the client, as in \
                http://127.0.0.1:8976/callback";
    let u = Url::parse(s).map_err(|e| match e {
        url::ParseError::InvalidPort => format!("{s:?} has a port outside 1–65535; {want}"),
        e => format!("{s:?} is not a URL ({e}); {want}"),
    })?;
    if u.scheme() != "http" {
        return Err(format!(
            "{s:?} is not http://: mws receives the redirect itself on loopback, without TLS; \
             {want}"
        ));
    }
    let loopback = matches!(
        u.host(),
        Some(url::Host::Domain("localhost"))
            | Some(url::Host::Ipv4(std::net::Ipv4Addr::LOCALHOST))
            | Some(url::Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
    );
    if !loopback {
        return Err(format!(
            "{s:?} is not on loopback: mws listens for the redirect on 127.0.0.1, [::1] or \
             localhost only"
        ));
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err(format!("{s:?} carries a user name or password; {want}"));
    }
    if u.query().is_some() || u.fragment().is_some() {
        return Err(format!("{s:?} has a query or fragment; {want}"));
    }
    // `Url` drops a written default port (80); a port must be written all the same.
    let authority = s
        .split("://")
        .nth(1)
        .unwrap_or("")
        .split(['/', '?', '#'])
        .next();
    let written = authority.is_some_and(|a| a.rsplit_once(']').map_or(a, |(_, p)| p).contains(':'));
    match u.port_or_known_default() {
        Some(0) => Err(format!(
            "{s:?} has port 0; the port must be 1–65535; {want}"
        )),
        Some(_) if written => Ok(u),
        _ => Err(format!("{s:?} names no port (1–65535); {want}")),
    }
}

/// Binds the configured redirect URI's host and port (`redirect`, checked by
/// `check_redirect_uri`), or 127.0.0.1 on a port the OS picks.
pub async fn bind(redirect: Option<&str>) -> Result<Listener, AuthError> {
    let Some(r) = redirect else {
        let inner = TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| {
            AuthError::Other(format!("cannot listen on 127.0.0.1 for the redirect: {e}"))
        })?;
        let port = inner.local_addr().map(|a| a.port()).unwrap_or_default();
        return Ok(Listener {
            inner,
            redirect_uri: format!("http://127.0.0.1:{port}{PATH}"),
            path: PATH.into(),
        });
    };
    let u =
        check_redirect_uri(r).map_err(|e| AuthError::Other(format!("`oauth.redirectUri`: {e}")))?;
    let port = u.port_or_known_default().unwrap_or_default();
    let ip: std::net::IpAddr = match u.host() {
        Some(url::Host::Ipv6(a)) => a.into(),
        _ => std::net::Ipv4Addr::LOCALHOST.into(),
    };
    let inner = TcpListener::bind((ip, port)).await.map_err(|e| {
        AuthError::Other(format!(
            "cannot listen on {} for the redirect to {r} (`oauth.redirectUri`): {e}; another \
             program holds the port, or the port needs privileges",
            std::net::SocketAddr::from((ip, port))
        ))
    })?;
    Ok(Listener {
        inner,
        redirect_uri: r.to_string(),
        path: u.path().to_string(),
    })
}

/// What a message about a refused redirect URI adds: the URI and the setting that chooses it.
/// `configured`: it came from `oauth.redirectUri`; `by_hand`: the client was registered by hand
/// (`oauth.clientId` or a metadata document), so the server checks it against its registration.
pub fn hint(redirect_uri: &str, configured: bool, by_hand: bool) -> String {
    if configured {
        format!(
            "the redirect URI was {redirect_uri} (`oauth.redirectUri`); it must be registered \
             for the client exactly as written"
        )
    } else if by_hand {
        format!(
            "the redirect URI was {redirect_uri}, on a random port; a client registered by hand \
             whose authorization server checks redirect URIs exactly needs `oauth.redirectUri` \
             set to the registered one"
        )
    } else {
        format!(
            "the redirect URI was {redirect_uri}, registered with the authorization server just \
             now; to use a fixed one set `oauth.redirectUri`"
        )
    }
}

/// Whether an authorization server's error text is about the redirect URI.
pub fn about_redirect(text: &str) -> bool {
    text.to_ascii_lowercase().contains("redirect")
}

/// The rule a redirect must pass: its query in, the authorization code out.
pub type Check<'a> = dyn Fn(&HashMap<String, String>) -> Result<String, AuthError> + Sync + 'a;

impl Listener {
    /// The code of the first callback, checked by `check`; `Timeout` after `wait` (its message
    /// carries `hint`, see `hint`).
    pub async fn wait(
        self,
        wait: Duration,
        hint: &str,
        check: &Check<'_>,
    ) -> Result<String, AuthError> {
        tokio::time::timeout(wait, self.accept(check))
            .await
            .map_err(|_| AuthError::Timeout(wait.as_secs(), hint.to_string()))?
    }

    async fn accept(self, check: &Check<'_>) -> Result<String, AuthError> {
        for _ in 0..MAX_CONNECTIONS {
            let Ok((mut sock, _)) = self.inner.accept().await else {
                continue;
            };
            let mut head = Vec::new();
            let mut buf = [0u8; 2048];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
                match sock.read(&mut buf).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => head.extend_from_slice(&buf[..n]),
                }
            }
            let line = String::from_utf8_lossy(&head);
            let target = line
                .lines()
                .next()
                .and_then(|l| l.strip_prefix("GET "))
                .and_then(|l| l.split(' ').next())
                .unwrap_or("");
            let (path, query) = target.split_once('?').unwrap_or((target, ""));
            if path != self.path {
                let _ = sock
                    .write_all(
                        b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                    )
                    .await;
                continue;
            }
            let params: HashMap<String, String> = url::form_urlencoded::parse(query.as_bytes())
                .into_owned()
                .collect();
            let checked = check(&params);
            let page = match &checked {
                Ok(_) => "mws: login received. You can close this tab.".to_string(),
                Err(e) => format!("mws: this login was NOT accepted: {e}.\nSee the terminal."),
            };
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\n\
                 X-Content-Type-Options: nosniff\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
            return checked;
        }
        Err(AuthError::Redirect(
            "never came: too many other requests reached the loopback listener".into(),
        ))
    }
}

#[cfg(test)]
#[path = "loopback_tests.rs"]
mod tests;
