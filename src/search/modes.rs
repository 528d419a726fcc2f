//! The modes of docs/search.md, by the query's shape: empty → the catalog grouped by backend;
//! an exact tool name (with or without its backend prefix, or with the `mcp__<server>__` prefix a
//! client shows) → that tool, uncapped; a backend name → its tools in upstream order; a backend
//! name plus words → ranked inside that backend; anything else → ranked. A ranked reply whose best
//! tool is a weak match (`SearchIndex::min_confidence`, `semantic::weak`) shows only the nearest
//! `WEAK_RESULTS`, marked `"weak": true`; one whose words the catalog lacks entirely (and, with
//! vectors, far from every tool) is nothing. Pure.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::prior::PRIOR_EXTRA;
use super::purpose::PURPOSE_EXTRA;
use super::query::step;
use super::reply::{self, Entry, json_len};
use super::semantic::{Fused, Strength, fused, keyword_share};
use super::tokenize::tokens;
use super::{
    DEFAULT_LIMIT, QueryOptions, REPLY_BUDGET, Reply, ReplyJson, SearchIndex, Trimmed, Variant,
};

/// Group label in the empty-query reply for tools without a backend.
pub const NO_BACKEND: &str = "(other)";

/// Results a weak reply shows: the nearest few, not a page of weak matches.
pub const WEAK_RESULTS: usize = 3;

/// The prefix Claude Code shows before MCP tool names (`mcp__<server>__<tool>`).
const CLIENT_PREFIX: &str = "mcp__";

pub fn run(ix: &SearchIndex, query: &str, listed: &HashSet<String>, opts: &QueryOptions) -> Reply {
    let q = query.trim();
    if q.is_empty() {
        return catalog(ix, listed);
    }
    if let Some(tool) = exact(ix, q) {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        let e = Entry {
            tool,
            listed: listed.contains(name),
        };
        let b = reply::results("exact", &[], &[e], 0, None, None, opts.script);
        return finish("exact", None, b.text, b.shown, b.trimmed, Vec::new());
    }
    let words: Vec<&str> = q.split_whitespace().collect();
    let backend_word = |w: &str| {
        step(1);
        ix.backends
            .find(w.trim_matches(|c: char| !c.is_alphanumeric() && c != '-' && c != '_'))
    };
    if words.len() == 1
        && let Some(b) = backend_word(words[0])
    {
        return backend(ix, b, listed, opts);
    }
    // The first word that names a backend restricts the ranking to it; the other words rank.
    let mut restrict = None;
    let mut rest = String::with_capacity(q.len() + 1);
    for w in &words {
        if restrict.is_none()
            && let Some(b) = backend_word(w)
        {
            restrict = Some(b);
            continue;
        }
        rest.push_str(w);
        rest.push(' ');
    }
    ranked(ix, &rest, restrict, listed, opts)
}

fn finish(
    mode: &'static str,
    value: Option<Value>,
    text: String,
    shown: usize,
    trimmed: Trimmed,
    explain: Vec<super::Explain>,
) -> Reply {
    let json = match value {
        Some(v) => ReplyJson::with_value(&text, v),
        None => ReplyJson::later(&text),
    };
    Reply {
        json,
        text,
        mode,
        result_count: shown,
        trimmed,
        explain,
    }
}

/// The tool `q` names exactly: the full name, the client-prefixed name, the name without its
/// backend prefix when that is unique, or any of these ignoring ASCII case when unique.
fn exact<'a>(ix: &'a SearchIndex, q: &str) -> Option<&'a Value> {
    let cat = &ix.catalog;
    if q.contains(char::is_whitespace) {
        return cat.get(q); // tool names have no spaces; spare ranked queries the scan below
    }
    if let Some(t) = cat.get(q) {
        return Some(t);
    }
    if let Some(rest) = q.strip_prefix(CLIENT_PREFIX)
        && let Some(i) = rest.find("__")
        && let Some(t) = cat.get(&rest[i + 2..])
    {
        return Some(t);
    }
    let lower = q.to_lowercase();
    if let Some(&d) = ix.local_names.get(lower.as_str())
        && d != super::AMBIGUOUS
    {
        return Some(&cat.tools()[d as usize]);
    }
    let mut hits = cat.tools().iter().filter(|t| {
        t.get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| n.eq_ignore_ascii_case(q))
    });
    match (hits.next(), hits.next()) {
        (Some(t), None) => Some(t),
        _ => None,
    }
}

