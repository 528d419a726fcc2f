//! `search.semantic` through the binary against a real HTTP peer: an OpenAI-compatible
//! embeddings server (tests/peers/embeddings_server.py, hashed bag-of-words vectors) proves the
//! wire shape, the headers and each failure a user can meet (the message, and keyword ranking
//! still answering); answering with all-MiniLM-L6-v2's own vectors, it ranks as the model run
//! in-process does; `mws serve` caches tool vectors in state.db across restarts and embeds a
//! changed tool again.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::cli::mws;
use super::support::run::config_in;
use super::support::{self, Child};

/// How long the embeddings server may take to say its port.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `mws serve` may take to have its tool vectors ready.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The embeddings server in `mode`, its URL, and the file its request sizes go to.
fn embeddings(dir: &Path, mode: &str, require: Option<&str>) -> (Child, String, PathBuf) {
    embeddings_with(dir, mode, require, None)
}

/// `embeddings`, answering from a file of precomputed vectors when `vectors` names one.
fn embeddings_with(
    dir: &Path,
    mode: &str,
    require: Option<&str>,
    vectors: Option<&Path>,
) -> (Child, String, PathBuf) {
    support::peers::ensure();
    let port_file = dir.join(format!("embed-{mode}.port"));
    let mut cmd = Command::new(support::root().join(".venv/bin/python"));
    cmd.arg(support::root().join("tests/peers/embeddings_server.py"))
        .arg(&port_file)
        .args(["--mode", mode]);
    if let Some(h) = require {
        cmd.args(["--require-header", h]);
    }
    if let Some(v) = vectors {
        cmd.arg("--vectors").arg(v);
    }
    let child = Child(cmd.stdin(Stdio::null()).spawn().unwrap());
    let deadline = Instant::now() + START_TIMEOUT;
    let port = loop {
        if let Ok(p) = std::fs::read_to_string(&port_file) {
            break p;
        }
        assert!(
            Instant::now() < deadline,
            "the embeddings server did not start"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let url = format!("http://127.0.0.1:{port}/v1/embeddings");
    (child, url, dir.join(format!("embed-{mode}.port.log")))
}

/// A config with `semantic` as `search.semantic` and the state in `dir/state`.
fn config(dir: &Path, semantic: Value) -> PathBuf {
    let cfg = json!({
        "upstream": {"url": "http://127.0.0.1:9/mcp"},
        "timeouts": {"listMs": 1000},
        "search": {"semantic": semantic}
    });
    config_in(dir, cfg)
}

fn search(cfg: &Path, env: &[(&str, &str)], args: &[&str]) -> Output {
    let catalog = fixture("catalog.json");
    mws()
        .arg("--config")
        .arg(cfg)
        .args([
            "search",
            "--catalog",
            catalog.to_str().unwrap(),
            "--json",
            "--no-prior",
        ])
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn names(out: &Output) -> Vec<String> {
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&out.stdout)));
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect()
}

/// The endpoint gets the configured headers (`${VAR}` expanded) and the OpenAI request shape,
/// and its vectors rank: with a wrong token the server refuses, the message says so, and the
/// ranking is the keyword one.
#[test]
fn endpoint_sends_headers_and_ranks() {
    let dir = tempfile::tempdir().unwrap();
    let (_srv, url, log) = embeddings(dir.path(), "ok", Some("Authorization:Bearer t0k"));
    let cfg = config(
        dir.path(),
        json!({"url": url, "model": "hashed", "headers": {"Authorization": "Bearer ${EMBED_TOKEN}"}}),
    );
    let q = "rename a file in the drive";
    let keywords = search(&cfg, &[("EMBED_TOKEN", "t0k")], &["--keywords", q]);
    assert_eq!(
        keywords.status.code(),
        Some(0),
        "{}",
        text(&keywords.stderr)
    );
    assert!(!log.exists(), "--keywords called the endpoint");
    let out = search(&cfg, &[("EMBED_TOKEN", "t0k")], &[q]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("embedded 60 tools"), "{err}");
    assert!(!err.contains("warning"), "{err}");
    // 60 tools in one batch of 60, then the query.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "60\n1\n");
    let hybrid = names(&out);
    assert_eq!(hybrid[0], "drive_rename_file", "{hybrid:?}");
    assert_ne!(hybrid, names(&keywords), "the vectors changed nothing");

    let out = search(&cfg, &[("EMBED_TOKEN", "wrong")], &[q]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr).trim(),
        "mws search: warning: ranking by keywords only: embeddings endpoint: answered HTTP 401 \
         Unauthorized"
    );
    assert_eq!(names(&out), names(&keywords));
    let out = search(&cfg, &[], &[q]);
    assert_eq!(
        text(&out.stderr).trim(),
        "mws search: warning: ranking by keywords only: embeddings endpoint: environment \
         variable EMBED_TOKEN is not set (in `headers.Authorization`)"
    );
}

