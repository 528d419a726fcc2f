//! Code mode's benchmark (prints figures; not a test, asserts nothing): what starting a script
//! costs, a script making 100 calls against the same 100 calls made one by one through mws, two
//! ways: over stdio (a raw client, `mws serve --stdio` in front of the demo upstream, a process of
//! its own: the comparison), and through `Proxy::handle` in front of an in-process
//! upstream (no transport on either side, so the figure is the script's own cost per call),
//! a running script's memory, and issue 32's token measurement: a task of 30 dependent calls
//! ("list my 30 open PRs, fetch each one's checks, name the failing ones"), the o200k tokens that
//! reach the model through `call_tool` one call at a time against one `run_script`.
//!
//! Run: `cargo bench --bench code_mode`. `MWS_BENCH_ROUNDS` (default 20) sets the rounds of each
//! timed path; more gives steadier medians.

mod common;

use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::lines::LineClient;

use mws::catalog::Catalog;
use mws::config::{CodeMode, Config, Listing};
use mws::mcp::{Caller, Era};
use mws::results::count::o200k;
use mws::script::{self, Limits, Reply};
use mws::server::Proxy;
use mws::upstream::{
    CallContext, CatalogSnapshot, CatalogSource, Upstream, UpstreamError, UpstreamStatus,
};
use serde_json::{Map, Value, json};

/// Open pull requests in the token fixture (the example has 30).
const PRS: u64 = 30;
/// Checks per pull request in the fixture; CI setups of a mid-size project run about this many.
const CHECKS: u64 = 12;
/// Calls per script in the timing comparison (the figure is stated at 100).
const CALLS: usize = 100;
/// The demo upstream's tool the stdio comparison calls.
const STDIO_TOOL: &str = "calendar_list_calendars";

/// The fixture upstream: `list_open_prs` and `get_pr_checks`, answered in memory, with results
/// shaped like a code host's (ids, titles, authors, URLs, per-check status).
struct Fixture {
    catalog: Arc<Catalog>,
    changes: tokio::sync::watch::Receiver<u64>,
}

fn fixture() -> Arc<Fixture> {
    let tools = vec![
        json!({"name": "list_open_prs", "description": "List the open pull requests of a repository.",
               "inputSchema": {"type": "object", "properties": {"repo": {"type": "string"}}, "required": ["repo"]}}),
        json!({"name": "get_pr_checks", "description": "The CI checks of one pull request, with their status.",
               "inputSchema": {"type": "object", "properties": {"repo": {"type": "string"}, "number": {"type": "integer"}},
                               "required": ["repo", "number"]}}),
    ];
    Arc::new(Fixture {
        catalog: Arc::new(Catalog::new(tools)),
        changes: tokio::sync::watch::channel(1).1,
    })
}

fn pr(n: u64) -> Value {
    json!({"number": n, "title": format!("Fix the flaky retry path in module {n}"), "author": format!("dev{}", n % 7),
           "url": format!("https://code.example.com/acme/app/pull/{n}"), "draft": false,
           "labels": ["bug", "ci"], "created_at": "2026-11-20T10:00:00Z", "head": format!("fix/retry-{n}")})
}

fn checks(n: u64) -> Value {
    let runs: Vec<Value> = (0..CHECKS)
        .map(|c| {
            let failed = (n + c).is_multiple_of(9);
            json!({"name": format!("ci/job-{c}"), "status": "completed",
                   "conclusion": if failed { "failure" } else { "success" },
                   "started_at": "2026-11-20T10:05:00Z", "completed_at": "2026-11-20T10:12:41Z",
                   "details_url": format!("https://ci.example.com/acme/app/runs/{n}{c}")})
        })
        .collect();
    json!({"number": n, "checks": runs})
}

#[async_trait::async_trait]
impl Upstream for Fixture {
    async fn catalog(&self) -> CatalogSnapshot {
        CatalogSnapshot {
            catalog: self.catalog.clone(),
            source: CatalogSource::Live,
            version: 1,
        }
    }

