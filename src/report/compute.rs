//! `compute`: every figure of `mws report` from its `Inputs`, one named step per part of the
//! `Report` (the listing, the tools by use, the call totals, the sizes, the searches, the
//! clients, the checks). Pure: no I/O, no clock, no SQL.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use super::{
    Calls, Checks, ClientOut, HitRate, Inputs, ListedTool, MAX_CANDIDATES, META_TOOLS, ProjectOut,
    ProjectsOut, Report, Searches, Sizes, ToolOut, Usage, Via, WindowOut, shape, tokens,
};
use crate::clock;
use crate::store::report::{ToolUsageRow, WorkingSetRow};

/// The window's usage rows and the working set, by tool name.
struct ByTool<'a> {
    usage: HashMap<&'a str, &'a ToolUsageRow>,
    ws: HashMap<&'a str, &'a WorkingSetRow>,
}

/// Computes every figure of the report.
pub fn compute(i: &Inputs) -> Report {
    let span = i.window.span(i.now);
    let by_tool = ByTool {
        usage: i.usage.iter().map(|u| (u.tool.as_str(), u)).collect(),
        ws: i.working_set.iter().map(|w| (w.tool.as_str(), w)).collect(),
    };
    let (listed, listed_names) = listing(i, &by_tool);
    let tools = tools_by_use(i, &listed_names);
    let candidates = candidates(&tools);
    let (calls, ok_not_call_tool) = call_totals(i);
    Report {
        generated_at: clock::fmt(i.now),
        window: WindowOut {
            label: i.window.label.clone(),
            since: span.since,
            until: span.until,
        },
        tokenizer: i.tokenizer.kind().encoding(),
        upstream: i.upstream.clone(),
        sizes: sizes(i),
        listing_mode: shape::ListingMode {
            all: i.mode.all,
            why: i.mode.why.clone(),
        },
        listed,
        candidates,
        searches: searches(i),
        hit_rate: HitRate::new(calls.ok, ok_not_call_tool, i.hits),
        calls,
        clients: clients(i),
        projects: projects(i),
        tools,
        checks: Checks {
            policy_hidden: i.policy_hidden,
            invalid_args: i.refused.invalid_args,
            denied_by_policy: i.refused.denied_by_policy,
            results_shaped: i.refused.shaped,
            bytes_saved: i.refused.bytes_saved,
        },
    }
}

/// The listing as served, then working-set tools the upstream does not list; and the names
/// (upstream names, `""` for the meta-tools) of every tool in it.
fn listing(i: &Inputs, by_tool: &ByTool) -> (Vec<ListedTool>, HashSet<String>) {
    let mut listed = Vec::new();
    let mut listed_names = HashSet::new();
    for (n, tool) in i.listed.iter().enumerate() {
        let (key, entry) = served_tool(i, by_tool, n, tool);
        listed_names.insert(key.to_string());
        listed.push(entry);
    }
    for w in i.working_set {
        if listed_names.insert(w.tool.clone()) {
            listed.push(ListedTool {
                name: w.tool.clone(),
                position: None,
                reason: w.reason.clone(),
                since: Some(w.since.clone()),
                bytes: 0,
                tokens: 0,
                in_catalog: i.catalog.contains(&w.tool),
                usage: usage_of(
                    by_tool.usage.get(w.tool.as_str()).copied(),
                    i.last_success.get(&w.tool),
                ),
            });
        }
    }
    (listed, listed_names)
}

/// The `n`th tool of the listing as served, and the name it is recorded under.
fn served_tool<'a>(
    i: &'a Inputs,
    by_tool: &ByTool,
    n: usize,
    tool: &'a Value,
) -> (&'a str, ListedTool) {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let size = tokens::tool_size(i.tokenizer, tool);
    // The meta-tools come first. An upstream tool named like one is listed as
    // `upstream__<name>` and recorded (working set, calls) under its upstream name.
    let meta = n < META_TOOLS.len() && META_TOOLS.contains(&name);
    let key = if meta {
        ""
    } else {
        crate::catalog::exposed::upstream_name(i.catalog, name)
    };
    let w = by_tool.ws.get(key);
    let reason = match w {
        Some(w) => w.reason.clone(),
        None if meta => "meta-tool".into(),
        None if i.pins.iter().any(|p| p == key) => "pin".into(),
        None => "listed".into(),
    };
    let entry = ListedTool {
        name: name.to_string(),
        position: Some(n + 1),
        reason,
        since: w.map(|w| w.since.clone()),
        bytes: size.bytes,
        tokens: size.tokens,
        in_catalog: i.catalog.contains(key),
        usage: usage_of(by_tool.usage.get(key).copied(), i.last_success.get(key)),
    };
    (key, entry)
}

