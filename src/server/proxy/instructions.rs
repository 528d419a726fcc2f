//! The `instructions` a client shows its model (docs/protocol.md): how many tools are upstream and
//! how many are listed, the backends with their hints, and to use `search_tools` when a capability
//! seems missing — or that the upstream is down. Pure. Must not do I/O.

use std::collections::BTreeMap;

use crate::catalog::Catalog;

/// Longest upstream `instructions` passed on, in bytes. Raising it spends more of the client's
/// context on text the upstream wrote.
pub const MAX_UPSTREAM_INSTRUCTIONS: usize = 2_000;

/// A tool's backend: its name up to the first `_` (`mail` in `mail_send_message`), if any.
pub fn backend_of(name: &str) -> Option<&str> {
    name.split_once('_')
        .map(|(b, _)| b)
        .filter(|b| !b.is_empty())
}

/// Backends shared by at least two tools, with their tool counts, in upstream order.
pub fn backends(catalog: &Catalog) -> Vec<(String, usize)> {
    let mut order: Vec<String> = Vec::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for b in catalog.names().filter_map(backend_of) {
        let c = counts.entry(b.to_string()).or_insert(0);
        if *c == 0 {
            order.push(b.to_string());
        }
        *c += 1;
    }
    order
        .into_iter()
        .map(|b| {
            let n = counts[&b];
            (b, n)
        })
        .filter(|(_, n)| *n >= 2)
        .collect()
}

/// What the instructions are made from.
pub struct Facts<'a> {
    pub catalog: &'a Catalog,
    /// False when there is no catalog at all (the upstream is down and nothing is stored).
    pub have_catalog: bool,
    pub listed: usize,
    pub hints: &'a BTreeMap<String, String>,
    pub upstream_instructions: Option<&'a str>,
    /// With `servers`: the servers that are down (not started, or their last contact failed).
    pub down: &'a [String],
    /// Whether every tool is listed, and why (`listed::mode`).
    pub mode: &'a crate::listed::Mode,
    /// Code mode is on (`codeMode.enabled`): `run_script` is listed.
    pub code_mode: bool,
}

