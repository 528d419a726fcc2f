//! The modes of docs/search.md, by the query's shape: empty → the catalog grouped by backend;
//! an exact tool name (with or without its backend prefix, or with the `mcp__<server>__` prefix a
//! client shows) → that tool, uncapped; a backend name → its tools in upstream order; a backend
//! name plus words → ranked inside that backend; anything else → ranked. A ranked reply whose best
//! tool is a weak match (`SearchIndex::min_confidence`, `semantic::weak`) shows only the nearest
//! `WEAK_RESULTS`, marked `"weak": true`; one whose words the catalog lacks entirely (and, with
//! vectors, far from every tool) is nothing, with the hints of `hints.rs`. Pure.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::entities;
use super::hints;
use super::prior::PRIOR_EXTRA;
use super::purpose::PURPOSE_EXTRA;
use super::query::step;
use super::reply::{self, Entry};
use super::semantic::{Fused, Strength, fused, keyword_share};
use super::tokenize::tokens;
use super::whole_catalog;
use super::{
    DEFAULT_LIMIT, QueryOptions, REPLY_BUDGET, Reply, ReplyJson, SearchIndex, Trimmed, Variant,
};

/// Results a weak reply shows: the nearest few, not a page of weak matches.
pub const WEAK_RESULTS: usize = 3;

/// The prefix Claude Code shows before MCP tool names (`mcp__<server>__<tool>`).
const CLIENT_PREFIX: &str = "mcp__";

pub fn run(ix: &SearchIndex, query: &str, listed: &HashSet<String>, opts: &QueryOptions) -> Reply {
    let q = query.trim();
    if q.is_empty() {
        return whole_catalog::catalog(ix, listed);
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
    let inside = ranked(ix, &rest, restrict, listed, opts);
    // The named backend's tools hold the other words weakly or not at all: the name may be a
    // plain word of the request ("is the page leaking memory? capture the JS heap" names a
    // memory server). The whole catalog ranks every word, the name included; its answer is
    // taken when the backend has none, or when its best is a close match in another backend
    // (for "what time is it in Tokyo" the time server's tools stay).
    if let Some(b) = restrict
        && inside.weak_inside
    {
        let whole = ranked(ix, q, None, listed, opts);
        let elsewhere = !whole.weak
            && whole
                .top
                .is_some_and(|d| ix.backends.of_tool[d as usize].is_none_or(|(id, _)| id != b));
        if inside.reply.result_count == 0 || elsewhere {
            return whole.reply;
        }
    }
    inside.reply
}

/// A ranked reply and what `run` decides on after it.
struct Ranked {
    reply: Reply,
    /// The best tool, if any.
    top: Option<u32>,
    /// The reply is weak or empty.
    weak: bool,
    /// Ranked inside a named backend, whose best keyword match is under the bar or absent.
    weak_inside: bool,
}

pub(super) fn finish(
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
) -> Ranked {
    let index = match (opts.variant, &ix.baseline) {
        (Some(Variant::PerFieldSum), Some(b)) => b,
        _ => &ix.index,
    };
    let read = entities::read(text);
    let kinds = read.kinds;
    let query_tokens = tokens(&read.text);
    // The words a value was read as (`url`, `file path`, `word document`) stand for what the
    // request holds; widened by synonyms, `url` would find tools about links and `file` tools
    // about docs. A word the user typed as well (the request holds it more often than the
    // values put it in) keeps its synonyms.
    let derived: HashSet<String> = if read.added.is_empty() {
        HashSet::new()
    } else {
        // Per word the values put in: how often they put it in, and how often the request
        // holds it (linear in the request's words, however many values it holds).
        let mut counts: HashMap<String, (usize, usize)> = HashMap::new();
        for t in tokens(&read.added.join(" ")) {
            counts.entry(t).or_default().0 += 1;
        }
        for t in &query_tokens {
            if let Some(c) = counts.get_mut(t.as_str()) {
                c.1 += 1;
            }
        }
        counts
            .into_iter()
            .filter(|&(_, (put_in, held))| held <= put_in)
            .map(|(t, _)| t)
            .collect()
    };
    let words = ix.query_words(index, &query_tokens, &derived);
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
            let (hits, matched) = ix.rank(index, &words, kinds, allow, limit + extra);
            let strength = match hits.first() {
                _ if !may_be_nothing => Strength::Close,
                None => Strength::Nothing,
                Some(&(top, _)) if ix.weak_best(index, top as usize, &words) => Strength::Weak,
                Some(_) => Strength::Close,
            };
            (hits, matched, strength)
        }
        Some(s) => fused(
            ix,
            Fused {
                index,
                words: &words,
                kinds,
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
    let weak_inside = restrict.is_some()
        && hits.first().is_none_or(|&(top, _)| {
            ix.confidence(index, top as usize, &words) < ix.min_confidence(index, &words)
        });
    if let Some(b) = restrict
        && weak_inside
        && !hits.is_empty()
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
    let hint = if weak || entries.is_empty() {
        let unknown = hints::unknown_words(text, &words, &derived);
        Some(if weak {
            hints::weak(ix, &unknown)
        } else {
            hints::no_match(ix, restrict, &unknown)
        })
    } else {
        None
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
                let mut e = ix.explain(index, d as usize, &words, kinds);
                e.prior = prior.map_or(1.0, |p| p.factor(name(d)));
                e.server = server(d);
                e.cosine = sem.and_then(|s| s.vectors.cosine(d as usize, s.query));
                e
            })
            .collect()
    } else {
        Vec::new()
    };
    Ranked {
        reply: finish("ranked", None, r.text, r.shown, r.trimmed, explain),
        top: hits.first().map(|h| h.0),
        weak: weak || hits.is_empty(),
        weak_inside,
    }
}
