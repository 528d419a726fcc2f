//! The report as text: a few lines and comfy-table tables, fitted to a width. Colour only when
//! asked (the command asks on a terminal). Pure: the caller decides width and colour. Every
//! string from the store, the catalog, the upstream or the config goes through `term::safe`.

use std::fmt::Write as _;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{Cell, CellAlignment, Color, ContentArrangement, Table};
use time::OffsetDateTime;

use super::format::{ago, bytes, num, pct, short_date, short_time};
use super::{ListedTool, Report, ToolOut};
use crate::clock;
use crate::term::{Safe, safe};

/// How to draw.
#[derive(Debug, Clone, Copy, Default)]
pub struct Style {
    /// Fit tables to this many columns; `None` lets comfy-table use the terminal's width when
    /// `color` is on (a terminal), else no limit.
    pub width: Option<u16>,
    /// Colour cells (only on a terminal).
    pub color: bool,
}

/// The whole report as text.
pub fn text(r: &Report, style: Style) -> String {
    let now = clock::parse(&r.generated_at).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let mut out = String::new();
    let _ = writeln!(
        out,
        "mws report · last {} ({} → {}) · tokens: {}",
        Safe(&r.window.label),
        Safe(&short_time(&r.window.since)),
        Safe(&short_time(&r.window.until)),
        r.tokenizer
    );
    let _ = writeln!(out, "{}", safe(&upstream_line(r)));
    for line in server_lines(r) {
        let _ = writeln!(out, "{}", safe(&line));
    }

    out.push_str("\nWhat a client is sent with every request\n");
    out.push_str(&sizes_table(r, style));
    let m = &r.listing_mode;
    let what = if m.all {
        "every tool, no meta-tools"
    } else {
        "search_tools, call_tool and the working set"
    };
    let _ = writeln!(out, "Listing: {what} ({})", safe(&m.why));
    out.push_str(&checks_lines(&r.checks));

    let h = &r.hit_rate;
    out.push_str("\nWorking-set hit rate: ");
    match h.rate {
        Some(rate) => {
            let _ = writeln!(
                out,
                "{} of successful calls went to a tool listed at the time\n  ({} of {}; {} via call_tool, {} direct to a tool not listed then)",
                pct(rate),
                num(h.hits),
                num(h.ok_calls),
                num(h.via_call_tool),
                num(h.unlisted_direct)
            );
        }
        None => out.push_str("no successful calls in the window\n"),
    }

    let shown = r.listed.iter().filter(|t| t.position.is_some()).count();
    let _ = writeln!(out, "\nListed now ({shown} tools)");
    out.push_str(&listed_table(&r.listed, now, style));

    out.push_str("\nPromotion candidates: unlisted tools called in the window\n");
    if r.candidates.is_empty() {
        out.push_str("  none\n");
    } else {
        out.push_str(&candidates_table(&r.candidates, now, style));
        let more = r.tools.iter().filter(|t| !t.listed).count() - r.candidates.len();
        if more > 0 {
            let _ = writeln!(out, "  … and {more} more (--json lists every tool)");
        }
    }

    let s = &r.searches;
    out.push_str("\nSearches\n");
    if let Some(why) = &s.semantic_ranking {
        let _ = writeln!(out, "  {}", safe(why));
    }
    if s.count == 0 {
        out.push_str("  none in the window\n");
    } else {
        let mut t = table(style);
        t.set_header(cells(&[
            "searches",
            "zero results",
            "avg reply",
            "largest reply",
            "by mode",
        ]));
        let modes: Vec<String> = s
            .by_mode
            .iter()
            .map(|(m, n)| format!("{} {}", Safe(m), num(n.as_u64().unwrap_or(0))))
            .collect();
        t.add_row(vec![
            right(num(s.count)),
            right(format!(
                "{} ({})",
                num(s.zero_results),
                s.zero_result_share.map(pct).unwrap_or_default()
            )),
            right(s.avg_reply_bytes.map(bytes).unwrap_or_default()),
            right(bytes(s.max_reply_bytes)),
            Cell::new(modes.join(", ")),
        ]);
        let _ = writeln!(out, "{t}");
    }

    let c = &r.calls;
    let _ = writeln!(
        out,
        "\nCalls in the window: {} ({} errors) in {} sessions; direct {}, call_tool {}, from transcripts {}",
        num(c.total),
        num(c.errors),
        num(c.sessions),
        num(c.via.direct),
        num(c.via.call_tool),
        num(c.via.transcript)
    );
    if !r.clients.is_empty() {
        let mut t = table(style);
        t.set_header(cells(&["client", "calls", "errors", "sessions"]));
        for cl in &r.clients {
            t.add_row(vec![
                text_cell(cl.client.as_deref().unwrap_or("(unknown)")),
                right(num(cl.calls)),
                right(num(cl.errors)),
                right(num(cl.sessions)),
            ]);
        }
        let _ = writeln!(out, "{t}");
    }
    project_lines(r, style, &mut out);
    out
}

