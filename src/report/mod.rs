//! `mws report` figures (docs/working-set.md): `store::report` rows, a catalog in, a `Report` out,
//! rendered as tables (`render`) or serialized as the documented JSON shape. Pure: no I/O, no
//! clock (`now` is an input), no SQL.

pub mod aggregate;
pub mod hit_rate;
pub mod render;
pub mod shape;
pub mod tokens;

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;

use crate::catalog::Catalog;
use crate::clock;
use crate::store::report::{ClientRow, RefusedRow, SearchRow, Span, ToolUsageRow, WorkingSetRow};
use crate::upstream::{ServerState, UpstreamStatus};

pub use hit_rate::HitRate;
pub use shape::{
    Calls, Checks, ClientOut, ListedTool, Report, Searches, Sizes, ToolOut, Usage, Via, WindowOut,
};
pub use tokens::{Size, Tokenizer, TokenizerKind};

/// Most promotion candidates shown. Raising it lengthens the table, not the work.
pub const MAX_CANDIDATES: usize = 10;

/// The meta-tools the proxy lists ahead of the working set.
pub const META_TOOLS: &[&str] = &crate::catalog::exposed::META_NAMES;

/// The report window: the last `duration`, named as the user wrote it (`7d`).
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub label: String,
    pub duration: time::Duration,
}

impl Window {
    /// Parses `24h`, `7d`, `30d`, `2w`: a whole number and a unit (h, d or w).
    pub fn parse(s: &str) -> Result<Window, String> {
        let bad = || {
            format!("--since {s:?}: expected a number and a unit h, d or w, like 24h, 7d or 30d")
        };
        let s = s.trim();
        let unit = s.chars().last().ok_or_else(bad)?;
        let n: i64 = s[..s.len() - unit.len_utf8()].parse().map_err(|_| bad())?;
        if n <= 0 {
            return Err(bad());
        }
        let duration = match unit {
            'h' => time::Duration::hours(n),
            'd' => time::Duration::days(n),
            'w' => time::Duration::weeks(n),
            _ => return Err(bad()),
        };
        Ok(Window {
            label: s.to_string(),
            duration,
        })
    }

    /// `[now - duration, now]` in the stored timestamp form.
    pub fn span(&self, now: OffsetDateTime) -> Span {
        Span {
            since: clock::fmt(now - self.duration),
            until: clock::fmt(now),
        }
    }
}

/// What is known of the upstream right now (from a live connection, else nothing).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamInfo {
    /// The configured URL, or the command line of a stdio child.
    pub target: String,
    pub reachable: bool,
    /// `2026-07-28 (stateless)` or `2025 (session)`.
    pub era: Option<String>,
    pub protocol_version: Option<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub error: Option<String>,
    /// Where the catalog in this report came from: `live`, `memory`, `catalog.json` or `none`.
    pub catalog_source: String,
    /// With `servers`: each server, in config order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerInfo>,
}

impl UpstreamInfo {
    /// What `status` says of the upstream at `target`, with where the catalog came from.
    pub fn of(target: String, status: &UpstreamStatus, catalog_source: &str) -> UpstreamInfo {
        let info = status.server_info.as_ref();
        let field = |k: &str| {
            info.and_then(|i| i.get(k))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        UpstreamInfo {
            target,
            reachable: status.reachable,
            era: status.era.map(|e| e.as_str().to_string()),
            protocol_version: status.protocol_version.clone(),
            server_name: field("name"),
            server_version: field("version"),
            error: status.last_error.clone(),
            catalog_source: catalog_source.to_string(),
            servers: status.servers.iter().map(ServerInfo::of).collect(),
        }
    }
}

/// One server behind mws (`servers`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    pub name: String,
    pub target: String,
    /// `up`, `down` or `not started`.
    pub status: String,
    pub era: Option<String>,
    /// Its tools in the catalog being served.
    pub tools: usize,
    pub error: Option<String>,
    /// Names shortened to fit clients' 64-character limit: `{exposed, name}`.
    pub shortened: Vec<Shortened>,
}

