//! The HTTP wire (Streamable HTTP, both eras): POSTs one message, reads a JSON or SSE answer,
//! keeps the legacy `Mcp-Session-Id`, spots an expired session, and keeps the notification
//! stream open (legacy GET, modern `subscriptions/listen`). Must not decide eras or retry.

use std::sync::Mutex;
use std::time::Duration;

use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use super::redact;
use super::resume::Resume;
use super::wire::{
    OnNotification, Outgoing, Wire, WireError, answer_server_request, is_response_to,
};
use crate::config::HttpUpstream;
use crate::mcp::envelope::{
    HEADER_METHOD, HEADER_NAME, HEADER_PROTOCOL_VERSION, HEADER_SESSION_ID, encode_header_value,
};
use crate::mcp::sse;

mod auth;
mod body;

const ACCEPT_BOTH: &str = "application/json, text/event-stream";
const LAST_EVENT_ID: &str = "last-event-id";
/// Pause before reopening a notification stream that ended; raising it delays `list_changed`
/// after an upstream restart, lowering it reconnects a flapping upstream more often.
const LISTEN_RECONNECT: Duration = Duration::from_secs(2);
/// Times a notification stream is reopened after it ends before we give up until the next
/// negotiation.
const LISTEN_ATTEMPTS: u32 = 30;

pub struct HttpWire {
    cfg: HttpUpstream,
    /// `cfg.url` as it may be shown (`redact::url`).
    shown: String,
    /// `cfg.url` parsed once: reqwest would parse (and IDNA-map) the string on every request.
    url: Option<reqwest::Url>,
    client: reqwest::Client,
    session: Mutex<Option<String>>,
    listener: Mutex<Option<tokio::task::JoinHandle<()>>>,
    on_note: OnNotification,
    /// The stored OAuth token and what to do on 401/403; `None` in tests of the bare wire.
    auth: Option<auth::Auth>,
}

/// One HTTP client for every wire of the process: building one loads the TLS roots (a few ms),
/// which ten servers would pay ten times at startup; connections are pooled per host anyway.
fn shared_client() -> reqwest::Client {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    CLIENT.get_or_init(reqwest::Client::new).clone()
}

impl HttpWire {
    pub fn new(cfg: HttpUpstream, on_note: OnNotification) -> HttpWire {
        HttpWire {
            url: reqwest::Url::parse(&cfg.url).ok(),
            shown: redact::url(&cfg.url),
            cfg,
            client: shared_client(),
            session: Mutex::new(None),
            listener: Mutex::new(None),
            on_note,
            auth: None,
        }
    }

    /// Sends the token stored in `dir` (`auth::store`) and handles 401/403 (`auth.rs`).
    /// `login` names the server in "run `mws login <login>`".
    pub fn with_tokens(mut self, dir: std::path::PathBuf, login: &str) -> HttpWire {
        let oauth = self.cfg.oauth.clone();
        self.auth = Some(auth::Auth::new(dir, &self.cfg.url, oauth, login));
        self
    }

    fn session(&self) -> Option<String> {
        self.session.lock().unwrap().clone()
    }

    /// The configured headers with `${VAR}` expanded, plus the request-metadata headers.
    fn headers(
        &self,
        out: Option<&Outgoing<'_>>,
        version: Option<&str>,
    ) -> Result<HeaderMap, WireError> {
        let mut h = build_headers(&self.cfg, out, version, self.session().as_deref())?;
        if let Some(a) = &self.auth {
            a.add(&mut h);
        }
        Ok(h)
    }

    async fn post(&self, body: &Value, headers: HeaderMap) -> Result<reqwest::Response, WireError> {
        let req = match &self.url {
            Some(url) => self.client.post(url.clone()),
            // Unparsable: let reqwest say why when it is sent.
            None => self.client.post(&self.cfg.url),
        };
        req.headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_BOTH)
            .body(serde_json::to_vec(body).unwrap_or_default())
            .send()
            .await
            .map_err(|e| WireError::Down(format!("{}: {}", self.shown, body::describe(e))))
    }

    /// Answers a request the upstream put on a stream (fire and forget).
    fn answer(&self, msg: &Value, version: Option<&str>) {
        let Some(reply) = answer_server_request(msg) else {
            return;
        };
        let Ok(headers) = self.headers(None, version) else {
            return;
        };
        let req = self
            .client
            .post(&self.cfg.url)
            .headers(headers)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, ACCEPT_BOTH)
            .body(reply.to_string());
        tokio::spawn(async move {
            let _ = req.send().await;
        });
    }

    /// Reconnects to a legacy request's answer stream with GET + `Last-Event-ID` (`resume.rs`);
    /// `Err` says why not.
    async fn resume_stream(
        &self,
        out: &Outgoing<'_>,
        last_id: &str,
    ) -> Result<reqwest::Response, String> {
        let mut headers = self.headers(None, out.version).map_err(|e| e.to_string())?;
        let id = HeaderValue::try_from(last_id).map_err(|_| "a bad event id".to_string())?;
        headers.insert(LAST_EVENT_ID, id);
        let resp = self
            .client
            .get(&self.cfg.url)
            .headers(headers)
            .header(ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(body::describe)?;
        if !resp.status().is_success() || !is_sse(&resp) {
            return Err(format!("GET answered HTTP {}", resp.status().as_u16()));
        }
        Ok(resp)
    }

    /// Routes a message that came on a request's answer stream before its response.
    fn route(&self, msg: &Value, version: Option<&str>) {
        if msg.get("method").is_some() {
            if msg.get("id").is_some() {
                self.answer(msg, version);
            } else if !super::related::deliver(msg) {
                (self.on_note)(msg);
            }
        }
    }
}

