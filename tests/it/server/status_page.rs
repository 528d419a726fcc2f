//! The status page as a person sees it: `mws serve --demo` after a few calls, opened in real
//! headless Chromium (Debian's `chromium`; `.ci/run` installs it). It renders the working set, the
//! calls and the charts, the page loads nothing but itself (Chromium's network log), a narrow
//! screenshot is kept under target/, and a foreign Host or Origin gets 403.
//!
//! Chromium's own background requests (component updates, account checks) are not the page's:
//! their network isolation key names another top frame site (or none), and the host-resolver rule below answers
//! every name but the loopback address NOTFOUND, so nothing leaves the machine.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::serve::{self, post_modern};

/// How long one Chromium run may take before the test fails.
const CHROMIUM_TIMEOUT: Duration = Duration::from_secs(90);
/// How long the call log may take to reach the database.
const SETTLE: Duration = Duration::from_secs(20);

/// The `chromium` on PATH; `None` (with the reason printed) when it is missing outside CI. In CI
/// (`CI=true`) a missing Chromium fails the test.
fn chromium() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join("chromium"))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "chromium is not installed: .ci/run installs Debian's chromium for this test"
        );
        eprintln!("skipped: chromium is not installed (apt-get install chromium); CI installs it");
    }
    found
}

/// Runs headless Chromium on `url` with `args`, bounded in time; returns its stdout.
fn run_chromium(bin: &Path, profile: &Path, url: &str, args: &[String]) -> String {
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--disable-gpu",
            "--no-sandbox",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start chromium");
    let deadline = Instant::now() + CHROMIUM_TIMEOUT;
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish within {CHROMIUM_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "chromium failed: {:?}", out.status);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The URL of every request Chromium started on behalf of the page (the top frame site in its
/// network isolation key is the page's, `site`), from a `--log-net-log` file.
fn page_requests(net_log: &Path, site: &str) -> Vec<String> {
    let log: Value = serde_json::from_slice(&std::fs::read(net_log).unwrap()).unwrap();
    let start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
        .as_i64()
        .expect("URL_REQUEST_START_JOB in the net log's constants");
    log["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"].as_i64() == Some(start))
        .filter(|e| {
            let nik = e["params"]["network_isolation_key"].as_str().unwrap_or("");
            nik.split(' ').next() == Some(site)
        })
        .filter_map(|e| e["params"]["url"].as_str().map(String::from))
        .collect()
}

fn is_loopback(url: &str, origin: &str) -> bool {
    url.starts_with(&format!("{origin}/")) || url.starts_with("data:")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_in_headless_chromium() {
    let Some(bin) = chromium() else { return };
    let dir = tempfile::tempdir().unwrap();
    let mut served = serve::start_in(dir, &json!({}), &["--demo"]);
    let origin = served.url.trim_end_matches("/mcp").to_string();
    let page = format!("{origin}/");

    let list = json!({"name": "mail_list_messages", "arguments": {}});
    post_modern(&served.url, 1, "tools/call", list).await;
    let get = json!({"name": "calendar_search_events", "arguments": {"query": "review"}});
    post_modern(&served.url, 2, "tools/call", get.clone()).await;
    post_modern(
        &served.url,
        3,
        "tools/call",
        json!({"name": "call_tool", "arguments": get}),
    )
    .await;
    let nothing = json!({"name": "search_tools", "arguments": {"query": "zzqx vvkj"}});
    post_modern(&served.url, 4, "tools/call", nothing).await;
    let deadline = Instant::now() + SETTLE;
    while served.calls().len() < 3 {
        assert!(
            Instant::now() < deadline,
            "the calls never reached the database"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let work = tempfile::tempdir().unwrap();
    let net_log = work.path().join("net.json");
    let dom = run_chromium(
        &bin,
        &work.path().join("profile"),
        &page,
        &[
            format!("--log-net-log={}", net_log.display()),
            "--dump-dom".into(),
        ],
    );
    for want in [
        "<table id=\"working-set\">",
        "Listing the working set and the meta-tools",
        "mail_send_message",
        "<table id=\"recent-calls\">",
        ">mail_list_messages<",
        ">calendar_search_events<",
        "<svg",
        "class=\"hit\"",
        "class=\"day\"",
    ] {
        assert!(
            dom.contains(want),
            "{want} missing from the page Chromium rendered:\n{dom}"
        );
    }
    let requests = page_requests(&net_log, "http://127.0.0.1");
    assert!(
        requests.contains(&page),
        "the page itself is not in the net log: {requests:?}"
    );
    let outside: Vec<_> = requests
        .iter()
        .filter(|u| !is_loopback(u, &origin))
        .collect();
    assert!(
        outside.is_empty(),
        "the page loaded from outside: {outside:?}"
    );

    let shots = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/status-page");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join("status-420x900.png");
    let _ = std::fs::remove_file(&shot);
    run_chromium(
        &bin,
        &work.path().join("profile2"),
        &page,
        &[
            format!("--screenshot={}", shot.display()),
            "--window-size=420,900".into(),
        ],
    );
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert!(png.starts_with(b"\x89PNG"), "the screenshot is not a PNG");
    eprintln!("status page screenshot: {}", shot.display());
    served.stop();
}

/// Without a browser: a foreign Host or Origin gets 403 with the reason, an unknown path 404
/// naming what is served, and the page comes with its Content-Security-Policy.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_page_is_guarded_like_mcp() {
    let dir = tempfile::tempdir().unwrap();
    let mut served = serve::start_in(dir, &json!({}), &["--demo"]);
    let origin = served.url.trim_end_matches("/mcp").to_string();
    let page = format!("{origin}/");
    let client = reqwest::Client::new();
    let refused = |h: &str, v: &str| {
        let r = client.get(&page).header(h, v).send();
        async move {
            let r = r.await.unwrap();
            (r.status().as_u16(), r.text().await.unwrap())
        }
    };
    let (status, body) = refused("Host", "evil.example").await;
    assert_eq!(status, 403);
    assert!(
        body.contains("forbidden: Host 'evil.example' is not loopback"),
        "{body}"
    );
    let (status, body) = refused("Origin", "http://evil.example").await;
    assert_eq!(status, 403);
    assert!(
        body.contains("forbidden: Origin 'http://evil.example' is not loopback"),
        "{body}"
    );
    let missing = client.get(format!("{origin}/nope")).send().await.unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    assert_eq!(
        missing.text().await.unwrap(),
        "not found: mws serves MCP at /mcp and its status page at /\n"
    );
    let ok = client.get(&page).send().await.unwrap();
    let csp = ok.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.starts_with("default-src 'none'"), "{csp}");
    served.stop();
}