    async fn request(
        &self,
        _: &str,
        params: Value,
        _: &CallContext,
    ) -> Result<Value, UpstreamError> {
        let body = match params["name"].as_str() {
            Some("list_open_prs") => json!({"prs": (1..=PRS).map(pr).collect::<Vec<_>>()}),
            _ => checks(params["arguments"]["number"].as_u64().unwrap_or(0)),
        };
        Ok(
            json!({"content": [{"type": "text", "text": body.to_string()}], "structuredContent": body}),
        )
    }

    async fn notify(&self, _: &str, _: Option<Value>) -> Result<(), UpstreamError> {
        Ok(())
    }

    fn status(&self) -> UpstreamStatus {
        UpstreamStatus::default()
    }

    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.clone()
    }
}

fn proxy() -> Arc<Proxy> {
    let config = Config {
        listing: Listing::WorkingSet,
        code_mode: CodeMode {
            enabled: true,
            max_calls: 1_000,
            ..CodeMode::default()
        },
        ..Config::default()
    };
    let ws = tokio::sync::watch::channel(Arc::new(Default::default())).1;
    Proxy::new(fixture(), config, ws, None)
}

fn caller() -> Caller {
    Caller {
        era: Era::Modern,
        client: Some("bench".into()),
        session: Some("bench".into()),
        input: None,
        project: None,
    }
}

/// One `tools/call` through the proxy: the result.
async fn call(p: &Proxy, name: &str, arguments: Value) -> Value {
    let mut msg = Map::new();
    msg.insert("jsonrpc".into(), json!("2.0"));
    msg.insert("id".into(), json!(1));
    msg.insert("method".into(), json!("tools/call"));
    msg.insert(
        "params".into(),
        json!({"name": name, "arguments": arguments}),
    );
    let r = p.handle(msg, &caller()).await.expect("a response");
    r["result"].clone()
}

fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

const SCRIPT: &str = "const {prs} = await tools.list_open_prs({repo: 'acme/app'});
const failing = [];
for (const pr of prs) {
  const {checks} = await tools.get_pr_checks({repo: 'acme/app', number: pr.number});
  const bad = checks.filter(c => c.conclusion === 'failure').map(c => c.name);
  if (bad.length) failing.push({pr: pr.number, failing: bad});
}
return failing;";

/// Over stdio, medians of `rounds`: `CALLS` calls one by one from a raw client through
/// `mws serve --stdio`, then one `run_script` making the same calls.
fn over_stdio(rounds: usize) -> (Duration, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "upstream": {"command": common::mws_bin(), "args": ["demo-upstream"]},
        "stateDir": dir.path().join("state"),
        "transcripts": [],
        "pins": [STDIO_TOOL],
        "codeMode": {"enabled": true, "maxCalls": 1_000},
    });
    let path = dir.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let mut cmd = Command::new(common::mws_bin());
    cmd.args(["--config", path.to_str().unwrap(), "serve", "--stdio"]);
    let mut c = LineClient::spawn("mws serve --stdio", cmd);
    let code =
        format!("for (let i = 0; i < {CALLS}; i++) await tools.{STDIO_TOOL}({{}}); return 'done'");
    let one_call = json!({"name": STDIO_TOOL, "arguments": {}});
    let script = json!({"name": "run_script", "arguments": {"code": code}});
    let (mut one, mut scripted) = (Vec::new(), Vec::new());
    // The first round warms the call log's writer and the upstream, and is not counted.
    for round in 0..=rounds {
        let t = Instant::now();
        for _ in 0..CALLS {
            let r = c.round("tools/call", one_call.clone());
            assert_ne!(r["result"]["isError"], json!(true), "{r}");
        }
        let by_one = t.elapsed();
        let t = Instant::now();
        let r = c.round("tools/call", script.clone());
        assert_eq!(text(&r["result"]), "done", "{r}");
        if round > 0 {
            one.push(by_one);
            scripted.push(t.elapsed());
        }
    }
    (median(one), median(scripted))
}