pub(crate) fn build_headers(
    cfg: &HttpUpstream,
    out: Option<&Outgoing<'_>>,
    version: Option<&str>,
    session: Option<&str>,
) -> Result<HeaderMap, WireError> {
    let mut h = HeaderMap::new();
    for (k, v) in &cfg.headers {
        let v = crate::config::servers::expand_text(v, &|n| std::env::var(n).ok())
            .map_err(|e| WireError::Config(format!("config header {k}: {e}")))?;
        let name = HeaderName::try_from(k.as_str()).map_err(|_| {
            WireError::Config(format!("config header name {k:?} is not valid in HTTP"))
        })?;
        let value = HeaderValue::try_from(v).map_err(|_| {
            WireError::Config(format!("config header {k}: its value is not valid in HTTP"))
        })?;
        h.insert(name, value);
    }
    let mut set = |name: &'static str, v: &str| {
        if let Ok(v) = HeaderValue::try_from(encode_header_value(v).as_ref()) {
            h.insert(name, v);
        }
    };
    if let Some(v) = version {
        set(HEADER_PROTOCOL_VERSION, v);
    }
    if let Some(s) = session {
        set(HEADER_SESSION_ID, s);
    }
    if let Some(o) = out.filter(|o| o.modern) {
        set(HEADER_METHOD, o.method);
        if let Some(n) = o.name {
            set(HEADER_NAME, n);
        }
        for (k, v) in o.params {
            if let (Ok(k), Ok(v)) = (
                HeaderName::try_from(k.as_str()),
                HeaderValue::try_from(v.as_str()),
            ) {
                h.insert(k, v);
            }
        }
    }
    Ok(h)
}

fn is_sse(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"))
}

#[async_trait::async_trait]
impl Wire for HttpWire {
    async fn connect(&self) -> Result<u64, WireError> {
        Ok(0)
    }

    async fn request(&self, out: Outgoing<'_>) -> Result<(u16, Value), WireError> {
        let sent_session = self.session();
        let mut tries = 0;
        let resp = loop {
            if let Some(a) = &self.auth {
                a.before().await?;
            }
            let sent = self.auth.as_ref().and_then(auth::Auth::current);
            let resp = self
                .post(out.msg, self.headers(Some(&out), out.version)?)
                .await?;
            let (Some(a), status) = (&self.auth, resp.status().as_u16()) else {
                break resp;
            };
            tries += 1;
            match a.after(status, resp.headers(), sent.as_deref()).await? {
                auth::After::Retry if tries < auth::MAX_TRIES => continue,
                auth::After::Retry => return Err(a.gave_up()),
                auth::After::Keep => break resp,
            }
        };
        let status = resp.status().as_u16();
        if out.method == "initialize"
            && let Some(sid) = resp
                .headers()
                .get(HEADER_SESSION_ID)
                .and_then(|v| v.to_str().ok())
        {
            *self.session.lock().unwrap() = Some(sid.to_string());
        }
        let id = out.msg.get("id").cloned().unwrap_or(Value::Null);
        if is_sse(&resp) && (200..300).contains(&status) {
            let mut resp = resp;
            let mut resume = Resume::default();
            loop {
                let mut dec = sse::Decoder::new();
                let mut body = resp.bytes_stream();
                let mut cut = None;
                while let Some(chunk) = body.next().await {
                    let chunk = match chunk {
                        Ok(c) => c,
                        Err(e) => {
                            cut = Some(WireError::Down(body::describe(e)));
                            break;
                        }
                    };
                    let events = dec.feed(&chunk);
                    let cap = crate::upstream::MAX_MESSAGE_BYTES;
                    if dec.buffered() > cap || events.iter().any(|e| e.data.len() > cap) {
                        return Err(body::too_large(out.method, "event"));
                    }
                    for ev in events {
                        let Some(msg) = body::event(&ev.data, &id, out.method)? else {
                            continue;
                        };
                        if is_response_to(&msg, &id) {
                            return Ok((status, msg));
                        }
                        self.route(&msg, out.version);
                    }
                }
                resume.ended(&dec);
                let ended = || {
                    cut.clone().unwrap_or_else(|| {
                        WireError::Protocol(format!(
                            "{} {}: the event stream ended before the response",
                            out.method, self.shown
                        ))
                    })
                };
                let Some((last_id, wait)) = resume.next().filter(|_| !out.modern) else {
                    return Err(ended());
                };
                tokio::time::sleep(wait).await;
                resp = self.resume_stream(&out, &last_id).await.map_err(|why| {
                    WireError::Protocol(format!("{}, and resuming it failed: {why}", ended()))
                })?;
            }
        }
        let bytes = body::read(resp, out.method).await?;
        let parsed = body::answer(&bytes, out.method)?;
        let rpc = parsed.filter(|m| m.get("error").is_some() || m.get("result").is_some());
        if sent_session.is_some() {
            // 404 is the spec's answer for a dead session; some servers (TS SDK 1.x) say 400
            // with an error that names no request id.
            let anonymous = rpc
                .as_ref()
                .is_none_or(|m| m.get("id").is_none_or(Value::is_null));
            if status == 404 || (status == 400 && anonymous) {
                *self.session.lock().unwrap() = None;
                return Err(WireError::SessionExpired);
            }
        }
        match rpc {
            Some(m) => Ok((status, m)),
            None => Err(WireError::Status(
                status,
                String::from_utf8_lossy(&bytes).chars().take(200).collect(),
            )),
        }
    }

