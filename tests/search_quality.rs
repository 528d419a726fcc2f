//! Search quality on gold query sets, printed on every `cargo test` (harness = false, so the
//! figures are not captured): the project's 60-tool catalog with its 50 paraphrase queries, and
//! the MetaTool development set (199 tools, 996 queries) for BM25F beside a plain per-field BM25
//! baseline computed here. Fails below the thresholds. Also checks that every reply is valid JSON
//! within the byte budget.

use std::collections::HashSet;
use std::path::Path;

use mws::catalog::Catalog;
use mws::search::{Prior, QueryOptions, REPLY_BUDGET, SearchIndex, SearchOptions, Variant};
use serde_json::Value;

/// Thresholds for the project's own gold set (docs/search.md, Quality).
const FIXTURE_TOP1: f64 = 0.70;
const FIXTURE_TOP3: f64 = 0.90;

/// MetaTool thresholds: what BM25F reaches (docs/search.md, Quality), minus 1.5 points. Raise them
/// when ranking improves; never lower them to make a change pass.
const METATOOL_TOP1: f64 = 0.523;
const METATOOL_TOP3: f64 = 0.686;
const METATOOL_MRR: f64 = 0.611;

/// Most top-3 a usage prior on every tool but the expected ones may cost (the prior reorders
/// near-ties, never a clear lead).
const PRIOR_MAX_LOSS: f64 = 0.05;

/// Results considered for MRR (a tool ranked lower counts 0).
const MRR_DEPTH: usize = 10;

struct Figures {
    n: usize,
    top1: f64,
    top3: f64,
    mrr: f64,
}

fn fixture(rel: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel)
}

/// Runs every query through `search_with` (the path `search_tools` takes) and scores the names
/// of the reply in order.
fn evaluate(
    index: &SearchIndex,
    gold: &[(String, Vec<String>)],
    variant: Variant,
    failures: &mut Vec<String>,
) -> Figures {
    evaluate_with(index, gold, variant, &|_| None, failures)
}

/// A usage prior per query, from its expected tools: none, the expected tools alone (a user
/// whose habits match the request), or every other tool (habits that never do).
#[derive(Clone, Copy)]
enum Habits {
    Matching,
    Opposite,
}

fn prior_for(index: &SearchIndex, expected: &[String], habits: Habits) -> Prior {
    let rows: Vec<(String, u32)> = match habits {
        Habits::Matching => expected.iter().map(|e| (e.clone(), 10)).collect(),
        Habits::Opposite => index
            .catalog()
            .names()
            .filter(|n| !expected.iter().any(|e| e == n))
            .map(|n| (n.to_string(), 10))
            .collect(),
    };
    Prior::from_sessions(rows)
}

fn evaluate_with(
    index: &SearchIndex,
    gold: &[(String, Vec<String>)],
    variant: Variant,
    prior_of: &dyn Fn(&[String]) -> Option<Prior>,
    failures: &mut Vec<String>,
) -> Figures {
    let listed = HashSet::new();
    let (mut top1, mut top3, mut rr) = (0usize, 0usize, 0.0f64);
    for (query, expected) in gold {
        let prior = prior_of(expected);
        let opts = QueryOptions {
            limit: Some(MRR_DEPTH),
            explain: false,
            variant: Some(variant),
            prior: prior.as_ref(),
            semantic: None,
            always_answer: false,
            script: false,
        };
        let reply = index.search_with(query, &listed, &opts);
        check_reply(query, &reply.text, reply.mode);
        let names: Vec<&str> = reply.json["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r["name"].as_str())
            .collect();
        let rank = names.iter().position(|n| expected.iter().any(|e| e == n));
        match rank {
            Some(0) => top1 += 1,
            _ => failures.push(format!(
                "  {query:?}: want {expected:?}, got {:?}",
                &names[..names.len().min(3)]
            )),
        }
        if rank.is_some_and(|r| r < 3) {
            top3 += 1;
        }
        if let Some(r) = rank {
            rr += 1.0 / (r + 1) as f64;
        }
    }
    let n = gold.len();
    Figures {
        n,
        top1: top1 as f64 / n as f64,
        top3: top3 as f64 / n as f64,
        mrr: rr / n as f64,
    }
}

/// Every reply parses as JSON and, except the uncapped exact mode, fits the budget.
fn check_reply(query: &str, text: &str, mode: &str) {
    let v: Value =
        serde_json::from_str(text).unwrap_or_else(|e| panic!("{query:?}: invalid JSON: {e}"));
    assert_eq!(v["mode"], mode);
    if mode != "exact" {
        assert!(
            text.len() <= REPLY_BUDGET,
            "{query:?}: {} bytes",
            text.len()
        );
    }
}

fn show(label: &str, f: &Figures) {
    println!(
        "search quality {label:<28} n={:<4} top-1 {:>5.1}%  top-3 {:>5.1}%  MRR {:.3}",
        f.n,
        f.top1 * 100.0,
        f.top3 * 100.0,
        f.mrr
    );
}

fn project_gold() -> Vec<(String, Vec<String>)> {
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("search-gold.json")).unwrap())
            .unwrap();
    v["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["query"].as_str().unwrap().to_string(),
                vec![q["expected"].as_str().unwrap().to_string()],
            )
        })
        .collect()
}

