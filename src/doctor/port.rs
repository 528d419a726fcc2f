//! Is the listen port free, or is mws already serving there? A TCP connect, and when something
//! answers, an MCP request that a running mws answers with its serverInfo name. The stateless
//! `server/discover` is asked first because it leaves no session behind.

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::{Duration, Instant};

use super::Check;
use crate::config::Config;
use crate::mcp;

/// The serverInfo name a running mws gives.
pub const MWS_SERVER_INFO_NAME: &str = "mcp-working-set";

/// How long a connect to the loopback port may take. Loopback answers at once; raising it only
/// slows the check when the port is filtered.
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);

/// How long whatever holds the port gets to answer an MCP request. Raising it helps a slow
/// program be recognised; it also slows `mws doctor` when the program never answers.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(2);

/// Most bytes of an answer read while looking for the serverInfo name.
const MAX_ANSWER: usize = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortState {
    /// Nothing listens.
    Free,
    /// mws answers there.
    Mws,
    /// Something else holds it; what it said (an HTTP status line) or that it said nothing.
    Other(String),
}

/// Looks at `host:port`.
pub fn probe_port(host: &str, port: u16) -> PortState {
    let addr = match (host.trim_matches(|c| c == '[' || c == ']'), port)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
    {
        Some(a) => a,
        None => return PortState::Other(format!("{host} does not resolve")),
    };
    // The first request goes over this connection, so a program that accepts one connection
    // only is still asked.
    let mut first = match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
        Ok(s) => Some(s),
        Err(_) => return PortState::Free,
    };
    let host_header = if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    let discover = mcp::request(
        &"mws-doctor".into(),
        "server/discover",
        serde_json::json!({"_meta": {
            mcp::META_PROTOCOL_VERSION: mcp::MODERN_VERSION,
            mcp::META_CLIENT_INFO: {"name": "mws-doctor", "version": env!("CARGO_PKG_VERSION")},
            mcp::META_CLIENT_CAPABILITIES: {},
        }}),
    );
    let initialize = mcp::request(
        &"mws-doctor".into(),
        "initialize",
        serde_json::json!({
            "protocolVersion": mcp::LEGACY_VERSIONS[0],
            "capabilities": {},
            "clientInfo": {"name": "mws-doctor", "version": env!("CARGO_PKG_VERSION")},
        }),
    );
    let mut first_answer = None;
    for (body, version, method) in [
        (&discover, mcp::MODERN_VERSION, "server/discover"),
        (&initialize, mcp::LEGACY_VERSIONS[0], "initialize"),
    ] {
        let extra = format!("MCP-Protocol-Version: {version}\r\nMcp-Method: {method}\r\n");
        let stream = match first.take() {
            Some(s) => Some(s),
            None => TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT).ok(),
        };
        match stream.and_then(|s| exchange(s, &host_header, "POST", &extra, &body.to_string())) {
            Some(answer) => {
                if answer.contains(&format!("\"{MWS_SERVER_INFO_NAME}\"")) {
                    if let Some(session) = header(&answer, "mcp-session-id") {
                        let extra = format!("Mcp-Session-Id: {session}\r\n");
                        if let Ok(s) = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
                            let _ = exchange(s, &host_header, "DELETE", &extra, "");
                        }
                    }
                    return PortState::Mws;
                }
                first_answer
                    .get_or_insert_with(|| answer.lines().next().unwrap_or("").trim().to_string());
            }
            None => break,
        }
    }
    PortState::Other(match first_answer {
        Some(line) if line.starts_with("HTTP/") => format!("it answered: {line}"),
        _ => "it gave no HTTP answer".into(),
    })
}

/// One HTTP/1.0 request (so the answer is never chunked and ends when the connection closes);
/// the answer's text, or `None` when nothing came back in time.
fn exchange(
    mut s: TcpStream,
    host: &str,
    method: &str,
    extra_headers: &str,
    body: &str,
) -> Option<String> {
    let deadline = Instant::now() + ANSWER_TIMEOUT;
    s.set_write_timeout(Some(ANSWER_TIMEOUT)).ok()?;
    let req = format!(
        "{method} /mcp HTTP/1.0\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{extra_headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).ok()?;
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    while buf.len() < MAX_ANSWER {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || s.set_read_timeout(Some(left)).is_err() {
            break;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        // An SSE answer may stay open after its one event: stop once the name is in.
        if String::from_utf8_lossy(&buf).contains(MWS_SERVER_INFO_NAME) {
            break;
        }
    }
    (!buf.is_empty()).then(|| String::from_utf8_lossy(&buf).into_owned())
}

/// A response header's value (case-insensitive name).
fn header(answer: &str, name: &str) -> Option<String> {
    answer.split("\r\n\r\n").next()?.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.trim()
            .eq_ignore_ascii_case(name)
            .then(|| v.trim().to_string())
    })
}

/// The `port` check of `mws doctor`.
pub fn check(config: &Config, config_path: &Path) -> Check {
    let host = &config.listen.host;
    let port = config.listen.port;
    let at = format!("{host}:{port}");
    match probe_port(host, port) {
        PortState::Free => Check::ok(
            "port",
            format!("{at} is free: `mws serve` can listen there"),
        ),
        PortState::Mws => Check::ok("port", format!("{at}: mws is already serving there")),
        PortState::Other(what) => Check::fail(
            "port",
            format!("{at} is in use by another program ({what})"),
            format!(
                "stop that program, or set \"listen\": {{\"port\": ...}} in {} to a free port (and \
                 register that port with your clients)",
                config_path.display()
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_headers() {
        let a = "HTTP/1.1 200 OK\r\nMcp-Session-Id: abc\r\ncontent-type: application/json\r\n\r\n{\"x\":\"Mcp-Session-Id: no\"}";
        assert_eq!(header(a, "mcp-session-id").as_deref(), Some("abc"));
        assert_eq!(header(a, "x-none"), None);
    }
}