/// The endpoint path ranks as the local path does: a real HTTP server answers with
/// all-MiniLM-L6-v2's own vectors (computed here, in-process, for the catalog's tool texts and the
/// queries), and `mws search` through it gives the same names in the same order as
/// `mws search --model` running the model itself.
#[test]
fn endpoint_with_the_same_models_vectors_ranks_as_the_local_model() {
    let dir = tempfile::tempdir().unwrap();
    let model = support::minilm_dir();
    let queries = [
        "rename a file in the drive",
        "send an email to the team",
        "who changed this line of code",
        "take a screenshot of the page",
        "move my friday meeting to monday",
        "order a pizza",
    ];
    let catalog: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("catalog.json")).unwrap()).unwrap();
    let mut texts: Vec<String> = catalog["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(mws::search::semantic::tool_text)
        .collect();
    texts.extend(queries.iter().map(|q| q.to_string()));
    let local =
        mws::embed::Embedder::open(&mws::config::search::Semantic::Local { dir: model.clone() })
            .unwrap();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = local.embed(&refs).unwrap();
    let table: serde_json::Map<String, Value> = texts
        .iter()
        .zip(&vectors)
        .map(|(t, v)| (t.clone(), json!(v)))
        .collect();
    let file = dir.path().join("vectors.json");
    std::fs::write(&file, Value::Object(table).to_string()).unwrap();
    let (_srv, url, _log) = embeddings_with(dir.path(), "ok", None, Some(&file));
    let cfg = config(dir.path(), json!({"url": url, "model": "all-MiniLM-L6-v2"}));
    let ranked = |out: &Output| -> Vec<String> {
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(!err.contains("warning"), "{err}");
        names(out)
    };
    let mut answered = 0;
    for q in queries {
        let endpoint = ranked(&search(&cfg, &[], &[q]));
        let in_process = ranked(&search(&cfg, &[], &["--model", model.to_str().unwrap(), q]));
        assert_eq!(endpoint, in_process, "query {q:?}");
        answered += usize::from(!endpoint.is_empty());
    }
    assert!(answered >= 5, "only {answered} queries had results");
}

/// Each way an endpoint can fail gets its message, and keyword ranking answers the same as
/// `--keywords` does.
#[test]
fn endpoint_failures_fall_back_to_keywords() {
    let dir = tempfile::tempdir().unwrap();
    let q = "send a message to the team channel";
    let closed = super::doctor::closed_port();
    let cases = [
        ("500", "answered HTTP 500 Internal Server Error"),
        ("slow", "no answer within 500 ms"),
        ("wrong-dim", "answered vectors of 64 and of 65 dimensions"),
        ("garbage", "the answer is not the embeddings shape"),
        ("down", "cannot connect (is the server running?)"),
    ];
    for (mode, want) in cases {
        let (_srv, url) = if mode == "down" {
            (None, format!("http://127.0.0.1:{closed}/v1/embeddings"))
        } else {
            let (c, u, _) = embeddings(dir.path(), mode, None);
            (Some(c), u)
        };
        let cfg = config(
            dir.path(),
            json!({"url": url, "model": "m", "timeoutMs": 500}),
        );
        let out = search(&cfg, &[], &[q]);
        assert_eq!(out.status.code(), Some(0), "{mode}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(
            err.starts_with("mws search: warning: ranking by keywords only: embeddings endpoint: ")
                && err.contains(want),
            "{mode}: {err}"
        );
        assert_eq!(
            names(&out),
            names(&search(&cfg, &[], &["--keywords", q])),
            "{mode}"
        );
    }
}

/// `mws doctor` says whether the semantic layer works and, when not, why and what search does.
#[test]
fn doctor_says_why_semantic_ranking_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let (_srv, url, _) = embeddings(dir.path(), "ok", None);
    let doctor = |semantic: Value| {
        let out = run_with_semantic(dir.path(), semantic, &["doctor"]);
        let t = text(&out.stdout);
        t.lines()
            .skip_while(|l| !l.contains(" search "))
            .take(2)
            .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let ok = doctor(json!({"url": url, "model": "hashed"}));
    assert_eq!(
        ok.lines().next().unwrap(),
        "ok search semantic ranking with the embeddings endpoint, model hashed: 64 dimensions"
    );
    let missing = dir.path().join("no-model");
    assert_eq!(
        doctor(json!({"model": missing})),
        format!(
            "warn search semantic ranking off: model directory {}: not a directory\n\
             fix: search ranks by keywords until this is fixed; see docs/search.md \"Semantic \
             ranking\" for how to get a model",
            missing.display()
        )
    );
    let closed = super::doctor::closed_port();
    let down =
        doctor(json!({"url": format!("http://127.0.0.1:{closed}/v1/embeddings"), "model": "m"}));
    assert!(
        down.starts_with(
            "warn search semantic ranking off: embeddings endpoint: cannot connect (is the server \
             running?)"
        ),
        "{down}"
    );
}