fn hint_extra(ix: &SearchIndex, b: u32) -> Vec<(&'static str, Value)> {
    let name = &ix.backends.names[b as usize];
    let mut extra = vec![("backend", Value::String(name.clone()))];
    if let Some(h) = ix.hints.get(name) {
        extra.push(("label", Value::String(h.clone())));
    }
    extra
}

/// A backend's tools in upstream order.
fn backend(ix: &SearchIndex, b: u32, listed: &HashSet<String>, opts: &QueryOptions) -> Reply {
    let tools = ix.catalog.tools();
    let all: Vec<Entry> = (0..tools.len())
        .filter(|&d| ix.backends.of_tool[d].is_some_and(|(id, _)| id == b))
        .map(|d| entry(tools, d, listed))
        .collect();
    let limit = opts.limit.unwrap_or(usize::MAX).min(all.len());
    let extra = hint_extra(ix, b);
    let r = reply::results(
        "backend",
        &extra,
        &all[..limit],
        all.len() - limit,
        None,
        Some(REPLY_BUDGET),
        opts.script,
    );
    finish("backend", None, r.text, r.shown, r.trimmed, Vec::new())
}

/// After the tools of backend `b` that matched the words weakly, its others in upstream order,
/// up to `limit` in all: the query named the backend, so each of its tools is a candidate ("what
/// time is it in Tokyo" names the time server; "Tokyo" is in `convert_time`'s parameters, and
/// `get_current_time` holds no other word of the query). Returns how many were added.
fn fill_from_backend(ix: &SearchIndex, b: u32, hits: &mut Vec<(u32, f32)>, limit: usize) -> usize {
    let before = hits.len();
    let shown: HashSet<u32> = hits.iter().map(|h| h.0).collect();
    let rest = (0..ix.backends.of_tool.len() as u32)
        .filter(|&d| ix.backends.of_tool[d as usize].is_some_and(|(id, _)| id == b))
        .filter(|d| !shown.contains(d));
    for d in rest {
        if hits.len() >= limit {
            break;
        }
        hits.push((d, 0.0));
    }
    hits.len() - before
}

fn entry<'a>(tools: &'a [Value], d: usize, listed: &HashSet<String>) -> Entry<'a> {
    let tool = &tools[d];
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    Entry {
        tool,
        listed: listed.contains(name),
    }
}