impl ServerInfo {
    fn of(s: &ServerState) -> ServerInfo {
        let status = if s.start_error.is_some() {
            "not started"
        } else if s.status.reachable {
            "up"
        } else {
            "down"
        };
        ServerInfo {
            name: s.name.clone(),
            target: s.target.clone(),
            status: status.into(),
            era: s.status.era.map(|e| e.as_str().to_string()),
            tools: s.tools,
            error: s
                .start_error
                .clone()
                .or_else(|| s.status.last_error.clone()),
            shortened: s
                .shortened
                .iter()
                .map(|(exposed, name)| Shortened {
                    exposed: exposed.clone(),
                    name: name.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Shortened {
    /// The name clients see.
    pub exposed: String,
    /// `<server>__<tool>` in full.
    pub name: String,
}

/// Everything `compute` reads.
pub struct Inputs<'a> {
    pub now: OffsetDateTime,
    pub window: &'a Window,
    pub tokenizer: &'a Tokenizer,
    pub catalog: &'a Catalog,
    /// The `tools/list` result as the proxy serves it (`server::tools_list::choose`), and its mode.
    pub listed: &'a [Value],
    pub mode: &'a crate::listed::Mode,
    /// The config's `pins` (listed even when not in the working set).
    pub pins: &'a [String],
    pub working_set: &'a [WorkingSetRow],
    pub usage: &'a [ToolUsageRow],
    /// Last success at any time, per tool.
    pub last_success: &'a HashMap<String, String>,
    pub clients: &'a [ClientRow],
    pub sessions: u64,
    pub searches: &'a SearchRow,
    /// Calls the proxy refused in the window (`Checks`).
    pub refused: &'a RefusedRow,
    /// Catalog tools the config's policy hides (`listed::hidden_by_policy`).
    pub policy_hidden: usize,
    /// Successful non-`call_tool` calls inside the listed intervals (`hit_rate`).
    pub hits: u64,
    pub upstream: &'a UpstreamInfo,
    /// Whether search ranks with the configured embedder, or why not (`None`: not configured).
    pub semantic_ranking: Option<String>,
}

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

fn share(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// Computes every figure of the report.
pub fn compute(i: &Inputs) -> Report {
    let tok = i.tokenizer;
    let span = i.window.span(i.now);
    let usage: HashMap<&str, &ToolUsageRow> =
        i.usage.iter().map(|u| (u.tool.as_str(), u)).collect();
    let ws: HashMap<&str, &WorkingSetRow> =
        i.working_set.iter().map(|w| (w.tool.as_str(), w)).collect();

    // The listing as served, then working-set tools the upstream does not list.
    let mut listed = Vec::new();
    let mut listed_names = HashSet::new();
    for (n, tool) in i.listed.iter().enumerate() {
        let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
        let size = tokens::tool_size(tok, tool);
        // The meta-tools come first. An upstream tool named like one is listed as
        // `upstream__<name>` and recorded (working set, calls) under its upstream name.
        let meta = n < META_TOOLS.len() && META_TOOLS.contains(&name);
        let key = if meta {
            ""
        } else {
            crate::catalog::exposed::upstream_name(i.catalog, name)
        };
        let w = ws.get(key);
        let reason = match w {
            Some(w) => w.reason.clone(),
            None if meta => "meta-tool".into(),
            None if i.pins.iter().any(|p| p == key) => "pin".into(),
            None => "listed".into(),
        };
        listed_names.insert(key.to_string());
        listed.push(ListedTool {
            name: name.to_string(),
            position: Some(n + 1),
            reason,
            since: w.map(|w| w.since.clone()),
            bytes: size.bytes,
            tokens: size.tokens,
            in_catalog: i.catalog.contains(key),
            usage: usage_of(usage.get(key).copied(), i.last_success.get(key)),
        });
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
                    usage.get(w.tool.as_str()).copied(),
                    i.last_success.get(&w.tool),
                ),
            });
        }
    }

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
    let candidates = tools
        .iter()
        .filter(|t| !t.listed)
        .take(MAX_CANDIDATES)
        .cloned()
        .collect();

    let upstream = tokens::list_size(tok, i.catalog.tools());
    let listed_size = tokens::list_size(tok, i.listed);
    let saved = upstream.minus(listed_size);
    let s = i.searches;

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

    Report {
        generated_at: clock::fmt(i.now),
        window: WindowOut {
            label: i.window.label.clone(),
            since: span.since,
            until: span.until,
        },
        tokenizer: tok.kind().encoding(),
        upstream: i.upstream.clone(),
        sizes: Sizes {
            upstream,
            listed: listed_size,
            saved,
            saved_token_share: (!i.catalog.is_empty())
                .then(|| share(saved.tokens as u64, upstream.tokens as u64))
                .flatten(),
            largest_search_reply_bytes: s.max_reply_bytes,
        },
        listing_mode: shape::ListingMode {
            all: i.mode.all,
            why: i.mode.why.clone(),
        },
        listed,
        candidates,
        searches: Searches {
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
        },
        hit_rate: HitRate::new(calls.ok, ok_not_call_tool, i.hits),
        calls,
        clients: i
            .clients
            .iter()
            .map(|c| ClientOut {
                client: c.client.clone(),
                calls: c.calls,
                ok: c.ok,
                errors: c.calls - c.ok,
                sessions: c.sessions,
            })
            .collect(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse() {
        for (input, want) in [
            ("24h", Ok(time::Duration::hours(24))),
            ("7d", Ok(time::Duration::days(7))),
            ("30d", Ok(time::Duration::days(30))),
            ("2w", Ok(time::Duration::weeks(2))),
        ] {
            assert_eq!(Window::parse(input).map(|w| w.duration), want, "{input}");
        }
        for bad in ["", "d", "7", "7y", "-1d", "0h", "1.5d"] {
            assert_eq!(
                Window::parse(bad),
                Err(format!(
                    "--since {bad:?}: expected a number and a unit h, d or w, like 24h, 7d or 30d"
                )),
                "{bad}"
            );
        }
    }
}
