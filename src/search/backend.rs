//! Which backend a tool belongs to, from its name alone. Pure.
//!
//! A backend is a name prefix. In order:
//! 1. `server__tool` (gateways and aggregators): everything before the first `__`.
//! 2. A `backendHints` key `k` when the name starts with `k` plus a separator (`_ - . /`).
//! 3. The first segment before a separator (`mail` in `mail_send_message`), but only when the
//!    catalog *looks prefixed*: segments shared by at least `MIN_BACKEND_TOOLS` tools that are not
//!    action verbs (`get`, `list`, `create`, ...) cover at least `PREFIXED_SHARE` of the tools.
//!    Single servers that name tools verb-first (`read_file`, `list_issues`, the catalogs in
//!    fixtures/catalogs/) therefore have no backends, instead of a fake `get`/`list` backend; a
//!    server whose tools all carry its name (`slack_post_message`, `browser_click`) has one.
//!    Tools matching none of the rules have no backend (grouped as `(other)` in the empty query).

use std::collections::BTreeMap;

use super::hash::FastMap;

/// Fewest tools that must share a first segment for it to count as a backend. Raising it stops
/// small servers from being recognised in a mixed catalog.
const MIN_BACKEND_TOOLS: usize = 2;

/// Share of the catalog that recognised prefixes must cover before rule 3 applies at all. Raising
/// it makes mixed catalogs (some tools prefixed, some not) fall back to "no backends".
const PREFIXED_SHARE: f64 = 0.5;

/// First segments that are verbs, never backends.
const VERB_PREFIXES: &[&str] = &[
    "add",
    "aggregate",
    "analyze",
    "append",
    "apply",
    "archive",
    "assign",
    "browse",
    "build",
    "calculate",
    "call",
    "cancel",
    "check",
    "clear",
    "click",
    "clone",
    "close",
    "compare",
    "convert",
    "copy",
    "count",
    "create",
    "delete",
    "describe",
    "disable",
    "download",
    "drop",
    "edit",
    "enable",
    "evaluate",
    "execute",
    "explain",
    "export",
    "fetch",
    "fill",
    "find",
    "fork",
    "format",
    "generate",
    "get",
    "import",
    "insert",
    "install",
    "invite",
    "list",
    "load",
    "lookup",
    "manage",
    "mark",
    "merge",
    "move",
    "navigate",
    "open",
    "parse",
    "post",
    "press",
    "protect",
    "push",
    "put",
    "query",
    "read",
    "remove",
    "rename",
    "replace",
    "rerun",
    "reset",
    "resolve",
    "restart",
    "retrieve",
    "run",
    "save",
    "search",
    "select",
    "send",
    "set",
    "show",
    "simulate",
    "start",
    "stop",
    "submit",
    "take",
    "toggle",
    "trigger",
    "unprotect",
    "update",
    "upload",
    "validate",
    "view",
    "wait",
    "write",
];

const SEPARATORS: &[char] = &['_', '-', '.', '/'];

/// The backend of every tool of one catalog.
#[derive(Debug, Clone, Default)]
pub struct Backends {
    /// Backend names in order of first appearance.
    pub names: Vec<String>,
    /// Per tool (catalog order): index into `names`, and the byte offset where the local name
    /// (without prefix and separator) starts.
    pub of_tool: Vec<Option<(u32, u32)>>,
    /// ASCII-lowercased name → index into `names` (the first of names equal but for case), so
    /// that each query word costs one lookup, not a pass over the backends.
    by_lower: FastMap<Box<str>, u32>,
}

impl Backends {
    pub fn recognise<'a>(
        names: impl Iterator<Item = &'a str> + Clone,
        hints: &BTreeMap<String, String>,
    ) -> Backends {
        let prefixed = looks_prefixed(names.clone());
        let mut b = Backends::default();
        let mut index: FastMap<&str, u32> = FastMap::default();
        for name in names {
            let found = split(name, hints, prefixed);
            let entry = found.map(|(prefix, rest)| {
                let id = *index.entry(prefix).or_insert_with(|| {
                    b.names.push(prefix.to_string());
                    (b.names.len() - 1) as u32
                });
                (id, rest as u32)
            });
            b.of_tool.push(entry);
        }
        for (i, n) in b.names.iter().enumerate() {
            b.by_lower
                .entry(n.to_ascii_lowercase().into())
                .or_insert(i as u32);
        }
        // What users call a server registered as `n8n-mcp` or `mcp-server-chart`: after every
        // full name, so that a full name wins over another's short one.
        for (i, n) in b.names.iter().enumerate() {
            let lower = n.to_ascii_lowercase();
            let short = short_name(&lower);
            if short.len() > 1 && short != lower && !matches!(short, "mcp" | "server") {
                b.by_lower.entry(short.into()).or_insert(i as u32);
            }
        }
        b
    }

    /// The backend name of tool `doc`.
    pub fn of(&self, doc: usize) -> Option<&str> {
        self.of_tool[doc].map(|(id, _)| self.names[id as usize].as_str())
    }

    /// The backend with this name, case-insensitively.
    pub fn find(&self, word: &str) -> Option<u32> {
        if word.bytes().any(|b| b.is_ascii_uppercase()) {
            self.by_lower
                .get(word.to_ascii_lowercase().as_str())
                .copied()
        } else {
            self.by_lower.get(word).copied()
        }
    }
}

