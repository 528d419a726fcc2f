//! The peer matrix through the real `mws serve` binary: real downstream clients (the Python `mcp`
//! SDK client in auto, legacy and 2026-07-28 modes; the MCP Inspector CLI in one era per upstream,
//! all three eras covered) against mws in front of real upstreams (the rmcp fixture with and
//! without legacy sessions, server-everything over HTTP and stdio, mcp-server-time over stdio).
//! Per pair: `tools/list` is exactly the meta-tools plus the working set present upstream, a
//! listed and an unlisted tool answer directly and through `call_tool`, the calls land in `calls`,
//! and `search_tools` finds the unlisted tool by a paraphrase. One mws per upstream, its clients
//! run side by side. Resilience, byte fidelity, progress, promote and the demo live in the
//! submodules.

mod demo;
mod fidelity;
mod input;
mod progress;
mod promote;
mod resilience;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::clients::{self, PYTHON_MODES};
use crate::support::serve::{self, Served};
use crate::support::{self, rmcp_upstream};

/// How long mws may take to list a fresh upstream's catalog (a node or Python child starting).
const CATALOG_WAIT: Duration = Duration::from_secs(30);

/// One upstream in the matrix and what to ask it.
struct Case {
    upstream: Value,
    /// Written into `working_set` before start; includes a tool the upstream does not have.
    working_set: &'static [&'static str],
    /// What `tools/list` must show after the meta-tools.
    listed: &'static [&'static str],
    /// The upstream marks a tool `readOnlyHint: true`: `call_read_only_tool` is listed.
    read_only: bool,
    /// A listed tool, its arguments and a piece of its answer.
    call_listed: (&'static str, Value, &'static str),
    /// An unlisted tool, its arguments and a piece of its answer.
    call_unlisted: (&'static str, Value, &'static str),
    /// A paraphrase that must find the unlisted tool.
    query: &'static str,
    /// The Inspector CLI's `--protocol-era` for this upstream.
    inspector_era: &'static str,
}

/// Waits (bounded) until mws lists what the case expects, so that the clients see the live catalog.
async fn wait_for_catalog(url: &str, want: &[String]) {
    let deadline = Instant::now() + CATALOG_WAIT;
    loop {
        let got = serve::names(&serve::post_modern(url, 1, "tools/list", json!({})).await);
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "tools/list stayed {got:?}, want {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// The search results' names (the `search_tools` reply is one JSON text block).
fn found(search_text: &str) -> Vec<(String, bool)> {
    let v: Value = serde_json::from_str(search_text)
        .unwrap_or_else(|e| panic!("search_tools reply is not JSON ({e}): {search_text}"));
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("no results in {v}"))
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_string(), r["listed"] == true))
        .collect()
}

/// The unlisted tool is among the top three results and marked unlisted.
fn assert_found(search_text: &str, tool: &str, who: &str) {
    let hits = found(search_text);
    let top: Vec<_> = hits.iter().take(3).collect();
    assert!(
        top.iter().any(|(n, listed)| n == tool && !listed),
        "{who}: search did not find unlisted {tool} in the top 3: {hits:?}"
    );
}

async fn python_runs(case: &Case, url: &str, want: &[String]) {
    let (listed, la, lt) = &case.call_listed;
    let (unlisted, ua, ut) = &case.call_unlisted;
    for (mode, version) in PYTHON_MODES {
        let r = clients::python(url, mode, [(listed, la), (unlisted, ua)], case.query).await;
        let who = format!("python {mode}");
        assert_eq!(r["protocol_version"], version, "{who}");
        assert_eq!(r["tools"], json!(want), "{who}");
        for (k, piece) in [
            ("direct_listed", lt),
            ("direct_unlisted", ut),
            ("via_call_tool", ut),
        ] {
            assert_eq!(r[k]["isError"], false, "{who} {k}: {r}");
            let text = r[k]["text"].as_str().unwrap();
            assert!(text.contains(piece), "{who} {k}: {text:?} lacks {piece:?}");
        }
        assert_found(r["search"]["text"].as_str().unwrap(), unlisted, &who);
    }
}

