//! Tests of the semantic layer: fusion, the keyword share by query length and confidence, and
//! when a fused query is weak or nothing, on small catalogs with vectors along their own axes.

use std::collections::HashSet;

use serde_json::json;

use super::*;
use crate::catalog::Catalog;
use crate::search::QueryOptions;

/// Vectors of `n` tools in `dim` dimensions, the first `first` of them each along its own
/// axis (tool `d` along axis `d`), the rest not embedded.
fn axes(dim: usize, n: usize, first: usize) -> Vectors {
    let mut vectors = Vectors::new(dim, n);
    for d in 0..first {
        let mut v = vec![0.0f32; dim];
        v[d] = 1.0;
        assert!(vectors.set(d, &v));
    }
    vectors
}

/// Options that fuse with `vectors` for the query vector `q`.
fn with<'a>(vectors: &'a Vectors, q: &'a [f32]) -> QueryOptions<'a> {
    QueryOptions {
        semantic: Some(Semantic {
            vectors,
            query: q,
            fusion: Fusion::Sum,
        }),
        ..Default::default()
    }
}

/// Short queries keep the whole keyword share, long ones the long share, and the share falls
/// steadily in between.
#[test]
fn keyword_share_falls_with_the_query_length() {
    assert_eq!(keyword_share(0), KEYWORD_SHARE);
    assert_eq!(keyword_share(LONG_QUERY_FROM), KEYWORD_SHARE);
    assert_eq!(keyword_share(LONG_QUERY_AT), KEYWORD_SHARE_LONG);
    assert_eq!(keyword_share(10_000), KEYWORD_SHARE_LONG);
    let mid = keyword_share((LONG_QUERY_FROM + LONG_QUERY_AT) / 2);
    assert!(
        (mid - (KEYWORD_SHARE + KEYWORD_SHARE_LONG) / 2.0).abs() < 1e-6,
        "{mid}"
    );
    let shares: Vec<f32> = (0..40).map(keyword_share).collect();
    assert!(shares.windows(2).all(|w| w[1] <= w[0]), "{shares:?}");
}

/// With the keyword share low, a tool the vectors put first beats the keyword best.
#[test]
fn a_long_querys_order_follows_its_vectors() {
    let keyword = [(0, 2.0), (1, 1.0)];
    let vector = [(1, 0.6), (0, 0.5)];
    let cos = |d: u32| Some(if d == 0 { 0.5 } else { 0.6 });
    let short = fuse(&keyword, &vector, cos, Fusion::Sum, keyword_share(5));
    let long = fuse(&keyword, &vector, cos, Fusion::Sum, keyword_share(20));
    assert_eq!(short[0].0, 0, "{short:?}");
    assert_eq!(long[0].0, 1, "{long:?}");
}
/// With vectors, a best cosine between `MIN_COSINE_AGREED` and `MIN_COSINE_ALONE` answers only
/// when the keyword best is among the nearest tools too.
#[test]
fn a_weak_cosine_answers_only_when_keywords_agree() {
    let tools = [
        ("alpha_report", "Creates a quarterly sales report"),
        ("beta_mail", "Sends an email"),
        ("gamma_calendar", "Adds a calendar event"),
        ("delta_weather", "Gets the weather forecast"),
        ("epsilon_stock", "Looks up stock prices"),
        ("zeta_translate", "Translates text"),
    ];
    let catalog = Catalog::new(
        tools
            .iter()
            .map(|(n, d)| json!({"name": n, "description": d, "inputSchema": {"type": "object"}}))
            .collect(),
    );
    let ix = SearchIndex::build(&catalog, &Default::default());
    let vectors = axes(8, tools.len(), tools.len());
    // Nearest: alpha, delta, epsilon; beta far down. Every cosine is under MIN_COSINE_ALONE.
    let best = (MIN_COSINE_AGREED + MIN_COSINE_ALONE) / 2.0;
    let mut q = [
        best,
        0.05,
        0.05,
        best - 0.01,
        best - 0.015,
        best - 0.02,
        0.0,
        0.0,
    ];
    q[6] = (1.0 - q.iter().map(|x| x * x).sum::<f32>()).sqrt();
    let ask = |text: &str| {
        let opts = with(&vectors, &q);
        let reply = ix.search_with(text, &HashSet::new(), &opts);
        let results = reply.json["results"].as_array().unwrap().clone();
        let names = results
            .iter()
            .map(|r| r["name"].as_str().unwrap().to_string())
            .collect::<Vec<String>>();
        (names, reply.json.get("weak") == Some(&json!(true)))
    };
    let (agreed, weak) = ask("quarterly sales report");
    assert_eq!(agreed.first().map(String::as_str), Some("alpha_report"));
    assert!(!weak);
    let (names, weak) = ask("send an email");
    assert!(weak && !names.is_empty() && names.len() <= 3, "{names:?}");
}

/// A long request whose words clearly find a tool keeps it first, though its vector is
/// nearer another; one whose words barely match follows its vector.
#[test]
fn confident_keywords_keep_their_share_in_a_long_query() {
    let tools = [
        ("alpha_report", "Creates a quarterly sales report"),
        ("beta_mail", "Sends an email"),
        ("gamma_calendar", "Adds a calendar event"),
        ("delta_weather", "Gets the weather forecast"),
    ];
    // Twenty more tools, so that a word held by one tool is rare, as in a real catalog.
    let others =
        (0..20).map(|i| json!({"name": format!("other_{i}"), "description": "Handles an item"}));
    let catalog = Catalog::new(
        tools
            .iter()
            .map(|(n, d)| json!({"name": n, "description": d}))
            .chain(others)
            .collect(),
    );
    let ix = SearchIndex::build(&catalog, &Default::default());
    let vectors = axes(5, catalog.tools().len(), tools.len());
    // Nearest by vector: delta (0.6), then alpha (0.35).
    let mut q = [0.35f32, 0.0, 0.0, 0.6, 0.0];
    q[4] = (1.0 - q.iter().map(|x| x * x).sum::<f32>()).sqrt();
    let first = |text: &str| {
        let opts = QueryOptions {
            always_answer: true,
            ..with(&vectors, &q)
        };
        let r = ix.search_with(text, &HashSet::new(), &opts);
        r.json["results"][0]["name"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let filler = "when you get a moment today after lunch and before the afternoon standup";
    assert_eq!(
        first(&format!("{filler} create the quarterly sales report")),
        "alpha_report"
    );
    assert_eq!(first(&format!("{filler} a report")), "delta_weather");
}

/// A query none of whose words the catalog holds, far from every tool, gets nothing; the
/// same words near a tool get it, marked weak.
#[test]
fn no_word_and_no_near_tool_is_nothing() {
    let catalog = Catalog::new(
        (0..4)
            .map(|i| json!({"name": format!("tool_{i}"), "description": "Sends a message"}))
            .collect(),
    );
    let ix = SearchIndex::build(&catalog, &Default::default());
    let vectors = axes(5, 4, 4);
    let ask = |near: f32| {
        let q = [near, 0.0, 0.0, 0.0, (1.0 - near * near).sqrt()];
        let opts = with(&vectors, &q);
        let r = ix.search_with("zebra quartz", &HashSet::new(), &opts);
        let n = r.json["results"].as_array().unwrap().len();
        (n, r.json.get("weak").is_some())
    };
    assert_eq!(ask(MIN_COSINE_NOTHING - 0.05), (0, false));
    let (n, weak) = ask(MIN_COSINE_NOTHING + 0.05);
    assert!(weak && (1..=3).contains(&n), "{n}");
}
