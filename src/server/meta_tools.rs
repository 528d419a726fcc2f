//! The two meta-tools every client sees first: their definitions (honest annotations, alwaysLoad),
//! `search_tools`' query, the forgiving parts of `call_tool` (name resolution, argument parsing,
//! did-you-mean). The names clients see for upstream tools (a tool named like a meta-tool, a
//! server's prefix, a shortened name) are `catalog::exposed`'s. Pure: the handler does the calling
//! and logging. Must not do I/O.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
pub use crate::catalog::exposed::{
    CALL_TOOL, SEARCH_TOOLS, SHADOWED_PREFIX, exposed_catalog, exposed_name, is_meta, renamed,
    shadowed, upstream_name,
};
use crate::config::Config;
use crate::mcp::mark_always_load;
use crate::server::instructions::backends;

/// How many close names an unknown-tool error suggests. Raising it lengthens the error text.
pub const SUGGESTIONS: usize = 3;

/// Most backends named in `search_tools`' description. Raising it grows every listing.
pub const MAX_BACKENDS_DESCRIBED: usize = 20;

/// `search_tools`' `query`: a string within the search bounds. Anything else is refused with the
/// text the model reads (as a tool error, like `call_tool`'s bad arguments).
pub fn search_query(args: Option<&Value>) -> Result<&str, String> {
    let got = match args.and_then(|a| a.get("query")) {
        Some(Value::String(q)) => {
            return crate::search::check_query(q)
                .map(|()| q.as_str())
                .map_err(|e| format!("search_tools: {e}"));
        }
        None => "nothing",
        Some(Value::Null) => "null",
        Some(Value::Bool(_)) => "a boolean",
        Some(Value::Number(_)) => "a number",
        Some(Value::Array(_)) => "an array",
        Some(Value::Object(_)) => "an object",
    };
    Err(format!(
        "search_tools: 'query' must be a string, got {got}; pass what the tool should do \
         (\"send an email\"), a tool or backend name, or \"\" to list every tool"
    ))
}

/// `search_tools` and `call_tool` as listed.
pub fn definitions(catalog: &Catalog, config: &Config) -> Vec<Value> {
    let count = match catalog.len() {
        0 => String::new(),
        n => format!("{n} "),
    };
    let mut search_desc = format!(
        "Search all {count}tools of the upstream MCP server by what they do, or by exact name. \
         Returns the best matches with input schemas and a ready-to-copy call_tool template. \
         Use it whenever a capability seems missing from your tool list: most tools are not \
         listed directly. An empty query lists every tool name by backend."
    );
    let bs = backends(catalog);
    if !bs.is_empty() {
        let named: Vec<String> = bs
            .iter()
            .take(MAX_BACKENDS_DESCRIBED)
            .map(|(b, n)| match config.backend_hints.get(b) {
                Some(h) => format!("{b} ({h}, {n})"),
                None => format!("{b} ({n})"),
            })
            .collect();
        search_desc.push_str(&format!(" Backends: {}.", named.join(", ")));
    }
    let mut search = json!({
        "name": SEARCH_TOOLS,
        "title": "Search tools",
        "description": search_desc,
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What you want to do (\"send an email\"), a tool name, or a backend name"
                }
            },
            "required": ["query"]
        },
        "annotations": {
            "title": "Search tools",
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": false
        }
    });
    let mut call = json!({
        "name": CALL_TOOL,
        "title": "Call a tool",
        "description": "Run any tool of the upstream MCP server by its exact name, listed or not. \
                        Find names and argument schemas with search_tools first.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as search_tools shows it"},
                "arguments": {"type": "object", "description": "The tool's arguments, per its input schema"}
            },
            "required": ["name"]
        },
        "annotations": {
            "title": "Call a tool",
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": true
        }
    });
    for t in [&mut search, &mut call] {
        if let Some(o) = t.as_object_mut() {
            mark_always_load(o);
        }
    }
    vec![search, call]
}

/// Why `call_tool` could not run a name.
#[derive(Debug, Clone, PartialEq)]
pub struct UnknownTool {
    pub name: String,
    pub suggestions: Vec<String>,
}

impl UnknownTool {
    /// The error text the model sees.
    pub fn message(&self) -> String {
        let mut m = format!("unknown tool '{}'.", self.name);
        if !self.suggestions.is_empty() {
            m.push_str(&format!(" Did you mean: {}?", self.suggestions.join(", ")));
        }
        m.push_str(&format!(
            " Use search_tools(\"{}\") to find the right tool name.",
            self.name.replace(['_', '-'], " ")
        ));
        m
    }
}

