//! Legacy sessions of the real `mws serve --demo` under a careless or hostile client: a full
//! session table, DELETE with the session's GET stream open, and huge client names.

use std::time::{Duration, Instant};

use super::hostile::{demo, init_body, message};

/// Sends an `initialize`; returns the status, the session id and the body.
async fn initialize(http: &reqwest::Client, url: &str, name: &str) -> (u16, String, String) {
    let r = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(init_body("1", name))
        .send()
        .await
        .unwrap();
    let status = r.status().as_u16();
    let sid = r
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, sid, r.text().await.unwrap())
}

async fn ping(http: &reqwest::Client, url: &str, sid: &str) -> u16 {
    http.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-session-id", sid)
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#)
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_session_table_refuses_newcomers_and_keeps_live_sessions() {
    use futures_util::StreamExt;
    let s = demo();
    let http = reqwest::Client::new();
    let (status, live, _) = initialize(&http, &s.url, "live-client").await;
    assert_eq!(status, 200);
    let max = mws::server::relay::sessions::MAX_SESSIONS;
    let statuses: Vec<u16> = futures_util::stream::iter(0..max)
        .map(|i| {
            let (http, url) = (http.clone(), s.url.clone());
            async move { initialize(&http, &url, &format!("c{i}")).await.0 }
        })
        .buffer_unordered(8)
        .collect()
        .await;
    assert_eq!(statuses.iter().filter(|s| **s == 200).count(), max - 1);
    assert_eq!(statuses.iter().filter(|s| **s == 503).count(), 1);
    assert_eq!(
        ping(&http, &s.url, &live).await,
        200,
        "the live session was evicted"
    );
    let (status, _, text) = initialize(&http, &s.url, "late").await;
    assert_eq!(status, 503, "{text}");
    assert!(
        message(&text).contains("too many sessions: all 4096 are in use"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delete_ends_the_sessions_get_stream() {
    let s = demo();
    let http = reqwest::Client::new();
    let (_, sid, _) = initialize(&http, &s.url, "c").await;
    let mut stream = http
        .get(&s.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    let r = http
        .delete(&s.url)
        .header("mcp-session-id", &sid)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    // The stream ends (keep-alives every 15 s would keep it open past this bound).
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.chunk()).await {
            Ok(Ok(None)) | Ok(Err(_)) => break,
            Ok(Ok(Some(_))) => continue,
            Err(_) => panic!("the GET stream stayed open after DELETE"),
        }
    }
}

fn rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_client_names_are_not_kept_per_session() {
    let s = demo();
    let http = reqwest::Client::new();
    let before = rss_kb(s.child.0.id());
    let name = "n".repeat(2 << 20);
    for _ in 0..100 {
        let (status, sid, text) = initialize(&http, &s.url, &name).await;
        assert_eq!(status, 200, "{text:.200}");
        assert_eq!(ping(&http, &s.url, &sid).await, 200);
    }
    let grown_mb = rss_kb(s.child.0.id()).saturating_sub(before) / 1024;
    assert!(
        grown_mb < 100,
        "100 sessions with 2 MB client names grew RSS by {grown_mb} MB"
    );
}