/// Most projects shown in the text report (`--json` has them all).
const MAX_PROJECTS_SHOWN: usize = 10;

/// Working sets per project: the setting, then the window's busiest projects.
fn project_lines(r: &Report, style: Style, out: &mut String) {
    let p = &r.projects;
    if p.projects.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Projects: {} with calls in the window; {} of {} successful calls know their project; \
         per-project listing {}",
        num(p.projects.len() as u64),
        num(p.ok_with_project),
        num(r.calls.ok),
        if p.per_project {
            "on"
        } else {
            "off (promote.perProject)"
        }
    );
    let mut t = table(style);
    t.set_header(cells(&["project", "calls", "sessions", "own tools listed"]));
    for row in p.projects.iter().take(MAX_PROJECTS_SHOWN) {
        t.add_row(vec![
            text_cell(&row.project),
            right(num(row.calls)),
            right(num(row.sessions)),
            right(num(row.own_tools)),
        ]);
    }
    let _ = writeln!(out, "{t}");
    if p.projects.len() > MAX_PROJECTS_SHOWN {
        let _ = writeln!(
            out,
            "(and {} more: `mws report --json`)",
            p.projects.len() - MAX_PROJECTS_SHOWN
        );
    }
}

/// One line per server of `servers` (era, tools, status, last error), then its shortened names.
fn server_lines(r: &Report) -> Vec<String> {
    let mut out = Vec::new();
    for s in &r.upstream.servers {
        let mut parts = vec![
            format!("  server {} ({})", s.name, s.target),
            s.status.clone(),
        ];
        if let Some(era) = &s.era {
            parts.push(era.clone());
        }
        parts.push(format!("{} tools", s.tools));
        if let Some(e) = &s.error {
            parts.push(e.clone());
        }
        out.push(parts.join(" · "));
        for n in &s.shortened {
            out.push(format!(
                "    {} shortened to {} (64-character limit)",
                n.name, n.exposed
            ));
        }
    }
    out
}

fn upstream_line(r: &Report) -> String {
    let u = &r.upstream;
    let mut parts = vec![format!("upstream {}", u.target)];
    if u.reachable {
        parts.push("reachable".into());
        if let Some(era) = &u.era {
            parts.push(era.clone());
        }
        if let Some(name) = &u.server_name {
            parts.push(match &u.server_version {
                Some(v) => format!("{name} {v}"),
                None => name.clone(),
            });
        }
    } else {
        parts.push(match &u.error {
            Some(e) => format!("not reachable ({e})"),
            None => "not reachable".into(),
        });
    }
    parts.push(match u.catalog_source.as_str() {
        "none" => "no catalog (nothing live, no catalog.json): sizes are unknown".into(),
        "catalog.json" => "catalog: catalog.json (the last good list)".into(),
        other => format!("catalog: {other}"),
    });
    parts.join(" · ")
}

fn sizes_table(r: &Report, style: Style) -> String {
    let z = &r.sizes;
    let known = r.upstream.catalog_source != "none";
    let b = |n: usize| if known { bytes(n as u64) } else { "-".into() };
    let k = |n: usize| if known { num(n as u64) } else { "-".into() };
    let mut t = table(style);
    t.set_header(cells(&["", "tools", "bytes", "tokens"]));
    t.add_row(vec![
        Cell::new("upstream catalog"),
        right(k(z.upstream.tools)),
        right(b(z.upstream.bytes)),
        right(k(z.upstream.tokens)),
    ]);
    t.add_row(vec![
        Cell::new("listed now"),
        right(num(z.listed.tools as u64)),
        right(bytes(z.listed.bytes as u64)),
        right(num(z.listed.tokens as u64)),
    ]);
    let share = z
        .saved_token_share
        .map(|s| format!(" ({})", pct(s)))
        .unwrap_or_default();
    let mut saved = right(format!("{}{share}", k(z.saved.tokens)));
    if style.color {
        saved = saved.fg(Color::Green);
    }
    t.add_row(vec![
        Cell::new("saved per request"),
        right(k(z.saved.tools)),
        right(b(z.saved.bytes)),
        saved,
    ]);
    t.add_row(vec![
        Cell::new("largest search reply"),
        Cell::new(""),
        right(bytes(z.largest_search_reply_bytes)),
        right("(text not kept)"),
    ]);
    format!("{t}\n")
}