/// BM25F ranking, optionally inside one backend.
fn ranked(
    ix: &SearchIndex,
    text: &str,
    restrict: Option<u32>,
    listed: &HashSet<String>,
    opts: &QueryOptions,
) -> Reply {
    let index = match (opts.variant, &ix.baseline) {
        (Some(Variant::PerFieldSum), Some(b)) => b,
        _ => &ix.index,
    };
    let query_tokens = tokens(text);
    let words = ix.query_words(index, &query_tokens);
    let limit = opts.limit.unwrap_or(DEFAULT_LIMIT);
    let prior = opts.prior.filter(|p| !p.is_empty());
    let allow = |d: u32| match restrict {
        None => true,
        Some(b) => ix.backends.of_tool[d as usize].is_some_and(|(id, _)| id == b),
    };
    let extra = if prior.is_some() { PRIOR_EXTRA } else { 0 } + PURPOSE_EXTRA;
    let sem = opts.semantic.filter(|s| s.vectors.count() > 0);
    // Not inside a backend the query named: that name is a match the words' strength does not
    // count.
    let may_be_nothing = restrict.is_none() && !opts.always_answer;
    let (mut hits, mut matched, strength) = match sem {
        None => {
            let (hits, matched) = ix.rank(index, &words, allow, limit + extra);
            let strength = match hits.first() {
                _ if !may_be_nothing => Strength::Close,
                None => Strength::Nothing,
                Some(&(top, _))
                    if ix.confidence(index, top as usize, &words)
                        < ix.min_confidence(index, &words) =>
                {
                    Strength::Weak
                }
                Some(_) => Strength::Close,
            };
            (hits, matched, strength)
        }
        Some(s) => fused(
            ix,
            Fused {
                index,
                words: &words,
                share: keyword_share(text.split_whitespace().count()),
                may_be_nothing,
            },
            &allow,
            s,
            limit + extra,
        ),
    };
    // A weak best: the nearest few, marked weak, with the hint (the right tool may be among
    // them; a model told they are weak calls one only if it fits).
    let weak = strength == Strength::Weak;
    if weak {
        hits.truncate(WEAK_RESULTS + extra);
        matched = matched.min(WEAK_RESULTS);
    }
    let tools = ix.catalog.tools();
    let name = |d: u32| {
        tools[d as usize]
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    let server = |d: u32| {
        let (b, _) = ix.backends.of_tool[d as usize]?;
        ix.purposes.part(b, &ix.backends.names, &query_tokens)
    };
    for h in &mut hits {
        h.1 *= server(h.0).map_or(1.0, |p| p.factor);
        h.1 *= prior.map_or(1.0, |p| p.factor(name(h.0)));
    }
    hits.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    hits.truncate(limit);
    if let Some(b) = restrict
        && let Some(&(top, _)) = hits.first()
        && ix.confidence(index, top as usize, &words) < ix.min_confidence(index, &words)
    {
        matched += fill_from_backend(ix, b, &mut hits, limit);
    }
    if weak {
        hits.truncate(WEAK_RESULTS);
    }
    let entries: Vec<Entry> = hits
        .iter()
        .map(|&(d, _)| entry(tools, d as usize, listed))
        .collect();
    let mut extra = restrict.map(|b| hint_extra(ix, b)).unwrap_or_default();
    if weak {
        extra.push(("weak", Value::Bool(true)));
    }
    let hint = if weak {
        Some(weak_hint(ix))
    } else {
        entries.is_empty().then(|| no_match_hint(ix, restrict))
    };
    let r = reply::results(
        "ranked",
        &extra,
        &entries,
        matched - entries.len(),
        hint.as_deref(),
        Some(REPLY_BUDGET),
        opts.script,
    );
    let explain = if opts.explain {
        hits.iter()
            .take(r.shown)
            .map(|&(d, _)| {
                let mut e = ix.explain(index, d as usize, &words);
                e.prior = prior.map_or(1.0, |p| p.factor(name(d)));
                e.server = server(d);
                e.cosine = sem.and_then(|s| s.vectors.cosine(d as usize, s.query));
                e
            })
            .collect()
    } else {
        Vec::new()
    };
    finish("ranked", None, r.text, r.shown, r.trimmed, explain)
}

/// The hint of a weak reply: its results are the nearest tools, none of them close.
fn weak_hint(ix: &SearchIndex) -> String {
    format!(
        "no close match: these are the nearest tools; call one only if it does what is asked, else {}",
        try_instead(ix)
    )
}

/// What to try when nothing matches: other words, a backend name, the whole catalog.
fn try_instead(ix: &SearchIndex) -> String {
    let names = &ix.backends.names;
    let backends = if names.is_empty() {
        String::new()
    } else {
        let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
        format!(", a backend name ({})", shown.join(", "))
    };
    format!(
        "try other words (what the tool does, or what it acts on){backends}, or an empty query to list every tool"
    )
}

fn no_match_hint(ix: &SearchIndex, restrict: Option<u32>) -> String {
    if let Some(b) = restrict {
        let name = &ix.backends.names[b as usize];
        return format!(
            "no {name} tool matches these words; search \"{name}\" alone to list its tools, or try other words"
        );
    }
    format!("no tool matches these words; {}", try_instead(ix))
}

/// The whole catalog grouped by backend, names only, listed tools marked `*`. Over budget, each
/// group keeps its first names and says how many more it has; groups that still do not fit are
/// dropped from the end and counted in `more`. Sizes are computed arithmetically (prefix sums of
/// the names' JSON lengths), so a 10,000-tool catalog costs one pass, not one build per try.
fn catalog(ix: &SearchIndex, listed: &HashSet<String>) -> Reply {
    let tools = ix.catalog.tools();
    let n_groups = ix.backends.names.len() + 1;
    let mut groups: Vec<Vec<String>> = vec![Vec::new(); n_groups];
    for (d, t) in tools.iter().enumerate() {
        let g = ix.backends.of_tool[d].map_or(n_groups - 1, |(id, _)| id as usize);
        let name = t.get("name").and_then(Value::as_str).unwrap_or("");
        let star = if listed.contains(name) { "*" } else { "" };
        groups[g].push(format!("{name}{star}"));
    }
    let label = |g: usize| -> Option<&str> { ix.backends.names.get(g).map(String::as_str) };
    let group_json = |g: usize, cap: usize| -> Value {
        let names = &groups[g];
        let mut m = Map::new();
        m.insert("backend".into(), json!(label(g).unwrap_or(NO_BACKEND)));
        if let Some(h) = label(g).and_then(|b| ix.hints.get(b)) {
            m.insert("label".into(), json!(h));
        }
        m.insert("tools".into(), json!(&names[..cap.min(names.len())]));
        if names.len() > cap {
            m.insert("more".into(), json!(names.len() - cap));
        }
        Value::Object(m)
    };
    let order: Vec<usize> = (0..n_groups).filter(|&g| !groups[g].is_empty()).collect();
    // Per group: its size with no names and no `more`, and prefix sums of its names' sizes.
    let prefix: Vec<Vec<usize>> = order
        .iter()
        .map(|&g| {
            let mut acc = vec![0usize];
            for n in &groups[g] {
                acc.push(acc.last().unwrap_or(&0) + json_str_len(n) + 1);
            }
            acc
        })
        .collect();
    let more_len = |m: usize| {
        if m == 0 {
            0
        } else {
            ",\"more\":".len() + digits(m)
        }
    };
    // `{"backend":..,"tools":[]}`: the group with cap 0, minus its `more` and the `[]`.
    let empty: Vec<usize> = order
        .iter()
        .map(|&g| json_len(&group_json(g, 0)) - more_len(groups[g].len()) - 2)
        .collect();
    let group_len = |i: usize, cap: usize| -> usize {
        let len = groups[order[i]].len();
        let k = cap.min(len);
        empty[i] + 2 + prefix[i][k] - usize::from(k > 0) + more_len(len - k)
    };
    let frame = json_len(&json!({"mode": "catalog", "total": tools.len(), "results": []}));
    let size = |cap: usize, keep: usize| -> usize {
        let groups_len: usize =
            (0..keep).map(|i| group_len(i, cap)).sum::<usize>() + keep.saturating_sub(1);
        let dropped: usize = order[keep..].iter().map(|&g| groups[g].len()).sum();
        frame + groups_len + more_len(dropped)
    };
    let largest = order.iter().map(|&g| groups[g].len()).max().unwrap_or(0);
    let (mut cap, mut keep) = (largest, order.len());
    if size(cap, keep) > REPLY_BUDGET {
        // The largest per-group cap that fits, by bisection; then drop groups from the end.
        let (mut lo, mut hi) = (0usize, largest);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if size(mid, keep) <= REPLY_BUDGET {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        cap = lo;
        while keep > 0 && size(cap, keep) > REPLY_BUDGET {
            keep -= 1;
        }
    }
    let results: Vec<Value> = order[..keep].iter().map(|&g| group_json(g, cap)).collect();
    let shown: usize = order[..keep]
        .iter()
        .map(|&g| groups[g].len().min(cap))
        .sum();
    let mut m = Map::new();
    m.insert("mode".into(), json!("catalog"));
    m.insert("total".into(), json!(tools.len()));
    m.insert("results".into(), Value::Array(results));
    if tools.len() - shown > 0 && keep < order.len() {
        let dropped: usize = order[keep..].iter().map(|&g| groups[g].len()).sum();
        m.insert("more".into(), json!(dropped));
    }
    let json = Value::Object(m);
    let text = serde_json::to_string(&json).unwrap_or_default();
    debug_assert_eq!(text.len(), size(cap, keep));
    let trimmed = Trimmed {
        entries_dropped: tools.len() - shown,
        ..Trimmed::default()
    };
    finish("catalog", Some(json), text, shown, trimmed, Vec::new())
}

/// Length of `s` as a JSON string literal.
fn json_str_len(s: &str) -> usize {
    2 + s
        .chars()
        .map(|c| match c {
            '"' | '\\' | '\n' | '\r' | '\t' | '\u{8}' | '\u{c}' => 2,
            c if (c as u32) < 0x20 => 6,
            c => c.len_utf8(),
        })
        .sum::<usize>()
}

fn digits(n: usize) -> usize {
    n.to_string().len()
}
