//! Tests of the search modes and the reply budget, on real catalogs from fixtures/catalogs, the
//! project's 60-tool catalog, a gateway-style merge of real catalogs (`server__tool`) and a
//! synthetic 300-tool catalog with 10 KB descriptions.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use serde_json::{Value, json};

use super::*;

pub(super) fn load(rel: &str) -> Catalog {
    Catalog::load_file(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(rel),
    )
    .unwrap()
}

pub(super) fn index(c: &Catalog) -> SearchIndex {
    SearchIndex::build(c, &SearchOptions::default())
}

/// A gateway catalog: real servers' tools renamed `server__tool`.
fn gateway() -> Catalog {
    let mut tools = Vec::new();
    for server in ["slack", "playwright", "filesystem"] {
        for t in load(&format!("catalogs/{server}.json")).tools() {
            let mut t = t.clone();
            let name = format!("{server}__{}", t["name"].as_str().unwrap());
            t["name"] = json!(name);
            tools.push(t);
        }
    }
    Catalog::new(tools)
}

/// The names a reply lists, in order; for the tests of every search module.
pub(super) fn names(r: &Reply) -> Vec<String> {
    r.json["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap().to_string())
        .collect()
}

/// Every reply is valid JSON and, except the uncapped exact mode, within the budget.
pub(super) fn valid(r: &Reply) {
    let v: Value = serde_json::from_str(&r.text).expect("reply is JSON");
    assert_eq!(v, *r.json);
    assert_eq!(r.json.to_string(), r.text);
    assert_eq!(
        serde_json::to_string(&v).unwrap(),
        r.text,
        "compact, as serde_json writes it"
    );
    assert_eq!(v["mode"], r.mode);
    if r.mode != "exact" {
        assert!(r.text.len() <= REPLY_BUDGET, "{} bytes", r.text.len());
    }
}

pub(super) fn search(ix: &SearchIndex, q: &str) -> Reply {
    let r = ix.search(q, &HashSet::new());
    valid(&r);
    r
}

#[test]
fn exact_name_with_and_without_backend_prefix() {
    let slack = load("catalogs/slack.json");
    let ix = index(&slack);
    for q in [
        "slack_post_message",
        "post_message",
        "POST_MESSAGE",
        "mcp__toolbox__slack_post_message",
    ] {
        let r = search(&ix, q);
        assert_eq!(
            (r.mode, names(&r)),
            ("exact", vec!["slack_post_message".to_string()]),
            "{q}"
        );
        let got = &r.json["results"][0];
        assert_eq!(
            got["inputSchema"],
            slack.get("slack_post_message").unwrap()["inputSchema"]
        );
        assert_eq!(
            got["call_tool"]["arguments"],
            json!({"channel_id": "<channel_id>", "text": "<text>"})
        );
    }
    // A catalog without backends (verb-first names): the full upstream schema, uncapped.
    let gh = load("catalogs/github-official.json");
    let r = search(&index(&gh), "create_pull_request");
    assert_eq!(r.mode, "exact");
    assert_eq!(
        r.json["results"][0]["inputSchema"],
        gh.get("create_pull_request").unwrap()["inputSchema"]
    );
    assert_eq!(
        r.json["results"][0]["description"],
        gh.get("create_pull_request").unwrap()["description"]
    );
    // Gateway names.
    let r = search(&index(&gateway()), "read_text_file");
    assert_eq!(names(&r), ["filesystem__read_text_file"]);
}

#[test]
fn a_local_name_in_two_backends_is_ranked_not_exact() {
    let r = search(&index(&load("catalog.json")), "read_file");
    assert_eq!(r.mode, "ranked");
    let mut top2 = names(&r)[..2].to_vec();
    top2.sort();
    assert_eq!(top2, ["codesearch_read_file", "drive_read_file"]);
}

#[test]
fn backend_lists_its_tools_in_upstream_order() {
    let pw = load("catalogs/playwright.json");
    let r = search(&index(&pw), "browser");
    assert_eq!(r.mode, "backend");
    let all: Vec<String> = pw.names().map(String::from).collect();
    let got = names(&r);
    assert_eq!(got[..], all[..got.len()], "a prefix of upstream order");
    let more = r.json["more"].as_u64().unwrap_or(0) as usize;
    assert_eq!(got.len() + more, all.len());

    let gw = gateway();
    let r = search(&index(&gw), "slack");
    assert_eq!(r.json["backend"], "slack");
    assert_eq!(names(&r).len(), 8);
    assert!(names(&r).iter().all(|n| n.starts_with("slack__")));
}

#[test]
fn backend_plus_words_ranks_inside_the_backend() {
    let gw = gateway();
    let ix = index(&gw);
    let r = search(&ix, "filesystem read a file");
    assert_eq!(
        (r.mode, &r.json["backend"]),
        ("ranked", &json!("filesystem"))
    );
    let got = names(&r);
    assert!(got.iter().all(|n| n.starts_with("filesystem__")), "{got:?}");
    assert!(got[0].starts_with("filesystem__read_"), "{got:?}");
    // The same words without the backend also find browser tools (file upload).
    let all = names(&search(&ix, "upload a file"));
    assert!(all.iter().any(|n| n.starts_with("playwright__")), "{all:?}");
    let r = search(&ix, "playwright click");
    assert_eq!(names(&r)[0], "playwright__browser_click");
    let r = search(&index(&load("catalog.json")), "browser click");
    assert_eq!(names(&r), ["browser_click"]);
    // A backend's name that is a plain word of a request whose other words its tools hold
    // weakly ("list") or not at all: the whole catalog ranks every word.
    for q in [
        "slack allowed directories",
        "slack list allowed directories",
    ] {
        let r = search(&ix, q);
        assert_eq!(r.json.get("backend"), None, "{}", r.text);
        assert_eq!(names(&r)[0], "filesystem__list_allowed_directories");
    }
}

#[test]
fn empty_query_groups_by_backend_and_marks_listed() {
    let gw = gateway();
    let listed: HashSet<String> = ["slack__slack_post_message".to_string()].into();
    let r = index(&gw).search("  ", &listed);
    valid(&r);
    assert_eq!(r.mode, "catalog");
    let groups = r.json["results"].as_array().unwrap();
    let backends: Vec<&str> = groups
        .iter()
        .map(|g| g["backend"].as_str().unwrap())
        .collect();
    assert_eq!(backends, ["slack", "playwright", "filesystem"]);
    assert_eq!(groups[0]["tools"][1], "slack__slack_post_message*");
    assert_eq!(groups[0]["tools"][0], "slack__slack_list_channels");
    assert_eq!(r.result_count, gw.len());

    let r = search(&index(&load("catalogs/github-official.json")), "");
    let groups = r.json["results"].as_array().unwrap();
    assert_eq!(groups.len(), 1);
    assert_eq!(groups[0]["backend"], whole_catalog::NO_BACKEND);
}

#[test]
fn empty_query_over_budget_keeps_every_backend_and_counts_the_rest() {
    let live = load("livemcp-catalog.json");
    let r = search(&index(&live), "");
    let groups = r.json["results"].as_array().unwrap();
    let shown: usize = groups
        .iter()
        .map(|g| g["tools"].as_array().unwrap().len())
        .sum();
    let more: u64 = groups
        .iter()
        .filter_map(|g| g["more"].as_u64())
        .sum::<u64>()
        + r.json["more"].as_u64().unwrap_or(0);
    assert_eq!(shown + more as usize, live.len());
    assert_eq!(r.result_count, shown);
    assert!(shown > 0 && more > 0);
}

#[test]
fn schemas_and_templates_only_for_the_top_three() {
    let r = search(&index(&load("catalog.json")), "share a file");
    let res = r.json["results"].as_array().unwrap();
    assert_eq!(res[0]["name"], "drive_share_file");
    assert!(res.len() > SCHEMA_RESULTS);
    for (i, x) in res.iter().enumerate() {
        assert_eq!(x.get("inputSchema").is_some(), i < SCHEMA_RESULTS, "{i}");
        assert_eq!(x.get("call_tool").is_some(), i < SCHEMA_RESULTS, "{i}");
    }
}

#[test]
fn aliases_and_hints_from_the_config() {
    let gh = load("catalogs/github-official.json");
    assert_eq!(search(&index(&gh), "jira").json["results"], json!([]));
    let mut aliases = BTreeMap::new();
    aliases.insert("jira".to_string(), vec!["issue".to_string()]);
    let ix = SearchIndex::build(
        &gh,
        &SearchOptions {
            aliases,
            ..Default::default()
        },
    );
    assert!(
        names(&search(&ix, "jira"))
            .iter()
            .any(|n| n.contains("issue"))
    );

    let mut backend_hints = BTreeMap::new();
    backend_hints.insert("mail".to_string(), "work email (Gmail)".to_string());
    let ix = SearchIndex::build(
        &load("catalog.json"),
        &SearchOptions {
            backend_hints,
            ..Default::default()
        },
    );
    assert_eq!(search(&ix, "mail").json["label"], "work email (Gmail)");
    assert_eq!(
        search(&ix, "").json["results"][0]["label"],
        "work email (Gmail)"
    );
}

#[test]
fn explain_adds_up_to_the_ranking() {
    let ix = index(&load("catalog.json"));
    let opts = QueryOptions {
        explain: true,
        ..Default::default()
    };
    let r = ix.search_with("share a file with bob", &HashSet::new(), &opts);
    assert_eq!(r.explain.len(), r.result_count);
    let e = &r.explain[0];
    assert_eq!(e.name, "drive_share_file");
    assert!(e.name_bonus > 1.0, "the name holds share and file");
    let sum: f32 = e.words.iter().map(|w| w.score).sum();
    assert!((sum - e.base).abs() < 1e-4 && (e.base * e.name_bonus - e.score).abs() < 1e-4);
    assert!(r.explain.windows(2).all(|w| w[0].score >= w[1].score));
}

/// 300 tools with 10 KB descriptions and growing schemas: each budget stage in turn.
#[test]
fn budget_trims_descriptions_then_schemas_then_entries() {
    let long = "alpha ".repeat(10 * 1024 / 6);
    let tools: Vec<Value> = (0..300)
        .map(|i| {
            let props: serde_json::Map<String, Value> = (0..(i % 40))
                .map(|p| {
                    (
                        format!("param_{p}"),
                        json!({"type": "string", "description": "x".repeat(60)}),
                    )
                })
                .collect();
            json!({"name": format!("bulk_tool_{i:03}"), "description": format!("tool {i}: {long}"),
                   "inputSchema": {"type": "object", "properties": props, "required": ["param_0"]}})
        })
        .collect();
    let c = Catalog::new(tools);
    let ix = index(&c);
    let run = |q: &str, limit: usize| {
        let r = ix.search_with(
            q,
            &HashSet::new(),
            &QueryOptions {
                limit: Some(limit),
                ..Default::default()
            },
        );
        valid(&r);
        r
    };
    // Stage 1: two small-schema results fit once descriptions are trimmed.
    let r = run("bulk_tool_001 bulk_tool_002", 2);
    assert!(r.trimmed.description_cap.is_some());
    assert_eq!(
        (r.trimmed.schemas_dropped, r.trimmed.entries_dropped),
        (0, 0)
    );
    let d = r.json["results"][0]["description"].as_str().unwrap();
    assert!(d.ends_with('…') && d.chars().count() <= DESCRIPTION_CAPS[0] + 1);
    // Stage 2 and 3: many results with big schemas lose schemas, then the lowest entries.
    let r = run("alpha", 300);
    assert_eq!(
        r.trimmed.description_cap,
        Some(*DESCRIPTION_CAPS.last().unwrap())
    );
    assert_eq!(r.trimmed.schemas_dropped, SCHEMA_RESULTS);
    assert!(r.trimmed.entries_dropped > 0);
    assert_eq!(
        r.json["more"].as_u64().unwrap() as usize,
        300 - r.result_count
    );
    assert!(r.json["results"][0].get("inputSchema").is_none());
}

#[test]
fn words_with_non_ascii_letters_split_like_ascii_ones() {
    assert_eq!(
        tokens("ÜberCool naïveTest café_menu"),
        ["über", "cool", "naïve", "test", "café", "menu"]
    );
}

#[test]
fn a_request_in_chinese_finds_the_tool_its_chinese_description_names() {
    let c = Catalog::new(vec![
        json!({"name": "gitee_create_issue", "description": "在仓库中创建一个新的问题", "inputSchema": {"type": "object"}}),
        json!({"name": "gitee_list_repos", "description": "列出用户的所有仓库", "inputSchema": {"type": "object"}}),
        json!({"name": "maps_distance", "description": "计算两个城市之间的驾车距离", "inputSchema": {"type": "object"}}),
    ]);
    let ix = index(&c);
    assert_eq!(names(&search(&ix, "创建问题"))[0], "gitee_create_issue");
    assert_eq!(names(&search(&ix, "两个城市的距离"))[0], "maps_distance");
}

#[test]
fn indexed_prefixes_count_characters_not_bytes() {
    for (s, chars, want) in [
        ("abcdef", 3, "abc"),
        ("abc", 3, "abc"),
        ("abcé", 3, "abc"),
        ("ab€cd", 3, "ab€"),
        ("€€€€", 2, "€€"),
    ] {
        assert_eq!(prefix(s, chars), want, "{s} {chars}");
    }
}

#[test]
fn halves_cut_apart_and_appended_give_the_tokens_of_one_pass() {
    let live = load("livemcp-catalog.json");
    let tools = live.tools();
    let whole = tokenize_tools(tools);
    for at in [0, 1, tools.len() / 2, tools.len() - 1, tools.len()] {
        let (first, second) = tools.split_at(at);
        let mut joined = tokenize_tools(first);
        joined.append(tokenize_tools(second));
        assert!(joined.same_as(&whole), "split at {at}");
    }
    let big: Vec<Value> = tools
        .iter()
        .cycle()
        .take(PARALLEL_FROM + 1)
        .cloned()
        .collect();
    assert!(tokenize_halves(&big).same_as(&tokenize_tools(&big)));
}
