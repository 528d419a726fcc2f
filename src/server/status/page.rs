//! The status page as one self-contained HTML document: inline styles, inline SVG charts, a
//! `<meta http-equiv=refresh>`, nothing loaded from anywhere. Every text from the database, the
//! config or the upstream goes through `esc`. Pure: a `Status` in, text out.

use std::borrow::Cow;
use std::fmt::Write;

use crate::report::UpstreamInfo;
use crate::server::status::chart;
use crate::server::status::gather::{Status, WINDOW_DAYS};
use crate::server::status::html::esc;

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:64rem;\
padding:.75rem;color:#222;background:#fff}h1{font-size:1.3rem;margin:.2rem 0}\
h2{font-size:1.05rem;margin:1.4rem 0 .4rem;border-bottom:1px solid #ddd}\
.t{overflow-x:auto}table{border-collapse:collapse;width:100%}\
th,td{text-align:left;padding:.15rem .5rem .15rem 0;border-bottom:1px solid #eee;vertical-align:top}\
td.w{word-break:break-word}.n{text-align:right;white-space:nowrap}.ok{color:#176f2c}\
.bad{color:#b00020}.dim{color:#666}svg{width:100%;height:auto;display:block;max-height:14rem}\
p{margin:.3rem 0}pre{white-space:pre-wrap;margin:0;font-size:.85rem}";

/// The whole page; it reloads itself every `refresh` seconds.
pub fn html(s: &Status, refresh: u32) -> String {
    let r = &s.report;
    let mut out = String::with_capacity(32 * 1024);
    let _ = write!(
        out,
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta http-equiv=\"refresh\" content=\"{refresh}\"><title>mws status</title>\
         <style>{STYLE}</style></head><body><h1>mws status</h1>\
         <p class=\"dim\">{} UTC · refreshes every {refresh} s</p>",
        esc(day_minute(&r.generated_at))
    );
    servers(&mut out, &r.upstream, r.sizes.upstream.tools);
    held(&mut out, s);
    listing(&mut out, s);
    projects(&mut out, s);
    history(&mut out, s);
    recent(&mut out, s);
    searches(&mut out, s);
    promotion(&mut out, s);
    out.push_str("</body></html>\n");
    out
}

/// The held tool definitions, each change shown (only when there are any).
fn held(out: &mut String, s: &Status) {
    if s.held.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<h2 id=\"held\">Held tools</h2><p class=\"bad\">{} tool(s) are not listed or run: \
         their definitions changed since they were approved. Decide with <code>mws tools \
         approve NAME</code> or <code>mws tools reject NAME</code>.</p><div class=\"t\"><table>\
         <tr><th>tool</th><th>state</th><th>change</th></tr>",
        s.held.len()
    );
    for p in &s.held {
        let _ = write!(
            out,
            "<tr><td class=\"w\">{}</td><td>{}</td><td class=\"w\"><pre>{}</pre></td></tr>",
            esc(&p.name),
            esc(p.why.as_str()),
            esc(&p.diff().join("\n"))
        );
    }
    out.push_str("</table></div>");
}

fn up(ok: bool, word: &str) -> String {
    let class = if ok { "ok" } else { "bad" };
    format!("<span class=\"{class}\">{}</span>", esc(word))
}

fn opt(v: Option<&str>) -> Cow<'_, str> {
    v.map_or(Cow::Borrowed("–"), esc)
}

fn servers(out: &mut String, u: &UpstreamInfo, tools: usize) {
    out.push_str(
        "<h2 id=\"servers\">Servers</h2><div class=\"t\"><table><tr><th>server</th>\
                  <th>health</th><th>era</th><th class=\"n\">tools</th><th>target</th>\
                  <th>last error</th></tr>",
    );
    if u.servers.is_empty() {
        let name = match (&u.server_name, &u.server_version) {
            (Some(n), Some(v)) => format!("{n} {v}"),
            (Some(n), None) => n.clone(),
            _ => "upstream".into(),
        };
        let health = if u.reachable { "up" } else { "down" };
        let _ = write!(
            out,
            "<tr><td class=\"w\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{tools}</td>\
             <td class=\"w\">{}</td><td class=\"w\">{}</td></tr>",
            esc(&name),
            up(u.reachable, health),
            opt(u.era.as_deref()),
            esc(&u.target),
            opt(u.error.as_deref())
        );
    }
    for s in &u.servers {
        let _ = write!(
            out,
            "<tr><td class=\"w\">{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td>\
             <td class=\"w\">{}</td><td class=\"w\">{}</td></tr>",
            esc(&s.name),
            up(s.status == "up", &s.status),
            opt(s.era.as_deref()),
            s.tools,
            esc(&s.target),
            opt(s.error.as_deref())
        );
    }
    let _ = write!(
        out,
        "</table></div><p class=\"dim\">catalog: {}</p>",
        esc(&u.catalog_source)
    );
}

fn listing(out: &mut String, s: &Status) {
    let r = &s.report;
    let z = &r.sizes;
    let mode = if r.listing_mode.all {
        "every tool, no meta-tools"
    } else {
        "the working set and the meta-tools"
    };
    let share = z
        .saved_token_share
        .map_or(String::new(), |v| format!(" ({:.0}%)", v * 100.0));
    let _ = write!(
        out,
        "<h2 id=\"listing\">Listed</h2><p>Listing {mode}: {}.</p>\
         <p id=\"tokens\">{} tools, <b>{}</b> tokens listed · whole catalog {} tools, {} tokens · \
         saved {} tokens{share} <span class=\"dim\">({})</span></p>",
        esc(&r.listing_mode.why),
        z.listed.tools,
        z.listed.tokens,
        z.upstream.tools,
        z.upstream.tokens,
        z.saved.tokens,
        esc(r.tokenizer)
    );
    out.push_str(
        "<div class=\"t\"><table id=\"working-set\"><tr><th class=\"n\">#</th>\
                  <th>tool</th><th>why</th><th>since</th><th class=\"n\">tokens</th>\
                  <th>last success</th></tr>",
    );
    for t in &r.listed {
        let pos = t.position.map_or("–".to_string(), |p| p.to_string());
        let why = if t.in_catalog || t.reason == "meta-tool" {
            esc(&t.reason).into_owned()
        } else {
            format!(
                "{} <span class=\"bad\">(not in the catalog)</span>",
                esc(&t.reason)
            )
        };
        let _ = write!(
            out,
            "<tr><td class=\"n\">{pos}</td><td class=\"w\">{}</td><td>{why}</td><td>{}</td>\
             <td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&t.name),
            opt(t.since.as_deref().map(day_minute)),
            t.tokens,
            opt(t.usage.last_success.as_deref().map(day_minute))
        );
    }
    out.push_str("</table></div>");
}

/// Working sets per project: the projects with tools of their own, most first.
fn projects(out: &mut String, s: &Status) {
    let p = &s.report.projects;
    if p.projects.is_empty() {
        return;
    }
    let _ = write!(
        out,
        "<h2 id=\"projects\">Projects</h2><p>Per-project listing {}: a session in a project lists \
         the tools used everywhere and its project's own (<code>mws report</code> shows each \
         project's calls).</p><div class=\"t\"><table id=\"project-list\"><tr><th>project</th>\
         <th class=\"n\">own tools</th></tr>",
        if p.per_project { "on" } else { "off" }
    );
    for row in p.projects.iter().take(10) {
        let _ = write!(
            out,
            "<tr><td class=\"w\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&row.project),
            row.own_tools
        );
    }
    out.push_str("</table></div>");
}

/// `2026-11-29T12:00:00.000Z` as `2026-11-29 12:00`.
fn day_minute(ts: &str) -> &str {
    ts.get(..16).unwrap_or(ts)
}

fn history(out: &mut String, s: &Status) {
    let (ok, hits, calls) = s.days.iter().fold((0, 0, 0), |(o, h, c), d| {
        (o + d.ok, h + d.hits, c + d.calls)
    });
    let rate = if ok > 0 {
        format!("{:.1}%", hits as f64 * 100.0 / ok as f64)
    } else {
        "–".to_string()
    };
    let _ = write!(
        out,
        "<h2 id=\"hit-rate\">Hit rate, last {WINDOW_DAYS} days</h2>\
         <p>{rate} of {ok} successful calls found their tool listed ({hits} hits).</p>{}\
         <h2 id=\"calls-per-day\">Calls per day</h2><p>{calls} calls in {WINDOW_DAYS} days.</p>{}",
        chart::hit_rate(&s.days),
        chart::calls(&s.days)
    );
}

fn recent(out: &mut String, s: &Status) {
    out.push_str("<h2 id=\"recent\">Recent calls</h2>");
    if s.recent.is_empty() {
        out.push_str("<p>No calls yet.</p>");
        return;
    }
    out.push_str(
        "<div class=\"t\"><table id=\"recent-calls\"><tr><th>time (UTC)</th>\
                  <th>tool</th><th>outcome</th><th class=\"n\">ms</th><th>client</th></tr>",
    );
    for c in &s.recent {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"w\">{}</td><td>{}</td><td class=\"n\">{}</td>\
             <td class=\"w\">{}</td></tr>",
            esc(c.ts.get(..19).unwrap_or(&c.ts)),
            esc(&c.tool),
            up(c.ok, if c.ok { "ok" } else { "error" }),
            c.ms.map_or("–".to_string(), |m| m.to_string()),
            opt(c.client.as_deref())
        );
    }
    out.push_str("</table></div>");
}

fn searches(out: &mut String, s: &Status) {
    let q = &s.report.searches;
    let share = q
        .zero_result_share
        .map_or(String::new(), |v| format!(" ({:.0}%)", v * 100.0));
    let _ = write!(
        out,
        "<h2 id=\"searches\">Searches</h2><p>{} searches in the last {WINDOW_DAYS} days; \
         <b>{}</b> answered with nothing{share}. The queries themselves are never stored.</p>",
        q.count, q.zero_results
    );
}

fn promotion(out: &mut String, s: &Status) {
    out.push_str("<h2 id=\"promotion\">Last promotion</h2>");
    let Some(run) = &s.last_run else {
        out.push_str("<p>No promotion has run yet.</p>");
        return;
    };
    let _ = write!(
        out,
        "<p>{} UTC, catalog {}: {} listed, {} promoted, {} demoted, {} dropped.</p>\
         <div class=\"t\"><table id=\"decisions\"><tr><th>tool</th><th>decision</th>\
         <th>why</th></tr>",
        esc(day_minute(&run.ts)),
        esc(&run.catalog_source),
        run.listed,
        run.promoted,
        run.demoted,
        run.dropped
    );
    for d in &run.decisions {
        let _ = write!(
            out,
            "<tr><td class=\"w\">{}</td><td>{}</td><td class=\"w\">{}</td></tr>",
            esc(&d.tool),
            esc(&d.action),
            esc(&d.reason)
        );
    }
    out.push_str("</table></div>");
}
