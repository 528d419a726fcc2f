//! `mws what-if` output: the comfy table (current setting and recommendation marked), the JSON
//! document, and the SVG chart of hit rate against listed tokens (plotters' SVG backend, one
//! point per setting). Pure: returns text, writes nothing.

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use plotters::prelude::*;
use serde::Serialize;

use super::grid::Recommendation;
use super::{Figures, ProjectFigures};

/// The whole result, as `--json` prints it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WhatIf<'a> {
    /// The measured span (calls before it still feed the decisions).
    pub since: &'a str,
    pub until: &'a str,
    pub tokenizer: &'a str,
    pub settings: &'a [Figures],
    pub recommended: Option<&'a Recommendation>,
    /// The current setting with and without working sets per project (`None`: no calls).
    pub projects: Option<&'a ProjectFigures>,
}

fn pct(r: Option<f64>) -> String {
    r.map_or("-".into(), |r| format!("{:.1}%", r * 100.0))
}

fn tokens(t: Option<f64>) -> String {
    t.map_or("-".into(), |t| format!("{t:.0}"))
}

/// The table: one row per setting; `*` marks the current one, `→` the recommended one.
pub fn table(w: &WhatIf) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header([
        "",
        "minSessions",
        "minCalls",
        "windowDays",
        "keepDays",
        "hit rate",
        "needed search",
        "tokens listed (avg)",
        "tokens listed (end)",
        "tools (end)",
        "listing changes",
    ]);
    let rec = w.recommended.map(|r| r.index);
    for (i, f) in w.settings.iter().enumerate() {
        let mark = match (f.current, rec == Some(i)) {
            (true, true) => "*→",
            (true, false) => "*",
            (false, true) => "→",
            (false, false) => "",
        };
        t.add_row([
            mark.to_string(),
            f.min_sessions.to_string(),
            f.min_calls.to_string(),
            f.window_days.to_string(),
            f.keep_days.to_string(),
            pct(f.hit_rate),
            f.needed_search.to_string(),
            tokens(f.avg_listed_tokens),
            f.end_listed_tokens.map_or("-".into(), |n| n.to_string()),
            f.end_listed_tools.to_string(),
            f.listing_changes.to_string(),
        ]);
    }
    let mut out = format!(
        "what-if: promote replayed every midnight (UTC) from an empty working set plus pins; \
         measured {} .. {} ({} successful calls; tokens: {})\n{t}\n* current setting\n",
        w.since,
        w.until,
        w.settings.first().map_or(0, |f| f.ok_calls),
        w.tokenizer
    );
    if let Some(r) = w.recommended {
        let f = &w.settings[r.index];
        out.push_str(&format!(
            "→ recommended: minSessions {}, minCalls {}, windowDays {}, keepDays {}: {}\n",
            f.min_sessions, f.min_calls, f.window_days, f.keep_days, r.reason
        ));
    }
    if let Some(p) = w.projects {
        out.push_str(&projects_table(p));
    }
    out
}

/// The current setting listed user-wide against per project (`promote.perProject`).
fn projects_table(p: &ProjectFigures) -> String {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header([
        "current setting, listed",
        "hit rate",
        "needed search",
        "tokens listed (avg)",
    ]);
    for (name, s) in [
        ("one working set for all", &p.user_wide),
        ("per project", &p.per_project),
    ] {
        t.add_row([
            name.to_string(),
            pct(s.hit_rate),
            (p.ok_calls - s.hits).to_string(),
            tokens(s.avg_listed_tokens),
        ]);
    }
    let rival = match &p.best_one_for_all_within_tokens {
        Some(f) => format!(
            "one working set for all at no more tokens: at best {} (minSessions {}, minCalls {}, \
             windowDays {}, keepDays {})\n",
            pct(f.hit_rate),
            f.min_sessions,
            f.min_calls,
            f.window_days,
            f.keep_days
        ),
        None => "one working set for all: no setting replayed lists as few tokens\n".into(),
    };
    format!(
        "\nper project: {} of {} successful calls know their project, in {} project(s)\n{t}\n\
         {rival}",
        p.ok_calls_with_project, p.ok_calls, p.projects
    )
}

/// The chart: hit rate (y) against average listed tokens (x), one circle per setting; the
/// current setting filled red, the recommended one filled green. Settings without a token
/// figure are drawn at x = 0.
pub fn svg(w: &WhatIf) -> Result<String, String> {
    let mut text = String::new();
    let xs: Vec<f64> = w
        .settings
        .iter()
        .map(|f| f.avg_listed_tokens.unwrap_or(0.0))
        .collect();
    let x_max = xs.iter().copied().fold(1.0_f64, f64::max) * 1.1;
    let rec = w.recommended.map(|r| r.index);
    {
        let root = SVGBackend::with_string(&mut text, (720, 480)).into_drawing_area();
        let e = |e: DrawingAreaErrorKind<_>| format!("cannot draw the chart: {e}");
        root.fill(&WHITE).map_err(e)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                "mws what-if: hit rate against tokens listed",
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(56)
            .build_cartesian_2d(0.0..x_max, 0.0..100.0)
            .map_err(e)?;
        chart
            .configure_mesh()
            .x_desc("tokens listed per call (average)")
            .y_desc("hit rate (%)")
            .draw()
            .map_err(e)?;
        let points = w.settings.iter().zip(&xs).enumerate().map(|(i, (f, &x))| {
            let y = f.hit_rate.unwrap_or(0.0) * 100.0;
            let style = if rec == Some(i) {
                GREEN.filled()
            } else if f.current {
                RED.filled()
            } else {
                BLUE.stroke_width(2)
            };
            Circle::new((x, y), 5, style)
        });
        chart.draw_series(points).map_err(e)?;
        root.present().map_err(e)?;
    }
    Ok(text)
}
