//! The meta-tools every client sees first: their definitions (honest annotations, alwaysLoad),
//! `search_tools`' query, and what `call_tool` and `call_read_only_tool` share: name resolution
//! (exact names only, a did-you-mean for anything else), argument parsing, and the read-only
//! check. The names clients see for upstream tools (a tool named like a meta-tool, a
//! server's prefix, a shortened name) are `catalog::exposed`'s. Pure: the handler does the calling
//! and logging. Must not do I/O.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use crate::catalog::Catalog;
pub use crate::catalog::exposed::{
    CALL_READ_ONLY_TOOL, CALL_TOOL, RUN_SCRIPT, SEARCH_TOOLS, SHADOWED_PREFIX, exposed_catalog,
    exposed_name, is_meta, renamed, shadowed, upstream_name,
};
use crate::config::Config;
use crate::mcp::mark_always_load;
use crate::server::proxy::instructions::backends;

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
        "Search all {count}upstream tools by what they do or by exact name: the best matches, \
         with input schemas and a call_tool template. Use it whenever a capability seems \
         missing: most tools are not listed. An empty query lists every tool by backend."
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
    let search = json!({
        "name": SEARCH_TOOLS,
        "title": "Search tools",
        "description": search_desc,
        "inputSchema": {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What to do (\"send an email\"), a tool or a backend name"
                }
            },
            "required": ["query"]
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": false}
    });
    let call = json!({
        "name": CALL_TOOL,
        "title": "Call a tool",
        "description": "Run any upstream tool by its exact name, listed or not; find names and \
                        schemas with search_tools.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "The tool's name, as search_tools shows it"},
                "arguments": {"type": "object"}
            },
            "required": ["name"]
        },
        "annotations": {
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": true
        }
    });
    let mut defs = vec![search, call];
    if catalog
        .tools()
        .iter()
        .any(|t| crate::policy::read_only(Some(t)))
    {
        defs.push(read_only_call());
    }
    for t in &mut defs {
        if let Some(o) = t.as_object_mut() {
            mark_always_load(o);
        }
    }
    if config.code_mode.enabled {
        defs.push(run_script_listed());
    }
    defs
}

/// `run_script` as listed (with `alwaysLoad`): with the other meta-tools, and after every tool
/// when every tool is listed, since a script saves round trips whatever is listed.
pub fn run_script_listed() -> Value {
    let mut def = run_script();
    if let Some(o) = def.as_object_mut() {
        mark_always_load(o);
    }
    def
}

/// `run_script` (code mode, `codeMode.enabled`): kept short, since every request pays for it;
/// each tool's signature comes with `search_tools` results instead.
fn run_script() -> Value {
    json!({
        "name": RUN_SCRIPT,
        "title": "Run a script",
        "description": "Run an async JavaScript function body in a sandbox where every tool is \
                        `await tools.<name>(args)` (search_tools shows signatures): it resolves \
                        to the tool's structured result or text, and throws on error. Only what \
                        you `return` comes back: chain calls, filter, return a summary.",
        "inputSchema": {
            "type": "object",
            "properties": {"code": {"type": "string"}},
            "required": ["code"]
        },
        "annotations": {
            "readOnlyHint": false,
            "destructiveHint": true,
            "idempotentHint": false,
            "openWorldHint": true
        }
    })
}

/// `call_read_only_tool`: `call_tool` for the tools their server marks `readOnlyHint: true`,
/// itself read-only, so that a client that lets reads run unasked (Codex under
/// `approval_policy = "never"`) can run them. Listed when the catalog has such a tool.
fn read_only_call() -> Value {
    json!({
        "name": CALL_READ_ONLY_TOOL,
        "title": "Call a read-only tool",
        "description": "call_tool for the tools search_tools marks readOnly; call_tool runs the \
                        rest.",
        "inputSchema": {
            "type": "object",
            "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["name"]
        },
        "annotations": {"readOnlyHint": true, "openWorldHint": true}
    })
}

/// Why `call_read_only_tool` does not run `name` (the name the model gave), when the catalog's
/// `tool` is not marked `readOnlyHint: true`: the text the model reads.
pub fn not_read_only(name: &str, tool: Option<&Value>) -> Option<String> {
    (!crate::policy::read_only(tool)).then(|| {
        format!(
            "{CALL_READ_ONLY_TOOL} did not run {name}: its server does not mark it read-only \
             (readOnlyHint: true), and {CALL_READ_ONLY_TOOL} runs only tools that are. Run it \
             with {CALL_TOOL} instead, with the same name and arguments."
        )
    })
}

/// Why `call_tool` (or `call_read_only_tool`) could not run a name.
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

/// What a name given to `call_tool` or `call_read_only_tool` runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolved {
    /// mws's own `search_tools`.
    Search,
    /// A meta-tool that runs other tools (refused: it is not a tool to run through itself).
    Runner(&'static str),
    /// An upstream tool, by the name the catalog holds it under.
    Tool(String),
}

/// Maps the name a model gave `call_tool` to what it runs, exact names only: a meta-tool by its
/// bare name; else an upstream tool by the name clients see (`exposed_name`), with or without
/// the client's `mcp__<serverName>__` prefix, by the full `<server>__<tool>` of a name mws
/// shortened, or (with `servers`, `prefixed`) by the server's own tool name when exactly one
/// server has it. Anything else (another case, `-` for `_`, a missing backend prefix) runs
/// nothing: the error names the closest tools. With an empty catalog (upstream not listed yet)
/// the name is passed on.
pub fn resolve(catalog: &Catalog, name: &str, prefixed: bool) -> Result<Resolved, UnknownTool> {
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
        CALL_TOOL => return Ok(Resolved::Runner(CALL_TOOL)),
        CALL_READ_ONLY_TOOL => return Ok(Resolved::Runner(CALL_READ_ONLY_TOOL)),
        RUN_SCRIPT => return Ok(Resolved::Runner(RUN_SCRIPT)),
        _ => {}
    }
    if catalog.is_empty() || visible(bare) {
        return tool(bare);
    }
    if let Some(held) = catalog.by_real_name(bare).filter(|h| catalog.contains(h)) {
        return tool(held);
    }
    if prefixed {
        let mut owners = catalog.names().filter(|n| {
            let own = catalog
                .real_name(n)
                .split_once(crate::catalog::exposed::SEPARATOR);
            own.is_some_and(|(_, t)| t == bare)
        });
        if let (Some(only), None) = (owners.next(), owners.next()) {
            return tool(only);
        }
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
pub(crate) fn strip_client_prefix(name: &str) -> &str {
    name.strip_prefix("mcp__")
        .and_then(|rest| rest.split_once("__"))
        .map(|(_, tool)| tool)
        .unwrap_or(name)
}

/// `arguments` as an object: absent or null → `{}`; a JSON string holding an object is parsed.
/// `runner` (`call_tool`, `call_read_only_tool`) begins the error text.
pub fn parse_arguments(runner: &str, v: Option<&Value>) -> Result<Value, String> {
    let not_object = || format!("{runner}: 'arguments' must be a JSON object");
    match v {
        None | Some(Value::Null) => Ok(Value::Object(Map::new())),
        Some(Value::Object(_)) => Ok(v.cloned().unwrap_or_default()),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Value::Object(Map::new())),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(o @ Value::Object(_)) => Ok(o),
            Ok(_) => Err(not_object()),
            Err(e) => Err(format!(
                "{runner}: 'arguments' is a string that is not valid JSON ({e}); pass an object"
            )),
        },
        Some(_) => Err(not_object()),
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