fn metatool_gold() -> Vec<(String, Vec<String>)> {
    std::fs::read_to_string(fixture("metatool/gold.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let expected = v["expected"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().to_string())
                .collect();
            (v["query"].as_str().unwrap().to_string(), expected)
        })
        .collect()
}

fn main() {
    let mut ok = true;
    let mut gate = |what: &str, got: f64, min: f64| {
        if got < min {
            println!(
                "FAIL {what}: {:.1}% below the threshold {:.1}%",
                got * 100.0,
                min * 100.0
            );
            ok = false;
        }
    };

    let catalog = Catalog::load_file(&fixture("catalog.json")).unwrap();
    let index = SearchIndex::build(&catalog, &SearchOptions::default()).with_baseline();
    let gold = project_gold();
    assert_eq!(gold.len(), 50);
    let mut misses = Vec::new();
    let f = evaluate(&index, &gold, Variant::Bm25f, &mut misses);
    show("fixtures (BM25F)", &f);
    let b = evaluate(&index, &gold, Variant::PerFieldSum, &mut Vec::new());
    show("fixtures (plain BM25)", &b);
    if std::env::var_os("MWS_SHOW_MISSES").is_some() {
        misses.iter().for_each(|m| println!("{m}"));
    }
    gate("fixtures top-1", f.top1, FIXTURE_TOP1);
    gate("fixtures top-3", f.top3, FIXTURE_TOP3);

    let catalog = Catalog::load_file(&fixture("metatool/catalog.json")).unwrap();
    let index = SearchIndex::build(&catalog, &SearchOptions::default()).with_baseline();
    let gold = metatool_gold();
    let mut misses = Vec::new();
    let f = evaluate(&index, &gold, Variant::Bm25f, &mut misses);
    show("metatool (BM25F)", &f);
    let b = evaluate(&index, &gold, Variant::PerFieldSum, &mut Vec::new());
    show("metatool (plain BM25)", &b);
    gate("metatool top-1", f.top1, METATOOL_TOP1);
    gate("metatool top-3", f.top3, METATOOL_TOP3);
    gate("metatool MRR", f.mrr, METATOOL_MRR);
    for (label, habits) in [
        ("metatool (prior, matching)", Habits::Matching),
        ("metatool (prior, opposite)", Habits::Opposite),
    ] {
        let p = evaluate_with(
            &index,
            &gold,
            Variant::Bm25f,
            &|e| Some(prior_for(&index, e, habits)),
            &mut Vec::new(),
        );
        show(label, &p);
        if let Habits::Opposite = habits {
            // Habits that never match cost at most this much: the prior reorders near-ties only.
            gate(
                "metatool top-3, opposite prior",
                p.top3,
                f.top3 - PRIOR_MAX_LOSS,
            );
        }
    }

    if !ok {
        std::process::exit(1);
    }
}
