//! The empty query's reply (docs/search.md, Modes): every tool name grouped by backend, listed
//! tools marked `*`, within the reply budget. Pure.

use std::collections::HashSet;

use serde_json::{Map, Value, json};

use super::modes::finish;
use super::reply::json_len;
use super::{REPLY_BUDGET, Reply, SearchIndex, Trimmed};

/// Group label in the empty-query reply for tools without a backend.
pub const NO_BACKEND: &str = "(other)";

/// The whole catalog grouped by backend, names only, listed tools marked `*`. Over budget, each
/// group keeps its first names and says how many more it has; groups that still do not fit are
/// dropped from the end and counted in `more`. Sizes are computed arithmetically (prefix sums of
/// the names' JSON lengths), so a 10,000-tool catalog costs one pass, not one build per try.
pub(super) fn catalog(ix: &SearchIndex, listed: &HashSet<String>) -> Reply {
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
