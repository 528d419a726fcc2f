//! What a hostile or careless HTTP client sends to the real `mws serve --demo`: ids of every JSON
//! type, wrong content types, duplicate and malformed `Host`/`Origin`, absolute-form targets,
//! trickled headers and bodies, and the messages for a numeric `protocolVersion` or a missing
//! `method`. Sessions under the same treatment are in `sessions.rs`.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::serve::{self, Served};

/// How long a raw request may take to be answered before the test fails.
const ANSWER: Duration = Duration::from_secs(20);

pub(super) fn demo() -> Served {
    let dir = tempfile::tempdir().unwrap();
    serve::start_in(dir, &json!({}), &["--demo"])
}

pub(super) fn addr(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string()
}

/// Sends `head` (request line and headers, `\r\n` separated, without the blank line) and `body`
/// over a raw socket with `Connection: close`; returns the status and the body text.
async fn raw(url: &str, head: &str, body: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr(url)).await.unwrap();
    let req = format!(
        "{head}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let read = tokio::time::timeout(ANSWER, s.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "no answer to {head:?} within {ANSWER:?}");
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_string();
    (status, body)
}

fn modern_body(id: &str, method: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{{"name":"hostile","version":"1"}},"io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    )
}

fn modern_head(host: &str, method: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}"
    )
}

fn legacy_head(host: &str) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream"
    )
}

pub(super) fn init_body(id: &str, name: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"{name}","version":"1"}}}}}}"#
    )
}

/// The message of a JSON-RPC error reply.
pub(super) fn message(body: &str) -> String {
    let v: Value = serde_json::from_str(body).unwrap_or_else(|_| panic!("not JSON: {body:?}"));
    v["error"]["message"].as_str().unwrap_or("").to_string()
}