pub fn instructions(f: &Facts) -> String {
    if !f.have_catalog {
        return "mcp-working-set: the upstream MCP server is down or has not answered yet, so no \
                upstream tools are available right now. search_tools and call_tool will reach \
                them once it is back; say so if a task needs a tool."
            .to_string();
    }
    let mut s = if f.mode.all {
        format!(
            "mcp-working-set: all {} tools of the upstream MCP server are listed here directly \
             ({}), so there is nothing to search for.",
            f.catalog.len(),
            f.mode.why
        )
    } else {
        format!(
            "mcp-working-set: the upstream MCP server has {} tools; {} of them are listed here \
             directly ({}), the rest are reachable in one hop: search_tools finds a tool by what \
             it does (or by name) and call_tool runs any tool by name. When a capability seems \
             missing, use search_tools before concluding it does not exist.",
            f.catalog.len(),
            f.listed,
            f.mode.why
        )
    };
    if !f.mode.all
        && f.catalog
            .tools()
            .iter()
            .any(|t| crate::policy::read_only(Some(t)))
    {
        s.push_str(
            " call_read_only_tool runs the tools search_tools marks readOnly where call_tool \
             would need an approval.",
        );
    }
    if f.code_mode {
        s.push_str(
            " For a task of many calls, run_script runs one JavaScript script that calls tools as \
             `await tools.<name>(args)` (search_tools shows each one's signature) and returns \
             only its answer.",
        );
    }
    let bs = backends(f.catalog);
    if !bs.is_empty() {
        let parts: Vec<String> = bs
            .iter()
            .map(|(b, n)| match f.hints.get(b) {
                Some(h) => format!("{b} ({n} tools: {h})"),
                None => format!("{b} ({n} tools)"),
            })
            .collect();
        s.push_str(&format!(" Backends: {}.", parts.join(", ")));
    }
    if !f.down.is_empty() {
        s.push_str(&format!(
            " Down right now: {}. Their tools are still listed and found by search_tools, but \
             calls to them fail until they are back; say so if a task needs one.",
            f.down.join(", ")
        ));
    }
    if let Some(up) = f
        .upstream_instructions
        .map(str::trim)
        .filter(|u| !u.is_empty())
    {
        let mut end = up.len().min(MAX_UPSTREAM_INSTRUCTIONS);
        while !up.is_char_boundary(end) {
            end -= 1;
        }
        s.push_str("\n\nThe upstream server's own instructions:\n");
        s.push_str(&up[..end]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn catalog(names: &[&str]) -> Catalog {
        Catalog::new(names.iter().map(|n| json!({"name": n})).collect())
    }

    #[test]
    fn backends_need_two_tools() {
        let c = catalog(&[
            "mail_send",
            "echo",
            "mail_list",
            "drive_get",
            "cal_a",
            "cal_b",
        ]);
        assert_eq!(
            backends(&c),
            [("mail".to_string(), 2), ("cal".to_string(), 2)]
        );
    }

    #[test]
    fn counts_hints_and_down() {
        let c = catalog(&["mail_send", "mail_list", "echo"]);
        let hints = BTreeMap::from([("mail".to_string(), "mailbox".to_string())]);
        let ws = crate::listed::Mode {
            all: false,
            why: "listing is \"working-set\" in the config".into(),
        };
        let up = Facts {
            mode: &ws,
            catalog: &c,
            have_catalog: true,
            listed: 1,
            hints: &hints,
            upstream_instructions: Some("Be nice."),
            down: &[],
            code_mode: false,
        };
        let text = instructions(&up);
        assert!(text.contains("has 3 tools; 1 of them"), "{text}");
        assert!(text.contains("mail (2 tools: mailbox)"), "{text}");
        assert!(text.contains("use search_tools"), "{text}");
        assert!(text.ends_with("Be nice."), "{text}");
        assert!(
            !text.contains("call_read_only_tool"),
            "no tool is read-only: {text}"
        );
        let read_only = Catalog::new(vec![
            json!({"name": "mail_list", "annotations": {"readOnlyHint": true}}),
            json!({"name": "mail_send"}),
        ]);
        let text = instructions(&Facts {
            catalog: &read_only,
            ..up
        });
        assert!(
            text.contains(
                " call_read_only_tool runs the tools search_tools marks readOnly where call_tool \
                 would need an approval."
            ),
            "{text}"
        );
        assert!(!text.contains("run_script"), "{text}");
        let text = instructions(&Facts {
            code_mode: true,
            ..up
        });
        assert!(
            text.contains(
                " For a task of many calls, run_script runs one JavaScript script that calls \
                 tools as `await tools.<name>(args)` (search_tools shows each one's signature) \
                 and returns only its answer."
            ),
            "{text}"
        );
        let down = Facts {
            have_catalog: false,
            ..up
        };
        assert!(instructions(&down).contains("upstream MCP server is down"));
        let one_down = ["github".to_string()];
        let some = Facts {
            down: &one_down,
            ..up
        };
        assert!(
            instructions(&some).contains(
                "Down right now: github. Their tools are still listed and found by search_tools, \
                 but calls to them fail until they are back"
            ),
            "{}",
            instructions(&some)
        );
        let all = crate::listed::Mode {
            all: true,
            why: "the whole catalog is 9 tokens, under listAllBelowTokens (10)".into(),
        };
        let text = instructions(&Facts { mode: &all, ..up });
        assert!(
            text.starts_with(
                "mcp-working-set: all 3 tools of the upstream MCP server are listed here directly \
                 (the whole catalog is 9 tokens, under listAllBelowTokens (10)), so there is \
                 nothing to search for."
            ),
            "{text}"
        );
    }
}