fn listed_table(listed: &[ListedTool], now: OffsetDateTime, style: Style) -> String {
    if listed.is_empty() {
        return "  nothing: run `mws promote`, or add `pins` to the config\n".into();
    }
    let mut t = table(style);
    t.set_header(cells(&[
        "#", "tool", "why", "since", "tokens", "calls", "errors", "sessions", "last ok",
    ]));
    for l in listed {
        let mut why = text_cell(&match l.position {
            None => format!("{} (gone upstream)", l.reason),
            Some(_) => l.reason.clone(),
        });
        if l.position.is_none() && style.color {
            why = why.fg(Color::Yellow);
        }
        // The meta-tools' use is in the search and call_tool figures, not here.
        let meta = l.reason == "meta-tool";
        let usage = |n: u64| right(if meta { "-".into() } else { num(n) });
        t.add_row(vec![
            right(
                l.position
                    .map(|p| p.to_string())
                    .unwrap_or_else(|| "-".into()),
            ),
            text_cell(&l.name),
            why,
            text_cell(&l.since.as_deref().map(short_date).unwrap_or_default()),
            right(if l.position.is_some() {
                num(l.tokens as u64)
            } else {
                "-".into()
            }),
            usage(l.usage.calls),
            usage(l.usage.errors),
            usage(l.usage.ok_sessions),
            right(if meta {
                "-".into()
            } else {
                ago(l.usage.last_success.as_deref(), now)
            }),
        ]);
    }
    format!("{t}\n")
}

fn candidates_table(tools: &[ToolOut], now: OffsetDateTime, style: Style) -> String {
    let mut t = table(style);
    t.set_header(cells(&[
        "tool",
        "calls",
        "errors",
        "sessions",
        "via call_tool",
        "last ok",
    ]));
    for c in tools {
        let name = if c.in_catalog {
            c.name.clone()
        } else {
            format!("{} (not in catalog)", c.name)
        };
        t.add_row(vec![
            text_cell(&name),
            right(num(c.usage.calls)),
            right(num(c.usage.errors)),
            right(num(c.usage.ok_sessions)),
            right(num(c.usage.via.call_tool)),
            right(ago(c.usage.last_success.as_deref(), now)),
        ]);
    }
    format!("{t}\n")
}

fn table(style: Style) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic);
    if !style.color {
        t.force_no_tty();
    }
    if let Some(w) = style.width {
        t.set_width(w);
    }
    t
}

/// A left-aligned cell of text from outside, made safe for a terminal.
fn text_cell(s: &str) -> Cell {
    Cell::new(safe(s))
}

fn cells(names: &[&str]) -> Vec<Cell> {
    names.iter().copied().map(Cell::new).collect()
}

fn right(s: impl ToString) -> Cell {
    Cell::new(s.to_string()).set_alignment(CellAlignment::Right)
}

/// What the checks before a call did (config `policy` and `validation`); nothing when they did
/// nothing.
fn checks_lines(c: &crate::report::Checks) -> String {
    let mut out = String::new();
    if c.policy_hidden > 0 {
        let _ = writeln!(
            out,
            "  the config's policy hides {} tool(s) of the catalog",
            num(c.policy_hidden as u64)
        );
    }
    if c.invalid_args + c.denied_by_policy > 0 {
        let _ = writeln!(
            out,
            "  refused before reaching the upstream: {} call(s) with invalid arguments, {} by the \
             policy",
            num(c.invalid_args),
            num(c.denied_by_policy)
        );
    }
    if c.results_shaped > 0 {
        let _ = writeln!(
            out,
            "  results shaped to fit results.maxTokens: {} call(s), {} of text cut",
            num(c.results_shaped),
            bytes(c.bytes_saved)
        );
    }
    out
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