/// The tokens that reach the model: what it writes (each call's arguments) and what comes back.
async fn tokens(p: &Proxy) -> (usize, usize, usize, usize) {
    let count = |s: &str| o200k().count(s);
    let mut one_by_one = 0;
    let list = json!({"name": "list_open_prs", "arguments": {"repo": "acme/app"}});
    one_by_one += count(&list.to_string());
    let prs = text(&call(p, "call_tool", list).await);
    one_by_one += count(&prs);
    for n in 1..=PRS {
        let args = json!({"name": "get_pr_checks", "arguments": {"repo": "acme/app", "number": n}});
        one_by_one += count(&args.to_string());
        one_by_one += count(&text(&call(p, "call_tool", args).await));
    }
    let args = json!({"code": SCRIPT});
    let result = call(p, "run_script", args.clone()).await;
    assert_ne!(result["isError"], json!(true), "{result}");
    let (wrote, read) = (count(&args.to_string()), count(&text(&result)));
    (one_by_one, wrote + read, wrote, read)
}

fn main() {
    let rounds: usize = std::env::var("MWS_BENCH_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let limits = Limits::of(&CodeMode::default());

    let starts: Vec<Duration> = (0..rounds * 10)
        .map(|_| {
            let t = Instant::now();
            let out = script::run(
                "return 1",
                &limits,
                Box::new(|_, _, _| Reply::Value(Value::Null)),
            );
            assert!(out.result.is_ok());
            t.elapsed()
        })
        .collect();
    println!(
        "script start (a runtime, a context, `return 1`), median: {:?}",
        median(starts)
    );

    let held = script::run(
        "const kept = []; for (let i = 0; i < 100; i++) kept.push(await tools.x({})); return kept.length",
        &limits,
        Box::new(|_, _, _| Reply::Value(checks(7))),
    );
    println!(
        "memory of a script holding 100 results of {} checks each: {:.1} MB (cap {} MB)",
        CHECKS,
        held.memory_bytes as f64 / 1_048_576.0,
        CodeMode::default().memory_mb
    );

    let (one, scripted) = over_stdio(rounds);
    println!(
        "{CALLS} calls over stdio through mws serve --stdio to the demo upstream, one by one: \
         {one:?}; in one script: {scripted:?} ({:.2}x)",
        scripted.as_secs_f64() / one.as_secs_f64()
    );

    let p = proxy();
    let loop_code = format!(
        "for (let i = 1; i <= {CALLS}; i++) await tools.get_pr_checks({{repo: 'acme/app', number: i}}); return 'done'"
    );
    let (mut one, mut scripted) = (Vec::new(), Vec::new());
    rt.block_on(async {
        for _ in 0..rounds {
            let t = Instant::now();
            for n in 1..=CALLS as u64 {
                call(
                    &p,
                    "get_pr_checks",
                    json!({"repo": "acme/app", "number": n}),
                )
                .await;
            }
            one.push(t.elapsed());
            let t = Instant::now();
            let r = call(&p, "run_script", json!({"code": loop_code})).await;
            assert_eq!(text(&r), "done", "{r}");
            scripted.push(t.elapsed());
        }
    });
    let (one, scripted) = (median(one), median(scripted));
    println!(
        "{CALLS} calls in process through Proxy::handle (no transport), one by one: {one:?}; \
         in one script: {scripted:?} ({:.2}x)",
        scripted.as_secs_f64() / one.as_secs_f64()
    );

    let (one_by_one, script, wrote, read) = rt.block_on(tokens(&p));
    println!(
        "{} dependent calls (1 list + {PRS} checks): {one_by_one} o200k tokens reach the model \
         through call_tool; {script} through run_script ({wrote} the script, {read} its answer): \
         {:.1}% of them",
        PRS + 1,
        100.0 * script as f64 / one_by_one as f64
    );
}
