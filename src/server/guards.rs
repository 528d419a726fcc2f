//! The HTTP guards in front of `/mcp`: `Host` and `Origin` must name loopback (DNS-rebinding
//! protection, 403 otherwise), and the listener may only bind a loopback address. Pure checks plus
//! one axum middleware. Must not look at the body.

use std::net::{IpAddr, Ipv4Addr};

use axum::extract::Request;
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::mcp::{self, code};

/// Largest request body in bytes (413 above it). Raising it lets clients send larger tool
/// arguments, at the cost of that much memory per request in flight.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

const LOOPBACK_NAMES: &[&str] = &["localhost", "127.0.0.1", "::1", "[::1]"];

/// `host[:port]` (IPv6 in brackets) without the port.
fn strip_port(authority: &str) -> &str {
    if let Some(rest) = authority.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match authority.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => authority,
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
    is_loopback_name(strip_port(host.trim()))
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

fn forbidden(what: &str) -> Response {
    let body = mcp::error_response(&serde_json::Value::Null, code::INVALID_REQUEST, what, None);
    (
        StatusCode::FORBIDDEN,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// Middleware: 403 unless `Host` is loopback and `Origin`, when present, is loopback too.
pub async fn guard(req: Request, next: Next) -> Response {
    let headers = req.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(String::from)
        .or_else(|| req.uri().authority().map(|a| a.to_string()));
    match host {
        Some(h) if host_ok(&h) => {}
        Some(h) => return forbidden(&format!("forbidden: Host '{h}' is not loopback")),
        None => return forbidden("forbidden: no Host header"),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let o = origin.to_str().unwrap_or("");
        if !origin_ok(o) {
            return forbidden(&format!("forbidden: Origin '{o}' is not loopback"));
        }
    }
    next.run(req).await
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