async fn inspector_runs(case: &Case, url: &str, want: &[String]) {
    let era = case.inspector_era;
    let (listed, la, lt) = &case.call_listed;
    let (unlisted, ua, ut) = &case.call_unlisted;
    let (code, v) = clients::inspector(url, era, &["--method", "tools/list"]).await;
    assert_eq!(code, 0, "inspector {era} list: {v}");
    assert_eq!(serve::names(&v), want, "inspector {era}");

    let r = clients::inspector_call(url, era, listed, la).await;
    assert_ne!(r["isError"], true, "inspector {era} {listed}: {r}");
    assert!(clients::text(&r).contains(lt), "inspector {era}: {r}");

    // The Inspector only calls tools it has listed, so an unlisted tool goes through call_tool.
    let args = json!({"name": unlisted, "arguments": ua});
    let r = clients::inspector_call(url, era, "call_tool", &args).await;
    assert_ne!(
        r["isError"], true,
        "inspector {era} call_tool {unlisted}: {r}"
    );
    assert!(clients::text(&r).contains(ut), "inspector {era}: {r}");

    let q = json!({"query": case.query});
    let r = clients::inspector_call(url, era, "search_tools", &q).await;
    assert_found(&clients::text(&r), unlisted, &format!("inspector {era}"));
}

/// Runs every client against mws in front of `case.upstream`, then checks the `calls` rows.
async fn run(case: Case) {
    let config = json!({"upstream": case.upstream, "transcripts": []});
    let mut served: Served = serve::start(&config, case.working_set);
    let mut want = vec!["search_tools".to_string(), "call_tool".to_string()];
    if case.read_only {
        want.push("call_read_only_tool".to_string());
    }
    want.push("run_script".to_string());
    want.extend(case.listed.iter().map(|s| s.to_string()));
    wait_for_catalog(&served.url, &want).await;

    tokio::join!(
        python_runs(&case, &served.url, &want),
        inspector_runs(&case, &served.url, &want)
    );
    served.stop();

    let (listed, unlisted) = (case.call_listed.0, case.call_unlisted.0);
    let mut rows: BTreeMap<(String, String, String), (usize, usize)> = BTreeMap::new();
    for (tool, via, client, ok) in served.calls() {
        let e = rows.entry((tool, via, client)).or_default();
        e.0 += 1;
        e.1 += usize::from(ok);
    }
    let row = |t: &str, v: &str, c: &str, n: usize| ((t.into(), v.into(), c.into()), (n, n));
    let want_rows: BTreeMap<_, _> = [
        row(listed, "direct", "inspector-cli", 1),
        row(listed, "direct", "mcp", 3),
        row(unlisted, "call_tool", "inspector-cli", 1),
        row(unlisted, "call_tool", "mcp", 3),
        row(unlisted, "direct", "mcp", 3),
    ]
    .into_iter()
    .collect();
    assert_eq!(
        rows, want_rows,
        "calls rows (count, ok) per tool, via, client"
    );
}

fn rmcp_case(url: &str, inspector_era: &'static str) -> Case {
    Case {
        upstream: json!({"url": url}),
        working_set: &["echo", "retired_tool", "filler_03"],
        listed: &["echo", "filler_03"],
        read_only: false,
        call_listed: ("echo", json!({"message": "hi there"}), "Echo: hi there"),
        call_unlisted: ("add", json!({"a": 2, "b": 3}), "5"),
        query: "add two numbers together",
        inspector_era,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_fixture_with_legacy_sessions() {
    let up = rmcp_upstream::start(true).await;
    run(rmcp_case(&up.url, "legacy")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rmcp_fixture_without_legacy_sessions() {
    let up = rmcp_upstream::start(false).await;
    run(rmcp_case(&up.url, "modern")).await;
}

fn everything_case(upstream: Value, inspector_era: &'static str) -> Case {
    Case {
        upstream,
        working_set: &["get-env", "echo", "not_on_this_server"],
        listed: &["get-env", "echo"],
        read_only: true,
        call_listed: ("echo", json!({"message": "hi there"}), "Echo: hi there"),
        call_unlisted: ("get-sum", json!({"a": 2, "b": 3}), "5"),
        query: "add up two values",
        inspector_era,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_http() {
    let (_child, url) = support::start_everything_http().await;
    run(everything_case(json!({"url": url}), "auto")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_everything_over_stdio() {
    let js = support::server_everything();
    let upstream = json!({"command": "node", "args": [js, "stdio"]});
    run(everything_case(upstream, "modern")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_server_time_over_stdio() {
    let bin = support::mcp_server_time();
    let upstream = json!({"command": bin, "args": ["--local-timezone", "UTC"]});
    let convert =
        json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"});
    run(Case {
        upstream,
        working_set: &["get_current_time", "old_time_tool"],
        listed: &["get_current_time"],
        read_only: true,
        call_listed: ("get_current_time", json!({"timezone": "UTC"}), "UTC"),
        call_unlisted: ("convert_time", convert, "21:00"),
        query: "shift a time between time zones",
        inspector_era: "legacy",
    })
    .await;
}