/// `mws report` says so too, under "Searches" and as `searches.semanticRanking`.
#[test]
fn report_says_why_semantic_ranking_is_off() {
    let dir = tempfile::tempdir().unwrap();
    let (_srv, url, _) = embeddings(dir.path(), "ok", None);
    let report = |semantic: Value| {
        let run = |args: &[&str]| {
            let out = run_with_semantic(dir.path(), semantic.clone(), args);
            assert!(out.status.success(), "{}", text(&out.stderr));
            text(&out.stdout)
        };
        let human = run(&["report"]);
        let line = human
            .lines()
            .skip_while(|l| *l != "Searches")
            .nth(1)
            .unwrap_or_default()
            .trim()
            .to_string();
        let v: Value = serde_json::from_str(&run(&["report", "--json"])).unwrap();
        assert_eq!(v["searches"]["semanticRanking"], json!(line), "{human}");
        line
    };
    assert_eq!(
        report(json!({"url": url, "model": "hashed"})),
        "semantic ranking with the embeddings endpoint, model hashed: 64 dimensions"
    );
    let missing = dir.path().join("no-model");
    assert_eq!(
        report(json!({"model": missing})),
        format!(
            "semantic ranking off: model directory {}: not a directory; search ranks by keywords \
             only",
            missing.display()
        )
    );
}

/// `mws --config <a config with search.semantic = semantic> args...` in `dir`.
fn run_with_semantic(dir: &Path, semantic: Value, args: &[&str]) -> std::process::Output {
    let cfg = config(dir, semantic);
    mws().arg("--config").arg(&cfg).args(args).output().unwrap()
}

/// A stdio upstream serving `tools` (rewritten between runs to change the catalog).
fn write_tools(path: &Path, tools: &Value) {
    std::fs::write(path, tools.to_string()).unwrap();
}

/// Waits for a stderr line saying the tool vectors are ready that ends with `counts`. A restart
/// first serves the stored catalog and says so, then says it again for the catalog the server
/// lists now when that differs, so the line awaited is the one with the counts expected.
fn vectors_ready(served: &support::serve::Served, counts: &str) {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let lines: Vec<String> = served
            .stderr
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains("search: vectors of 3 tools ready"))
            .cloned()
            .collect();
        if lines.iter().any(|l| l.ends_with(counts)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no line ending {counts}: {lines:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `mws serve` embeds the catalog once and `search_tools` then embeds each query: a restart
/// reads every vector from state.db and embeds nothing; a tool whose description changed is
/// embedded again, the others are not.
#[test]
fn serve_caches_tool_vectors_across_restarts() {
    let work = tempfile::tempdir().unwrap();
    let (_srv, url, log) = embeddings(work.path(), "ok", None);
    let tools_file = work.path().join("tools.json");
    let tool = |name: &str, desc: &str| json!({"name": name, "description": desc, "inputSchema": {"type": "object"}});
    let mut tools = json!([
        tool("rename_file", "Rename a file in the drive"),
        tool("send_message", "Send a chat message to a channel"),
        tool("create_event", "Create a calendar event"),
    ]);
    write_tools(&tools_file, &tools);
    let script = support::root().join("tests/it/support/catalog_stdio.py");
    let python = support::root().join(".venv/bin/python");
    let cfg = json!({
        "upstream": {"command": python, "args": [script, tools_file]},
        "search": {"semantic": {"url": url, "model": "hashed"}}
    });
    let dir = tempfile::tempdir().unwrap();
    let keep = dir.path().to_path_buf();
    let mut served = support::serve::start_in(dir, &cfg, &[]);
    vectors_ready(&served, "(0 from state.db, 3 embedded)");
    // search_tools now embeds the query (one more request of one text) and ranks by both.
    let reply = tokio::runtime::Runtime::new().unwrap().block_on(async {
        let c = support::wire::LegacyClient::open(&served.url, "test", json!({})).await;
        let args = json!({"name": "search_tools", "arguments": {"query": "rename a file"}});
        let r = c.rpc("tools/call", args).await;
        support::clients::text(&r["result"])
    });
    let reply: Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(reply["results"][0]["name"], "rename_file", "{reply}");
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "3\n1\n");
    served.stop();
    let dir = served.dir;
    assert_eq!(dir.path(), keep);

    let mut served = support::serve::start_in(dir, &cfg, &[]);
    vectors_ready(&served, "(3 from state.db, 0 embedded)");
    served.stop();
    // Both runs together sent the catalog once.
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "3\n1\n");

    tools[1] = tool(
        "send_message",
        "Post a chat message to a channel or a person",
    );
    write_tools(&tools_file, &tools);
    let mut served = support::serve::start_in(served.dir, &cfg, &[]);
    // A changed definition is held until approved (docs/tool-approval.md); once it is, its new
    // text is embedded and the others are read.
    let state = served.dir.path().join("state");
    let deadline = Instant::now() + READY_TIMEOUT;
    while !mws::upstream::approvals::load(&state)
        .unwrap()
        .held
        .contains_key("send_message")
    {
        assert!(Instant::now() < deadline, "the changed tool was not held");
        std::thread::sleep(Duration::from_millis(50));
    }
    mws::upstream::approvals::approve(&state, &["send_message".into()]).unwrap();
    vectors_ready(&served, "(2 from state.db, 1 embedded)");
    served.stop();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "3\n1\n1\n");
}