/// What a name given to `call_tool` runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// mws's own `search_tools`.
    Search,
    /// `call_tool` itself (refused: it runs other tools).
    CallTool,
    /// An upstream tool, by the upstream's name.
    Tool(String),
}

/// Maps the name a model gave `call_tool` to what it runs: a meta-tool by its bare name, else an
/// upstream tool, matched over the names clients see (`exposed_name`): exact; without a
/// `mcp__<server>__` prefix; with `-`/`_` confusion undone; with a missing backend prefix added
/// when exactly one tool fits. With an empty catalog (upstream not listed yet) the name is passed
/// on.
pub fn resolve(catalog: &Catalog, name: &str) -> Result<Resolved, UnknownTool> {
    let name = name.trim();
    let bare = strip_client_prefix(name);
    let tool = |n: &str| Ok(Resolved::Tool(upstream_name(catalog, n).to_string()));
    let visible = |n: &str| {
        let up = upstream_name(catalog, n);
        catalog.contains(up) && exposed_name(catalog, up).as_deref() == Some(n)
    };
    if visible(name) {
        return tool(name);
    }
    match bare {
        SEARCH_TOOLS => return Ok(Resolved::Search),
        CALL_TOOL => return Ok(Resolved::CallTool),
        _ => {}
    }
    if catalog.is_empty() || visible(bare) {
        return tool(bare);
    }
    let norm = |s: &str| s.replace('-', "_").to_lowercase();
    let want = norm(bare);
    let names: Vec<Cow<str>> = exposed_names(catalog).collect();
    let unique = |matches: Vec<&Cow<str>>| (matches.len() == 1).then(|| matches[0].to_string());
    if let Some(n) = unique(names.iter().filter(|n| norm(n) == want).collect()) {
        return tool(&n);
    }
    let suffix = format!("_{want}");
    if let Some(n) = unique(
        names
            .iter()
            .filter(|n| norm(n).ends_with(&suffix))
            .collect(),
    ) {
        return tool(&n);
    }
    Err(UnknownTool {
        name: bare.to_string(),
        suggestions: closest(catalog, bare, SUGGESTIONS),
    })
}

/// The catalog's names as clients see them, in catalog order.
fn exposed_names(catalog: &Catalog) -> impl Iterator<Item = Cow<'_, str>> {
    catalog.names().filter_map(|n| exposed_name(catalog, n))
}

/// `mcp__toolbox__mail_send` → `mail_send` (Claude Code and Codex both prefix so).
fn strip_client_prefix(name: &str) -> &str {
    name.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .map(|(_, tool)| tool)
        .unwrap_or(name)
}

/// `arguments` as an object: absent or null → `{}`; a JSON string holding an object is parsed.
pub fn parse_arguments(v: Option<&Value>) -> Result<Value, String> {
    match v {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::Object(_)) => Ok(v.cloned().unwrap_or_default()),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Value::Object(Map::new())),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(o @ Value::Object(_)) => Ok(o),
            Ok(_) => Err("call_tool: 'arguments' must be a JSON object".into()),
            Err(e) => Err(format!(
                "call_tool: 'arguments' is a string that is not valid JSON ({e}); pass an object"
            )),
        },
        Some(_) => Err("call_tool: 'arguments' must be a JSON object".into()),
    }
}

/// The `n` catalog names (as clients see them) closest to `name`: by edit distance over lowercase names, with shared
/// words counting in favour. Ties keep catalog order.
pub fn closest(catalog: &Catalog, name: &str, n: usize) -> Vec<String> {
    let want = name.to_lowercase();
    let words: Vec<&str> = want
        .split(['_', '-', '.', ' '])
        .filter(|w| !w.is_empty())
        .collect();
    let mut scored: Vec<(usize, usize, Cow<str>)> = exposed_names(catalog)
        .enumerate()
        .map(|(i, cand)| {
            let c = cand.to_lowercase();
            let shared = words
                .iter()
                .filter(|w| c.split(['_', '-', '.']).any(|x| x == **w))
                .count();
            let d = levenshtein(&want, &c).saturating_sub(shared * 3);
            (d, i, cand)
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(n)
        .map(|(_, _, c)| c.to_string())
        .collect()
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
#[path = "meta_tools_tests.rs"]
mod tests;