const BAD_IDS: &[(&str, &str)] = &[
    ("{\"a\":1}", "an object"),
    ("[1]", "an array"),
    ("true", "a boolean"),
    ("1.5", "a fraction"),
    ("1e3", "a fraction"),
    ("null", "null"),
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ids_of_every_type_are_checked_and_valid_ones_echoed_exactly() {
    let s = demo();
    let host = addr(&s.url);
    for (id, what) in BAD_IDS {
        for (head, body) in [
            (
                modern_head(&host, "tools/list"),
                modern_body(id, "tools/list"),
            ),
            (legacy_head(&host), init_body(id, "c")),
        ] {
            let (status, text) = raw(&s.url, &head, &body).await;
            assert_eq!(status, 400, "id {id}: {text}");
            let v: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(v["id"], Value::Null, "{text}");
            assert_eq!(v["error"]["code"], -32600, "{text}");
            let m = message(&text);
            assert!(
                m.contains("the request id must be a string or an integer") && m.contains(what),
                "id {id}: {m}"
            );
        }
    }
    for id in [
        "123456789012345678901234567890",
        "-98765432109876543210",
        "7",
        "\"a\\u00e9\"",
    ] {
        let (status, text) = raw(
            &s.url,
            &modern_head(&host, "tools/list"),
            &modern_body(id, "tools/list"),
        )
        .await;
        assert_eq!(status, 200, "{text}");
        let want = if id.starts_with('"') {
            "\"id\":\"a\u{e9}\"".to_string()
        } else {
            format!("\"id\":{id}")
        };
        assert!(text.contains(&want), "id {id} not echoed: {text:.200}");
        let (status, text) = raw(&s.url, &legacy_head(&host), &init_body(id, "c")).await;
        assert_eq!(status, 200, "{text}");
        assert!(
            text.contains(&want),
            "legacy id {id} not echoed: {text:.200}"
        );
    }

    // --stdio: the same rules, one reply line each.
    let dir = tempfile::tempdir().unwrap();
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_mws"))
        .args(["serve", "--demo", "--stdio", "--state-dir"])
        .arg(dir.path().join("state"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let big = "123456789012345678901234567890";
    let mut lines: Vec<String> = BAD_IDS.iter().map(|(id, _)| init_body(id, "c")).collect();
    lines.push(init_body(big, "c"));
    lines.push(r#"{"jsonrpc":"2.0","id":-98765432109876543210,"method":"ping"}"#.into());
    stdin
        .write_all((lines.join("\n") + "\n").as_bytes())
        .await
        .unwrap();
    drop(stdin);
    let mut out = String::new();
    let mut stdout = child.stdout.take().unwrap();
    let read = tokio::time::timeout(ANSWER, stdout.read_to_string(&mut out)).await;
    assert!(read.is_ok(), "mws --stdio did not answer: {out}");
    for (_, what) in BAD_IDS {
        assert!(
            out.lines().any(|l| l.contains("\"id\":null")
                && l.contains("-32600")
                && l.contains("the request id must be a string or an integer")
                && l.contains(what)),
            "no -32600 for {what}: {out}"
        );
    }
    assert!(out.contains(&format!("\"id\":{big}")), "{out}");
    assert!(out.contains("\"id\":-98765432109876543210"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_needs_a_json_content_type() {
    let s = demo();
    let host = addr(&s.url);
    let body = modern_body("1", "tools/list");
    let base = "POST /mcp HTTP/1.1\r\nHost: HOST\r\nMCP-Protocol-Version: 2026-07-28\r\n\
                Mcp-Method: tools/list"
        .replace("HOST", &host);
    for ct in [
        Some("text/plain"),
        Some("application/x-www-form-urlencoded"),
        Some("multipart/form-data; boundary=x"),
        Some("application/jsonx"),
        None,
    ] {
        let head = match ct {
            Some(ct) => format!("{base}\r\nContent-Type: {ct}"),
            None => base.clone(),
        };
        let (status, text) = raw(&s.url, &head, &body).await;
        assert_eq!(status, 415, "{ct:?}: {text}");
        assert!(
            message(&text).contains(
                "unsupported media type: a POST to /mcp needs Content-Type: application/json"
            ),
            "{text}"
        );
    }
    let head = format!("{base}\r\nContent-Type: Application/JSON; charset=utf-8");
    let (status, text) = raw(&s.url, &head, &body).await;
    assert_eq!(status, 200, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duplicate_or_malformed_host_and_origin_are_refused() {
    let s = demo();
    let host = addr(&s.url);
    let body = modern_body("1", "tools/list");
    let head = modern_head(&host, "tools/list");
    let cases = [
        (
            format!("{head}\r\nHost: evil.example.com"),
            400,
            "more than one Host header",
        ),
        (
            format!("{head}\r\nOrigin: http://127.0.0.1\r\nOrigin: http://evil.example.com"),
            400,
            "more than one Origin header",
        ),
        (
            modern_head("", "tools/list"),
            403,
            "forbidden: the Host header is empty",
        ),
        (
            modern_head("[::1", "tools/list"),
            403,
            "forbidden: Host '[::1' is not loopback",
        ),
        (
            head.replacen("POST /mcp", "POST http://evil.example.com/mcp", 1),
            403,
            "forbidden: the request target 'evil.example.com' is not loopback",
        ),
    ];
    for (head, status, want) in cases {
        let (got, text) = raw(&s.url, &head, &body).await;
        assert_eq!(got, status, "{head:?}: {text}");
        assert!(message(&text).contains(want), "{head:?}: {text}");
    }
    let (got, text) = raw(&s.url, &head, &body).await;
    assert_eq!(got, 200, "{text}");
}

/// How long the server may hold a connection that trickles its headers or body (its limit plus
/// slack).
const TRICKLE_BOUND: Duration = Duration::from_secs(25);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trickled_headers_and_bodies_are_cut_off() {
    let s = demo();
    let host = addr(&s.url);
    // Headers: a byte a second, never finished.
    let mut sock = tokio::net::TcpStream::connect(&host).await.unwrap();
    let head = modern_head(&host, "tools/list");
    let start = Instant::now();
    let mut closed = false;
    for b in head.bytes().cycle() {
        if sock.write_all(&[b]).await.is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 512];
        match tokio::time::timeout(Duration::from_millis(500), sock.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => {
                closed = true;
                break;
            }
            _ => {}
        }
        if start.elapsed() > TRICKLE_BOUND {
            break;
        }
    }
    assert!(
        closed,
        "a connection trickling its headers was held for {TRICKLE_BOUND:?}"
    );

    // Body: headers whole, then 10 of the 1000 bytes announced.
    let mut sock = tokio::net::TcpStream::connect(&host).await.unwrap();
    let req = format!("{head}\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"");
    sock.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let read = tokio::time::timeout(TRICKLE_BOUND, sock.read_to_end(&mut out)).await;
    assert!(
        read.is_ok(),
        "a request whose body stalled was held for {TRICKLE_BOUND:?}"
    );
    let text = String::from_utf8_lossy(&out);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("request body not received within"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protocol_messages_say_what_is_wrong() {
    let s = demo();
    let host = addr(&s.url);
    let numeric = modern_body("1", "tools/list").replace("\"2026-07-28\"", "20260728");
    let (status, text) = raw(&s.url, &modern_head(&host, "tools/list"), &numeric).await;
    assert_eq!(status, 400, "{text}");
    assert_eq!(
        message(&text),
        "invalid params: params._meta[\"io.modelcontextprotocol/protocolVersion\"] must be a \
         string, not a number"
    );
    let no_method = modern_body("1", "x").replace(",\"method\":\"x\"", "");
    let (status, text) = raw(&s.url, &modern_head(&host, "tools/list"), &no_method).await;
    assert_eq!(status, 400, "{text}");
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["error"]["code"], -32600, "{text}");
    assert_eq!(
        message(&text),
        "invalid request: the method is missing (a request needs \"method\")"
    );
}
