//! The one-shot redirect listener of a login: 127.0.0.1 on a random port, waits for one
//! `GET /callback?...`, answers the browser with a short page and hands back the query. Must not
//! listen on anything but loopback, nor log the query (it holds the authorization code).

use std::collections::HashMap;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::AuthError;

/// Longest request head read from the browser.
const MAX_HEAD: usize = 16 * 1024;
/// Connections accepted before giving up on a stray client that never sends the callback.
const MAX_CONNECTIONS: usize = 32;
const PATH: &str = "/callback";

pub struct Listener {
    inner: TcpListener,
    pub redirect_uri: String,
}

/// Binds 127.0.0.1 on a port the OS picks.
pub async fn bind() -> Result<Listener, AuthError> {
    let inner = TcpListener::bind(("127.0.0.1", 0)).await.map_err(|e| {
        AuthError::Other(format!("cannot listen on 127.0.0.1 for the redirect: {e}"))
    })?;
    let port = inner.local_addr().map(|a| a.port()).unwrap_or_default();
    Ok(Listener {
        inner,
        redirect_uri: format!("http://127.0.0.1:{port}{PATH}"),
    })
}

impl Listener {
    /// The callback's query parameters, or `Timeout` after `wait`.
    pub async fn wait(self, wait: Duration) -> Result<HashMap<String, String>, AuthError> {
        tokio::time::timeout(wait, self.accept())
            .await
            .map_err(|_| AuthError::Timeout(wait.as_secs()))?
    }

    async fn accept(self) -> Result<HashMap<String, String>, AuthError> {
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
            if path != PATH {
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
            let page = if params.contains_key("code") {
                "mws: login received. You can close this tab."
            } else {
                "mws: the login did not complete. See the terminal."
            };
            let reply = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
                page.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
            return Ok(params);
        }
        Err(AuthError::Redirect(
            "never came: too many other requests reached the loopback listener".into(),
        ))
    }
}
