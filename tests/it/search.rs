//! `mws search` through the binary: human output, `--json` exactly as `search_tools`, `--explain`,
//! the stored-catalog fallback, and the errors a user sees.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};

use super::cli::mws;
use super::support::run::config_in;

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// A config whose upstream refuses at once on loopback and whose state dir is `dir`.
fn config(dir: &Path) -> PathBuf {
    let cfg = serde_json::json!({
        "upstream": {"url": "http://127.0.0.1:9/mcp"},
        "timeouts": {"listMs": 1000},
        "backendHints": {"drive": "files and folders"}
    });
    config_in(dir, cfg)
}

fn run(dir: &Path, args: &[&str]) -> Output {
    mws()
        .arg("--config")
        .arg(config(dir))
        .arg("search")
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn share_a_file_offline() {
    let dir = tempfile::tempdir().unwrap();
    let cat = fixture("catalog.json");
    let out = run(
        dir.path(),
        &["--catalog", cat.to_str().unwrap(), "share a file"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let first = stdout.lines().nth(1).unwrap();
    assert!(first.contains("1. drive_share_file"), "{stdout}");
    assert!(stdout.contains(r#"call_tool {"name":"drive_share_file","arguments":{"file_id":"<file_id>","email":"<email>","role":"<role>"}}"#), "{stdout}");

    let out = run(
        dir.path(),
        &[
            "--catalog",
            cat.to_str().unwrap(),
            "--json",
            "share",
            "a",
            "file",
        ],
    );
    assert!(out.status.success());
    let stdout = text(&out.stdout);
    assert!(stdout.trim_end().len() <= 6144);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["mode"], "ranked");
    assert_eq!(v["results"][0]["name"], "drive_share_file");
    assert!(!stdout.trim_end().contains('\n'), "compact JSON, one line");
}

#[test]
fn explain_and_limit() {
    let dir = tempfile::tempdir().unwrap();
    let cat = fixture("catalog.json");
    let out = run(
        dir.path(),
        &[
            "--catalog",
            cat.to_str().unwrap(),
            "--explain",
            "--limit",
            "2",
            "who can see this document",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("ranked: 2 shown"), "{stdout}");
    assert!(
        stdout.contains("score ") && stdout.contains("name bonus") && stdout.contains("idf"),
        "{stdout}"
    );

    // A value in the request: the tool that takes it says so.
    let real = fixture("real-catalogs.json");
    let out = run(
        dir.path(),
        &[
            "--catalog",
            real.to_str().unwrap(),
            "--keywords",
            "--explain",
            "fetch https://docs.python.org/3/whatsnew/3.13.html",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains(" 1. fetch__fetch\n"), "{stdout}");
    assert!(stdout.contains("× takes a URL 1.50;"), "{stdout}");

    let out = run(
        dir.path(),
        &["--catalog", cat.to_str().unwrap(), "--limit", "0", "x"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--limit must be at least 1"));
}

#[test]
fn falls_back_to_the_stored_catalog_and_says_when_there_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(dir.path(), &["drive"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("no catalog") && err.contains("catalog.json") && err.contains("--catalog"),
        "{err}"
    );

    std::fs::create_dir_all(dir.path().join("state")).unwrap();
    std::fs::copy(
        fixture("catalog.json"),
        dir.path().join("state/catalog.json"),
    )
    .unwrap();
    let out = run(dir.path(), &["drive"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.starts_with("backend in drive: 12 shown"), "{stdout}");

    let out = run(dir.path(), &[]);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("drive (files and folders): drive_list_files"),
        "{stdout}"
    );
}

#[test]
fn a_bad_catalog_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, "{\"tools\": 3}").unwrap();
    let out = run(dir.path(), &["--catalog", bad.to_str().unwrap(), "x"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("bad.json") && err.contains("tools"), "{err}");
    let out = run(
        dir.path(),
        &[
            "--catalog",
            dir.path().join("missing.json").to_str().unwrap(),
            "x",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("missing.json"));
}

#[test]
fn a_query_past_the_bounds_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cat = fixture("catalog.json");
    let long = "x".repeat(5000);
    let words: Vec<&str> = ["share"; 300].to_vec();
    for (args, want) in [
        (
            vec![long.as_str()],
            "query too long: 5000 bytes, at most 4096",
        ),
        (words, "query has too many words: more than 256"),
    ] {
        let mut all = vec!["--catalog", cat.to_str().unwrap()];
        all.extend(args);
        let out = run(dir.path(), &all);
        assert_eq!(out.status.code(), Some(2));
        let err = text(&out.stderr);
        assert!(err.contains(want), "{err}");
        assert!(out.stdout.is_empty());
    }
}

/// `--eval` scores a gold file: figures and misses for people, the same figures with `--json`.
#[test]
fn eval_scores_a_gold_file() {
    let dir = tempfile::tempdir().unwrap();
    let cat = fixture("catalog.json");
    let gold = fixture("eval/project.jsonl");
    let args = ["--catalog", cat.to_str().unwrap(), "--eval"];
    let out = run(dir.path(), &[&args[..], &[gold.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let human = text(&out.stdout);
    assert!(
        human.contains("queries 64: 50 with expected tools, 14 negatives"),
        "{human}"
    );
    assert!(
        human.contains("negatives answered with nothing: "),
        "{human}"
    );
    let json = [&args[..], &[gold.to_str().unwrap(), "--json"]].concat();
    let out = run(dir.path(), &json);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["positives"].as_u64(), v["negatives"].as_u64()),
        (Some(50), Some(14))
    );
    let top1 = v["top1"].as_f64().unwrap();
    assert!(
        human.contains(&format!("top-1 {:.1}%", top1 * 100.0)),
        "{human}"
    );
    let misses = v["misses"].as_array().unwrap().len();
    assert_eq!(
        human.lines().filter(|l| l.starts_with("miss ")).count(),
        misses
    );
    // The weak rule marks negatives weak; --always-answer ranks every one that shares a word
    // with some tool unmarked, and so marks none.
    assert!(
        human.contains(&format!(
            "with nothing or marked weak: {}",
            v["negativesWeak"]
        )),
        "{human}"
    );
    let out = run(dir.path(), &[&json[..], &["--always-answer"]].concat());
    let always: Value = serde_json::from_slice(&out.stdout).unwrap();
    let n = |v: &Value, k: &str| v[k].as_u64().unwrap();
    assert!(
        n(&always, "negativesWeak") < n(&v, "negativesWeak"),
        "{always}"
    );
    assert_eq!(n(&always, "positivesWeak"), 0, "{always}");
    assert!(
        n(&always, "positivesEmpty") <= n(&v, "positivesEmpty"),
        "{always}"
    );
    assert!(always["top3"].as_f64() >= v["top3"].as_f64(), "{always}");
}

/// A bad gold line is named by file and line; a query beside `--eval` is refused.
#[test]
fn eval_refuses_bad_gold_files() {
    let dir = tempfile::tempdir().unwrap();
    let cat = fixture("catalog.json");
    let gold = dir.path().join("gold.jsonl");
    std::fs::write(
        &gold,
        "{\"query\":\"a\",\"expected\":[\"x\"]}\n{\"query\":\"b\"}\n",
    )
    .unwrap();
    let (c, g) = (cat.to_str().unwrap(), gold.to_str().unwrap());
    let out = run(dir.path(), &["--catalog", c, "--eval", g]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    let want = format!("gold file {g}:2: \"expected\" is missing or not a list of tool names");
    assert!(err.contains(&want), "{err}");
    let out = run(dir.path(), &["--catalog", c, "--eval", g, "share"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--eval reads its queries from the gold file"));
}

/// The usage prior: of two tools that match a query alike, the one called successfully in recent
/// sessions comes first and `--explain` says why; `--no-prior` ranks without it; a tool that
/// matches clearly less is not lifted past a better one, however often it was called.
#[test]
fn usage_prior_breaks_near_ties_only() {
    let dir = tempfile::tempdir().unwrap();
    let tool = |name: &str, desc: &str| json!({"name": name, "description": desc});
    let catalog = dir.path().join("catalog.json");
    let tools = json!({"tools": [
        tool("notes_search_text", "Search text in notes"),
        tool("wiki_search_text", "Search text in wiki pages"),
        tool("audit_log", "Write an audit log entry as text; search is not supported"),
    ]});
    std::fs::write(&catalog, tools.to_string()).unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let store = mws::store::Store::open(&state.join("state.db")).unwrap();
    let ts = mws::clock::fmt(mws::clock::now() - time::Duration::hours(1));
    for (n, (tool, ok)) in [
        ("wiki_search_text", 1),
        ("wiki_search_text", 1),
        ("audit_log", 1),
        ("audit_log", 1),
        ("notes_search_text", 0),
    ]
    .iter()
    .enumerate()
    {
        store
            .conn()
            .execute(
                "INSERT INTO calls (ts, session_id, tool, via, ok, source_key) \
                 VALUES (?1, ?2, ?3, 'direct', ?4, ?5)",
                rusqlite::params![ts, format!("s{n}"), tool, ok, format!("proxy:{n}")],
            )
            .unwrap();
    }
    drop(store);
    let c = catalog.to_str().unwrap();
    let first = |args: &[&str]| {
        let out = run(
            dir.path(),
            &[&["--catalog", c, "--json"], args, &["search text"]].concat(),
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let names: Vec<String> = v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect();
        names
    };
    let without = first(&["--no-prior"]);
    let with = first(&[]);
    assert_eq!(without[0], "notes_search_text", "{without:?}");
    assert_eq!(with[0], "wiki_search_text", "{with:?}");
    assert_eq!(without.last().unwrap(), "audit_log");
    assert_eq!(with.last().unwrap(), "audit_log");
    let out = run(dir.path(), &["--catalog", c, "--explain", "search text"]);
    let human = text(&out.stdout);
    assert!(human.contains("× usage prior 1."), "{human}");
}

/// The real all-MiniLM-L6-v2 (from its PyPI package) gives the sentence vectors its own
/// documentation gives: mean pooling over real tokens, unit length.
#[test]
fn local_model_embeds_like_the_reference() {
    let model = mws::embed::LocalModel::load(&super::support::minilm_dir()).unwrap();
    assert_eq!(model.dim(), 384);
    let v = model
        .embed(&[
            "A man is eating food.",
            "A man is eating a piece of bread.",
            "The girl is carrying a baby.",
        ])
        .unwrap();
    let cos = |a: &[f32], b: &[f32]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f32>();
    assert!((cos(&v[0], &v[0]) - 1.0).abs() < 1e-4);
    assert!(
        (cos(&v[0], &v[1]) - 0.7553).abs() < 2e-3,
        "{}",
        cos(&v[0], &v[1])
    );
    assert!(
        (cos(&v[0], &v[2]) + 0.1050).abs() < 2e-3,
        "{}",
        cos(&v[0], &v[2])
    );
}

/// `--model` ranks by meaning too: a paraphrase keywords rank 10th comes into the top 3, and a
/// request the catalog cannot serve gets nothing.
#[test]
fn search_with_the_local_model() {
    let dir = tempfile::tempdir().unwrap();
    let (cat, model) = (fixture("catalog.json"), super::support::minilm_dir());
    let (c, m) = (cat.to_str().unwrap(), model.to_str().unwrap());
    let q = "change the name of the slides to final.pptx";
    let top3 = |args: &[&str]| -> Vec<String> {
        let all = [&["--catalog", c, "--json", "--no-prior"], args, &[q]].concat();
        let v: Value = serde_json::from_slice(&run(dir.path(), &all).stdout).unwrap();
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .take(3)
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(!top3(&[]).contains(&"drive_rename_file".to_string()));
    let out = run(dir.path(), &["--catalog", c, "--model", m, "--json", q]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("embedded 60 tools"),
        "{}",
        text(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(names[..3].contains(&"drive_rename_file"), "{names:?}");
    let out = run(
        dir.path(),
        &[
            "--catalog",
            c,
            "--model",
            m,
            "--json",
            "order a large pepperoni pizza",
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    // No tool makes pizza: nothing, or the nearest few marked weak, with the hint.
    let n = v["results"].as_array().unwrap().len();
    assert!(n == 0 || (v["weak"] == json!(true) && n <= 3), "{v}");
    assert!(v["hint"].is_string());
    // The second and third runs took every vector from the cache `mws serve` fills too.
    assert!(
        !text(&out.stderr).contains("embedded"),
        "{}",
        text(&out.stderr)
    );
}

/// A model directory that is missing or incomplete is named on stderr, and keywords still rank.
#[test]
fn a_bad_model_directory_falls_back_to_keywords() {
    let dir = tempfile::tempdir().unwrap();
    let cat = fixture("catalog.json");
    let partial = dir.path().join("partial");
    std::fs::create_dir_all(&partial).unwrap();
    std::fs::write(partial.join("config.json"), "{}").unwrap();
    let garbage = dir.path().join("garbage");
    std::fs::create_dir_all(&garbage).unwrap();
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        std::fs::write(garbage.join(f), "not a model").unwrap();
    }
    let missing = dir.path().join("nope");
    for (model, want) in [
        (
            &missing,
            format!("model directory {}: not a directory", missing.display()),
        ),
        (
            &partial,
            format!(
                "model directory {}: tokenizer.json is missing",
                partial.display()
            ),
        ),
        (
            &garbage,
            format!(
                "model in {}: config.json is not a BERT config",
                garbage.display()
            ),
        ),
    ] {
        let args = [
            "--catalog",
            cat.to_str().unwrap(),
            "--model",
            model.to_str().unwrap(),
            "--json",
            "share a file",
        ];
        let out = run(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0));
        let err = text(&out.stderr);
        assert!(
            err.contains("warning: ranking by keywords only: ") && err.contains(&want),
            "{err}"
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["results"][0]["name"], "drive_share_file");
    }
}