    async fn notify(&self, out: Outgoing<'_>) -> Result<(), WireError> {
        let resp = self
            .post(out.msg, self.headers(Some(&out), out.version)?)
            .await?;
        let status = resp.status().as_u16();
        if (200..300).contains(&status) {
            Ok(())
        } else if status == 404 && self.session().is_some() {
            Err(WireError::SessionExpired)
        } else {
            Err(WireError::Status(
                status,
                format!("{} was refused", out.method),
            ))
        }
    }

    async fn reset(&self, _restart: bool) {
        if let Some(h) = self.listener.lock().unwrap().take() {
            h.abort();
        }
        *self.session.lock().unwrap() = None;
    }

    fn listen(&self, listen: Option<Value>, version: &str) {
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let client = self.client.clone();
        let url = self.cfg.url.clone();
        let on_note = self.on_note.clone();
        let Ok(headers) = self.headers(None, Some(version)) else {
            return;
        };
        // The stream this one replaces (another filter) runs until this one is acknowledged, so
        // that nothing sent meanwhile is missed; it is ended with this one.
        let old = self.listener.lock().unwrap().take().map(AbortOnDrop);
        let task = handle.spawn(async move {
            let mut old = old;
            for _ in 0..LISTEN_ATTEMPTS {
                let req = match &listen {
                    Some(body) => {
                        let mut h = headers.clone();
                        h.insert(HEADER_METHOD, HeaderValue::from_static("subscriptions/listen"));
                        client.post(&url).headers(h).header(CONTENT_TYPE, "application/json").header(ACCEPT, ACCEPT_BOTH).body(body.to_string())
                    }
                    None => client.get(&url).headers(headers.clone()).header(ACCEPT, "text/event-stream"),
                };
                let Ok(resp) = req.send().await else { break };
                if !resp.status().is_success() || !is_sse(&resp) {
                    // 405: the server offers no stream; nothing to listen to.
                    tracing::debug!(status = %resp.status(), "upstream offers no notification stream");
                    break;
                }
                if listen.is_none() {
                    old = None;
                }
                let mut dec = sse::Decoder::new();
                let mut body = resp.bytes_stream();
                while let Some(Ok(chunk)) = body.next().await {
                    let events = dec.feed(&chunk);
                    let cap = crate::upstream::MAX_MESSAGE_BYTES;
                    if dec.buffered() > cap || events.iter().any(|e| e.data.len() > cap) {
                        tracing::warn!(
                            "an event on the upstream's notification stream is larger than {}, the cap on one upstream message; reopening the stream",
                            super::cap_text()
                        );
                        break;
                    }
                    for ev in events {
                        old = None; // the first event is the acknowledgement
                        if let Ok(msg) = serde_json::from_str::<Value>(&ev.data)
                            && super::wire::is_notification(&msg)
                        {
                            on_note(&msg);
                        }
                    }
                }
                tokio::time::sleep(LISTEN_RECONNECT).await;
            }
            // This stream could not open: the one it was to replace carries on.
            if let Some(AbortOnDrop(h)) = old.as_mut() {
                let _ = h.await;
            }
        });
        if let Some(other) = self.listener.lock().unwrap().replace(task) {
            other.abort();
        }
    }

    fn probe_failure_means_legacy(&self) -> bool {
        false
    }

    fn carries_call_logs(&self) -> bool {
        true
    }

    fn closing_cancels(&self, modern: bool) -> bool {
        modern
    }
}

/// A listen task that ends when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Drop for HttpWire {
    fn drop(&mut self) {
        if let Some(h) = self.listener.get_mut().unwrap().take() {
            h.abort();
        }
    }
}
