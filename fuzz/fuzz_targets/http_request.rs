//! The proxy's HTTP request handling on arbitrary requests: method, headers and body from the
//! input, sent through the real `/mcp` router (guards, era detection, legacy sessions, the
//! handler) in front of an in-memory upstream. Never panics, and always answers.
//!
//! Input layout: byte 0 picks the method; then header lines `name: value\n` up to an empty line;
//! the rest is the body.
#![no_main]

use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::http::Request;
use libfuzzer_sys::fuzz_target;
use mws::server::fake_upstream::FakeUpstream;
use mws::server::{Proxy, app};
use serde_json::json;
use tower::ServiceExt;

struct World {
    rt: tokio::runtime::Runtime,
    router: axum::Router,
}

fn world() -> &'static World {
    static W: OnceLock<World> = OnceLock::new();
    W.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let tools = vec![
            json!({"name": "mail_send_message", "description": "Send mail", "inputSchema": {"type": "object", "properties": {"to": {"type": "string", "x-mcp-header": "To"}}}}),
            json!({"name": "calendar_list_events", "description": "List events", "inputSchema": {"type": "object"}}),
        ];
        let fake = FakeUpstream::new(tools);
        let config = mws::config::Config {
            pins: vec!["mail_send_message".into()],
            ..Default::default()
        };
        let ws = tokio::sync::watch::channel(Arc::new(Vec::new())).1;
        let proxy = Proxy::new(fake, config, ws, None);
        // The sender must outlive the router, or every GET stream ends at once.
        let (tx, rx) = tokio::sync::watch::channel(false);
        std::mem::forget(tx);
        let router = app::router(proxy, rx);
        World { rt, router }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&m, rest)) = data.split_first() else {
        return;
    };
    let method = ["POST", "POST", "POST", "GET", "DELETE", "PUT"][m as usize % 6];
    let (head, body) = match rest.windows(2).position(|w| w == b"\n\n") {
        Some(i) => (&rest[..i], &rest[i + 2..]),
        None => (&[][..], rest),
    };
    let mut req = Request::builder().method(method).uri("/mcp");
    if m & 0x80 == 0 {
        req = req.header("host", "127.0.0.1:4484");
    }
    for line in head.split(|&b| b == b'\n') {
        if let Some(i) = line.iter().position(|&b| b == b':') {
            let (k, v) = (&line[..i], &line[i + 1..]);
            let v = v.strip_prefix(b" ").unwrap_or(v);
            req = req.header(k, v);
        }
    }
    let Ok(req) = req.body(Body::from(body.to_vec())) else {
        // Not a valid HTTP request (a bad header name or value): hyper would refuse it first.
        return;
    };
    let w = world();
    w.rt.block_on(async {
        let resp = w.router.clone().oneshot(req).await.unwrap();
        // A GET may open an endless stream: only its head is checked.
        if method != "GET" {
            let _ = axum::body::to_bytes(resp.into_body(), 1 << 20).await;
        }
    });
});
