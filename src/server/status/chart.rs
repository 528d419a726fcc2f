//! The status page's charts as inline SVG: the hit rate per day as a line and the calls per day
//! as bars. Pure text out; every label is escaped. Must not refer to anything outside the
//! document (no fonts, no images, no links).

use std::fmt::Write;

use crate::server::status::gather::Day;
use crate::server::status::html::esc;

/// The drawing area, in SVG user units; the SVG scales to the page width.
const WIDTH: f64 = 600.0;
const HEIGHT: f64 = 180.0;
/// Room for the axis labels on the left and at the bottom.
const LEFT: f64 = 40.0;
const BOTTOM: f64 = 20.0;
const TOP: f64 = 8.0;

fn open(out: &mut String, label: &str) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"{l}\"><title>{l}</title>",
        l = esc(label)
    );
}

/// The x of day `i` of `n` (the middle of its slot).
fn x(i: usize, n: usize) -> f64 {
    let slot = (WIDTH - LEFT) / n.max(1) as f64;
    LEFT + slot * (i as f64 + 0.5)
}

/// The y of `v` on a scale whose top is `max`.
fn y(v: f64, max: f64) -> f64 {
    let h = HEIGHT - TOP - BOTTOM;
    TOP + h * (1.0 - if max > 0.0 { v / max } else { 0.0 })
}

/// Horizontal grid lines with their labels, and the first and last day under the axis.
fn axes(out: &mut String, days: &[Day], ticks: &[(f64, String)], max: f64) {
    for (v, label) in ticks {
        let yy = y(*v, max);
        let _ = write!(
            out,
            "<line x1=\"{LEFT}\" x2=\"{WIDTH}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#ddd\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\" fill=\"#555\">{}</text>",
            LEFT - 4.0,
            yy + 4.0,
            esc(label)
        );
    }
    if let (Some(first), Some(last)) = (days.first(), days.last()) {
        let base = HEIGHT - 5.0;
        let _ = write!(
            out,
            "<text x=\"{LEFT}\" y=\"{base}\" font-size=\"11\" fill=\"#555\">{}</text>\
             <text x=\"{WIDTH}\" y=\"{base}\" font-size=\"11\" text-anchor=\"end\" fill=\"#555\">{}</text>",
            esc(&first.day),
            esc(&last.day)
        );
    }
}

/// The hit rate per day (successful calls that found their tool listed), 0–100 %, as a line
/// broken on days without a successful call, with a dot per day.
pub fn hit_rate(days: &[Day]) -> String {
    let mut out = String::new();
    open(&mut out, "hit rate per day");
    let ticks: Vec<(f64, String)> = [0.0, 0.5, 1.0]
        .iter()
        .map(|v| (*v, format!("{:.0}%", v * 100.0)))
        .collect();
    axes(&mut out, days, &ticks, 1.0);
    let n = days.len();
    let mut segment: Vec<(f64, f64)> = Vec::new();
    let mut segments = Vec::new();
    for (i, d) in days.iter().enumerate() {
        match d.hit_rate() {
            Some(r) => segment.push((x(i, n), y(r, 1.0))),
            None => segments.push(std::mem::take(&mut segment)),
        }
    }
    segments.push(segment);
    for s in segments.iter().filter(|s| s.len() > 1) {
        let points: Vec<String> = s.iter().map(|(a, b)| format!("{a:.1},{b:.1}")).collect();
        let _ = write!(
            out,
            "<polyline fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"2\" points=\"{}\"/>",
            points.join(" ")
        );
    }
    for (i, d) in days.iter().enumerate() {
        if let Some(r) = d.hit_rate() {
            let _ = write!(
                out,
                "<circle class=\"hit\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#1f5fbf\">\
                 <title>{}: {:.0}% ({} of {} successful calls)</title></circle>",
                x(i, n),
                y(r, 1.0),
                esc(&d.day),
                r * 100.0,
                d.hits,
                d.ok
            );
        }
    }
    out.push_str("</svg>");
    out
}

/// The calls per day as bars, errors stacked on top in red.
pub fn calls(days: &[Day]) -> String {
    let mut out = String::new();
    open(&mut out, "calls per day");
    let max = days.iter().map(|d| d.calls).max().unwrap_or(0).max(1) as f64;
    let ticks = vec![(0.0, "0".to_string()), (max, format!("{}", max as u64))];
    axes(&mut out, days, &ticks, max);
    let n = days.len();
    let w = ((WIDTH - LEFT) / n.max(1) as f64 * 0.7).max(1.0);
    for (i, d) in days.iter().enumerate().filter(|(_, d)| d.calls > 0) {
        let left = x(i, n) - w / 2.0;
        let (top_ok, top_all, base) = (y(d.ok as f64, max), y(d.calls as f64, max), y(0.0, max));
        let _ = write!(
            out,
            "<g class=\"day\"><title>{}: {} calls, {} failed</title>\
             <rect x=\"{left:.1}\" y=\"{top_ok:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"#6a9fd8\"/>\
             <rect x=\"{left:.1}\" y=\"{top_all:.1}\" width=\"{w:.1}\" height=\"{:.1}\" fill=\"#d0605e\"/></g>",
            esc(&d.day),
            d.calls,
            d.calls - d.ok,
            base - top_ok,
            top_ok - top_all
        );
    }
    out.push_str("</svg>");
    out
}