/// A lowercase backend name without the words that say it is an MCP server: `n8n-mcp` is
/// `n8n`, `mcp-server-chart` is `chart`, `arxiv-mcp-server` is `arxiv`.
fn short_name(lower: &str) -> &str {
    let mut s = lower;
    for prefix in ["mcp-server-", "mcp_server_", "mcp-", "mcp_"] {
        s = s.strip_prefix(prefix).unwrap_or(s);
    }
    for suffix in [
        "-mcp-server",
        "_mcp_server",
        "-server",
        "_server",
        "-mcp",
        "_mcp",
    ] {
        s = s.strip_suffix(suffix).unwrap_or(s);
    }
    s
}

/// `(prefix, offset of the rest)` when `name` has a backend prefix.
fn split<'a>(
    name: &'a str,
    hints: &BTreeMap<String, String>,
    prefixed: bool,
) -> Option<(&'a str, usize)> {
    // A byte scan: `str::find` with a string pattern sets up a searcher per name.
    let double = name.as_bytes().windows(2).position(|w| w == b"__");
    if let Some(i) = double.filter(|&i| i > 0 && i + 2 < name.len()) {
        return Some((&name[..i], i + 2));
    }
    for key in hints.keys() {
        if name.len() > key.len() + 1
            && name.starts_with(key.as_str())
            && name[key.len()..].starts_with(SEPARATORS)
        {
            return Some((&name[..key.len()], key.len() + 1));
        }
    }
    if !prefixed {
        return None;
    }
    let i = name
        .find(SEPARATORS)
        .filter(|&i| i > 0 && i + 1 < name.len())?;
    let first = &name[..i];
    (!is_verb(first)).then_some((first, i + 1))
}

fn is_verb(segment: &str) -> bool {
    let lower = segment.bytes().map(|b| b.to_ascii_lowercase());
    VERB_PREFIXES
        .binary_search_by(|v| v.bytes().cmp(lower.clone()))
        .is_ok()
}

/// Rule 3's catalog-level test (see the module doc).
fn looks_prefixed<'a>(names: impl Iterator<Item = &'a str>) -> bool {
    let mut counts: FastMap<&str, usize> = FastMap::default();
    let mut total = 0usize;
    for name in names {
        total += 1;
        if let Some(i) = name
            .find(SEPARATORS)
            .filter(|&i| i > 0 && i + 1 < name.len())
        {
            *counts.entry(&name[..i]).or_default() += 1;
        }
    }
    let covered: usize = counts
        .iter()
        .filter(|(seg, n)| **n >= MIN_BACKEND_TOOLS && !is_verb(seg))
        .map(|(_, n)| n)
        .sum();
    total > 0 && covered as f64 >= PREFIXED_SHARE * total as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs_sorted() {
        assert!(VERB_PREFIXES.windows(2).all(|w| w[0] < w[1]));
    }

    fn check(names: &[&str], hints: &[&str], want: &[Option<&str>]) {
        let hints = hints
            .iter()
            .map(|h| (h.to_string(), String::new()))
            .collect();
        let b = Backends::recognise(names.iter().copied(), &hints);
        let got: Vec<Option<&str>> = (0..names.len()).map(|i| b.of(i)).collect();
        assert_eq!(got, want, "{names:?}");
    }

    #[test]
    fn rules() {
        check(
            &["mail_send", "mail_list", "drive_share_file", "drive_list"],
            &[],
            &[Some("mail"), Some("mail"), Some("drive"), Some("drive")],
        );
        check(
            &[
                "get_me",
                "list_issues",
                "create_issue",
                "issue_read",
                "issue_write",
            ],
            &[],
            &[None, None, None, None, None],
        );
        check(
            &["gh__list_issues", "read_file", "fs-x_y", "slack_post"],
            &["fs"],
            &[Some("gh"), None, Some("fs"), None],
        );
        check(&["__x", "y__"], &[], &[None, None]);
    }

    #[test]
    fn a_server_is_found_by_what_users_call_it() {
        let names = [
            "n8n-mcp__search_templates",
            "mcp-server-chart__bar",
            "arxiv-mcp-server__search",
            "chart__pie",
            "mcp-server__x",
            "mcp-__y",
            "Docker_MCP__run",
            "-mcp__z",
            "mcp-server-mcp__w",
            "Ünï-mcp__v",
        ];
        let b = Backends::recognise(names.iter().copied(), &BTreeMap::new());
        let found = |w: &str| b.find(w).map(|i| b.names[i as usize].as_str());
        assert_eq!(found("n8n"), Some("n8n-mcp"));
        assert_eq!(found("N8N"), Some("n8n-mcp"));
        assert_eq!(found("arxiv"), Some("arxiv-mcp-server"));
        assert_eq!(found("docker"), Some("Docker_MCP"));
        // A full name wins over another server's short one.
        assert_eq!(found("chart"), Some("chart"));
        assert_eq!(found("mcp-server-chart"), Some("mcp-server-chart"));
        // Nothing is left to call the server by, or only the words every server has.
        assert_eq!(found("server"), None);
        assert_eq!(found("mcp"), None);
        assert_eq!(found(""), None);
        assert_eq!(found("-"), None);
        // Case is folded for ASCII only, as for full names.
        assert_eq!(found("Ünï"), Some("Ünï-mcp"));
    }
}