/// Every tool called in the window, most used first (sessions, then successes, then calls).
fn tools_by_use(i: &Inputs, listed_names: &HashSet<String>) -> Vec<ToolOut> {
    let mut tools: Vec<ToolOut> = i
        .usage
        .iter()
        .map(|u| ToolOut {
            name: u.tool.clone(),
            listed: listed_names.contains(&u.tool),
            in_catalog: i.catalog.contains(&u.tool),
            usage: usage_of(Some(u), i.last_success.get(&u.tool)),
        })
        .collect();
    tools.sort_by(|a, b| {
        (b.usage.ok_sessions, b.usage.ok, b.usage.calls)
            .cmp(&(a.usage.ok_sessions, a.usage.ok, a.usage.calls))
            .then_with(|| a.name.cmp(&b.name))
    });
    tools
}

/// The most used tools that are not listed, at most `MAX_CANDIDATES`.
fn candidates(tools: &[ToolOut]) -> Vec<ToolOut> {
    tools
        .iter()
        .filter(|t| !t.listed)
        .take(MAX_CANDIDATES)
        .cloned()
        .collect()
}

/// The window's calls summed over tools, and the successful ones not made through `call_tool`.
fn call_totals(i: &Inputs) -> (Calls, u64) {
    let mut calls = Calls {
        total: 0,
        ok: 0,
        errors: 0,
        sessions: i.sessions,
        via: Via::default(),
    };
    let mut ok_not_call_tool = 0;
    for u in i.usage {
        calls.total += u.calls;
        calls.ok += u.ok;
        calls.via.direct += u.direct;
        calls.via.call_tool += u.call_tool;
        calls.via.transcript += u.transcript;
        ok_not_call_tool += u.ok_not_call_tool;
    }
    calls.errors = calls.total - calls.ok;
    (calls, ok_not_call_tool)
}

/// The upstream's `tools/list` against the one served, and what listing less saves.
fn sizes(i: &Inputs) -> Sizes {
    let upstream = tokens::list_size(i.tokenizer, i.catalog.tools());
    let listed = tokens::list_size(i.tokenizer, i.listed);
    let saved = upstream.minus(listed);
    Sizes {
        upstream,
        listed,
        saved,
        saved_token_share: (!i.catalog.is_empty())
            .then(|| share(saved.tokens as u64, upstream.tokens as u64))
            .flatten(),
        largest_search_reply_bytes: i.searches.max_reply_bytes,
    }
}

/// The window's `search_tools` calls: how many, how many found nothing, reply sizes, modes.
fn searches(i: &Inputs) -> Searches {
    let s = i.searches;
    Searches {
        count: s.count,
        zero_results: s.zero_results,
        zero_result_share: share(s.zero_results, s.count),
        avg_reply_bytes: (s.count > 0).then(|| (s.total_reply_bytes + s.count / 2) / s.count),
        max_reply_bytes: s.max_reply_bytes,
        by_mode: s
            .by_mode
            .iter()
            .map(|(m, n)| (m.clone(), Value::from(*n)))
            .collect(),
        semantic_ranking: i.semantic_ranking.clone(),
    }
}

/// The window's calls per client.
fn clients(i: &Inputs) -> Vec<ClientOut> {
    i.clients
        .iter()
        .map(|c| ClientOut {
            client: c.client.clone(),
            calls: c.calls,
            ok: c.ok,
            errors: c.calls - c.ok,
            sessions: c.sessions,
        })
        .collect()
}

/// The window's calls per known project.
fn projects(i: &Inputs) -> ProjectsOut {
    ProjectsOut {
        per_project: i.per_project,
        ok_with_project: i.projects.iter().map(|p| p.ok).sum(),
        projects: i
            .projects
            .iter()
            .map(|p| ProjectOut {
                project: p.project.clone(),
                calls: p.calls,
                ok: p.ok,
                sessions: p.sessions,
                own_tools: p.own_tools,
            })
            .collect(),
    }
}

/// One tool's use in the window (`row`; `None`: not called), with its last success at any time.
fn usage_of(row: Option<&ToolUsageRow>, last_success: Option<&String>) -> Usage {
    let Some(r) = row else {
        return Usage {
            last_success: last_success.cloned(),
            ..Usage::default()
        };
    };
    Usage {
        calls: r.calls,
        ok: r.ok,
        errors: r.calls - r.ok,
        sessions: r.sessions,
        ok_sessions: r.ok_sessions,
        via: Via {
            direct: r.direct,
            call_tool: r.call_tool,
            transcript: r.transcript,
        },
        last_call: r.last_call.clone(),
        last_success: last_success.cloned(),
    }
}

/// `part / whole`; `None` when `whole` is 0.
fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}
