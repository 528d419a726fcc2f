//! The proxy's HTTP request handling on arbitrary requests: method, headers and body from the
//! input, sent through the real `/mcp` router (guards, era detection, legacy sessions, the
//! handler) in front of an in-memory upstream. Never panics, always answers, and holds these
//! invariants: a duplicate `Host` or `Origin` gets 400; an absolute-form target naming another
//! host gets 403; a POST answered 2xx declared `Content-Type: application/json` and carried an
//! id that is absent, a string or an integer; a JSON reply's id is null, a string or an integer
//! (a big one as written); no 5xx but 503 (a full session table).
//!
//! Input layout: byte 0 picks the method (`% 6`), bit 0x80 drops the default `Host`, bit 0x40
//! sends an absolute-form target naming another host; then header lines `name: value\n` up to an
//! empty line; the rest is the body.
#![no_main]

use std::sync::{Arc, OnceLock};

use axum::body::Body;
use axum::http::Request;
use libfuzzer_sys::fuzz_target;
use mws::upstream::fake::FakeUpstream;
use mws::server::{Proxy, app};
use serde_json::value::RawValue;
use serde_json::{Value, json};
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
        let ws = tokio::sync::watch::channel(Arc::new(Default::default())).1;
        let proxy = Proxy::new(fake, config, ws, None);
        // The sender must outlive the router, or every GET stream ends at once.
        let (tx, rx) = tokio::sync::watch::channel(false);
        std::mem::forget(tx);
        let router = app::router(proxy, rx);
        World { rt, router }
    })
}

/// Is a request or reply id valid: absent, a string, or an integer (any size, as written)?
fn id_ok(id: Option<&Value>, raw: Option<&RawValue>) -> bool {
    match id {
        None | Some(Value::String(_)) => true,
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => true,
        Some(Value::Number(_)) => raw.is_some_and(|r| {
            let t = r.get().trim_start_matches('-');
            !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
        }),
        Some(_) => false,
    }
}

/// The value and the raw text of a message's `id`.
fn id_of(body: &[u8]) -> Option<(Option<Value>, Option<Box<RawValue>>)> {
    #[derive(serde::Deserialize)]
    struct Id {
        id: Option<Box<RawValue>>,
    }
    let v: Value = serde_json::from_slice(body).ok()?;
    let raw = serde_json::from_slice::<Id>(body).ok().and_then(|i| i.id);
    Some((v.get("id").cloned(), raw))
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
    let absolute = m & 0x40 != 0;
    let uri = if absolute { "http://evil.example.com/mcp" } else { "/mcp" };
    let mut req = Request::builder().method(method).uri(uri);
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
    let headers = req.headers().clone();
    let dup = ["host", "origin"]
        .iter()
        .any(|h| headers.get_all(*h).iter().count() > 1);
    let json_ct = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let essence = v.split(';').next().unwrap_or("").trim();
            essence.eq_ignore_ascii_case("application/json")
        });
    let w = world();
    w.rt.block_on(async {
        let resp = w.router.clone().oneshot(req).await.unwrap();
        let status = resp.status().as_u16();
        assert!(status < 500 || status == 503, "status {status}");
        if dup {
            assert_eq!(status, 400, "a duplicate Host or Origin was let through");
        } else if absolute {
            assert_eq!(status, 403, "an absolute-form target naming another host");
        }
        let sse = resp
            .headers()
            .get("content-type")
            .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream"));
        // A GET may open an endless stream: only its head is checked.
        if method == "GET" {
            return;
        }
        let reply = axum::body::to_bytes(resp.into_body(), 1 << 20).await;
        if method == "POST" && (200..300).contains(&status) {
            assert!(json_ct, "a POST without a JSON content type was answered {status}");
            if let Some((id, raw)) = id_of(body) {
                assert!(id_ok(id.as_ref(), raw.as_deref()), "invalid id answered {status}");
            }
        }
        if let (Ok(reply), false) = (reply, sse)
            && let Some((id, raw)) = id_of(&reply)
        {
            let id = id.filter(|i| !i.is_null());
            assert!(id_ok(id.as_ref(), raw.as_deref()), "reply id {raw:?}");
        }
    });
});
