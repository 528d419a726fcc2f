//! The HTTP guards in front of `/mcp`: exactly one `Host`, naming loopback, and at most one
//! `Origin`, naming loopback too (DNS-rebinding protection: 403, or 400 for a duplicate), an
//! absolute-form request target naming loopback, a POST body declared `application/json` (415
//! otherwise), and a listener bound to a loopback address only. Pure checks plus one axum
//! middleware. Must not look at the body.

use std::net::{IpAddr, Ipv4Addr};

use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::mcp::{self, code};

/// Largest request body in bytes (413 above it). Raising it lets clients send larger tool
/// arguments, at the cost of that much memory per request in flight.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

const LOOPBACK_NAMES: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];

/// `host[:port]` (IPv6 in brackets) without the port; `None` when malformed (an unclosed
/// bracket, text after it other than a port).
fn strip_port(authority: &str) -> Option<&str> {
    let is_port = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
    if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        return match after.strip_prefix(':') {
            None if after.is_empty() => Some(host),
            Some(p) if is_port(p) => Some(host),
            _ => None,
        };
    }
    match authority.rsplit_once(':') {
        Some((h, p)) if is_port(p) => Some(h),
        _ => Some(authority),
    }
}

fn is_loopback_name(host: &str) -> bool {
    let host = host.trim().to_ascii_lowercase();
    if LOOPBACK_NAMES.contains(&host.as_str()) || host.ends_with(".localhost") {
        return true;
    }
    host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// A `Host` header value that names loopback, with or without a port.
pub fn host_ok(host: &str) -> bool {
    strip_port(host.trim()).is_some_and(is_loopback_name)
}

/// An `Origin` header value whose host is loopback (`http://localhost:3000`). `null` and other
/// hosts are refused.
pub fn origin_ok(origin: &str) -> bool {
    let Some((scheme, rest)) = origin.trim().split_once("://") else {
        return false;
    };
    if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https") {
        return false;
    }
    let authority = rest.split('/').next().unwrap_or("");
    host_ok(authority)
}

/// The address to bind for `listen.host`: loopback only, with a message that says why otherwise.
pub fn bind_addr(host: &str) -> Result<IpAddr, String> {
    let h = host.trim().trim_start_matches('[').trim_end_matches(']');
    if h.eq_ignore_ascii_case("localhost") {
        return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
    }
    match h.parse::<IpAddr>() {
        Ok(ip) if ip.is_loopback() => Ok(ip),
        Ok(_) | Err(_) => Err(format!(
            "listen.host '{host}' is not a loopback address: mws only listens on loopback \
             (127.0.0.1, ::1 or localhost), because anything that can reach it can run every \
             upstream tool"
        )),
    }
}

fn refuse(status: StatusCode, what: &str) -> Response {
    let body = mcp::error_response(&serde_json::Value::Null, code::INVALID_REQUEST, what, None);
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

fn forbidden(what: &str) -> Response {
    refuse(StatusCode::FORBIDDEN, what)
}

/// Is a `Content-Type` value JSON (`application/json`, any case, parameters allowed)?
pub fn is_json(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.eq_ignore_ascii_case("application/json")
}

/// Why a request's headers are refused, as the response to send; `None` when they pass.
fn refusal(req: &Request) -> Option<Response> {
    let headers = req.headers();
    for name in [header::HOST, header::ORIGIN] {
        if headers.get_all(&name).iter().nth(1).is_some() {
            let what = if name == header::HOST {
                "Host"
            } else {
                "Origin"
            };
            let m = format!("bad request: more than one {what} header; send exactly one");
            return Some(refuse(StatusCode::BAD_REQUEST, &m));
        }
    }
    match headers.get(header::HOST).map(|h| h.to_str().unwrap_or("")) {
        Some(h) if h.trim().is_empty() => {
            return Some(forbidden("forbidden: the Host header is empty"));
        }
        Some(h) if !host_ok(h) => {
            return Some(forbidden(&format!("forbidden: Host '{h}' is not loopback")));
        }
        Some(_) => {}
        None if req.uri().authority().is_none() => {
            return Some(forbidden("forbidden: no Host header"));
        }
        None => {}
    }
    // An absolute-form target (`POST http://host/mcp`) names the host a server must use.
    if let Some(a) = req.uri().authority()
        && !host_ok(a.as_str())
    {
        let m = format!("forbidden: the request target '{a}' is not loopback");
        return Some(forbidden(&m));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let o = origin.to_str().unwrap_or("");
        if !origin_ok(o) {
            return Some(forbidden(&format!(
                "forbidden: Origin '{o}' is not loopback"
            )));
        }
    }
    if req.method() == Method::POST {
        let ct = headers
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap_or("?"));
        if !ct.is_some_and(is_json) {
            let got = ct.map_or("none".to_string(), |c| format!("'{c}'"));
            let m = format!(
                "unsupported media type: a POST to /mcp needs Content-Type: application/json, got {got}"
            );
            return Some(refuse(StatusCode::UNSUPPORTED_MEDIA_TYPE, &m));
        }
    }
    None
}

/// Middleware: refuses a request whose headers fail a check above (`refusal`).
pub async fn guard(req: Request, next: Next) -> Response {
    match refusal(&req) {
        Some(resp) => resp,
        None => next.run(req).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        for (h, ok) in [
            ("127.0.0.1:4484", true),
            ("localhost", true),
            ("LOCALHOST:80", true),
            ("[::1]:4484", true),
            ("127.0.0.2", true),
            ("evil.example.com", false),
            ("evil.example.com:4484", false),
            ("10.0.0.1:4484", false),
            ("", false),
            ("[::1", false),
            ("[::1]x", false),
            ("[::1]:", false),
            ("[::1]:80", true),
        ] {
            assert_eq!(host_ok(h), ok, "host {h}");
        }
        for (o, ok) in [
            ("http://localhost:3000", true),
            ("https://127.0.0.1", true),
            ("http://[::1]:9/x", true),
            ("http://evil.example.com", false),
            ("null", false),
            ("file://localhost", false),
        ] {
            assert_eq!(origin_ok(o), ok, "origin {o}");
        }
        for (ct, ok) in [
            ("application/json", true),
            ("Application/JSON; charset=utf-8", true),
            ("application/jsonx", false),
            ("text/plain", false),
            ("multipart/form-data; boundary=x", false),
        ] {
            assert_eq!(is_json(ct), ok, "content type {ct}");
        }
    }

    #[test]
    fn bind_refuses_non_loopback() {
        assert!(bind_addr("127.0.0.1").is_ok());
        assert!(bind_addr("::1").is_ok());
        assert!(bind_addr("localhost").is_ok());
        let e = bind_addr("0.0.0.0").unwrap_err();
        assert!(e.contains("not a loopback address"), "{e}");
        assert!(bind_addr("192.168.1.5").is_err());
    }
}
