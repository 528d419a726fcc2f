//! Tool names as the clients record them, mapped back to the names the upstream knows. Which
//! recorded names belong to this proxy (one of a root's `serverNames`) or to a server behind it
//! called directly (`Servers`), each client's sanitizer, and the catalog lookup that undoes it.
//! Pure: no I/O.

use std::collections::{BTreeMap, HashMap};

use crate::server::meta_tools;

/// The names under which this proxy's tools appear in one transcript root, and the catalog to map
/// recorded tool names back to upstream names.
#[derive(Debug, Clone, Default)]
pub struct Names {
    /// Each configured server name with its Claude Code and Codex forms.
    servers: Vec<ServerForms>,
    /// Upstream tool names, exact.
    exact: HashMap<String, ()>,
    /// Claude-normalised catalog name → upstream name (`None` when two names collide).
    by_claude: HashMap<String, Option<String>>,
    /// Codex-sanitised catalog name → upstream name (`None` when two names collide).
    by_codex: HashMap<String, Option<String>>,
}

/// The servers behind mws (`servers` in the config) by name, each with the other names it had in
/// clients (its `aliases`). A call a client made to one of them directly, before mws, is counted
/// as a call of `<name>__<tool>`, the name mws lists it under.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Servers(pub BTreeMap<String, Vec<String>>);

impl Servers {
    /// From the config's `servers`: each name with its `aliases`.
    pub fn from_config(servers: &[crate::config::Server]) -> Servers {
        Servers(
            servers
                .iter()
                .map(|s| (s.name.clone(), s.aliases.clone()))
                .collect(),
        )
    }
}

#[derive(Debug, Clone)]
struct ServerForms {
    /// The name as the client has it.
    raw: String,
    /// `Some(name)`: a server behind mws, called directly under `raw`; its tools are `name__tool`.
    /// `None`: this proxy.
    direct: Option<String>,
    claude: String,
    codex: String,
    /// `mcp__<claude form>__`, searched for in raw Claude Code lines before parsing.
    claude_prefix: String,
}

/// The meta-tools mws itself lists. A transcript call of `call_tool` (or `call_read_only_tool`,
/// the same for read-only tools) is recorded under the tool it ran; `search_tools` is a search
/// (the proxy logs those), not a tool call, and `run_script` is a script whose tool calls only
/// the proxy sees (it logs each one).
pub const META_CALL: &str = "call_tool";
pub const META_READ_ONLY_CALL: &str = meta_tools::CALL_READ_ONLY_TOOL;
pub const META_SEARCH: &str = "search_tools";
pub const META_SCRIPT: &str = meta_tools::RUN_SCRIPT;

/// What a recorded MCP tool name resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A tool call: the upstream tool name.
    Tool(String),
    /// `call_tool` through mws: the inner tool is in the call's arguments (`name`).
    CallTool,
    /// `search_tools` or `run_script` through mws: not a tool call itself.
    NotACall,
}

/// Claude Code's `normalizeNameForMCP`: every character outside `[A-Za-z0-9_-]` becomes `_`; for
/// `claude.ai <Name>` connectors runs of `_` collapse and edges are trimmed.
pub fn claude_normalize(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with("claude.ai ") {
        let mut collapsed = String::with_capacity(out.len());
        for c in out.chars() {
            if !(c == '_' && collapsed.ends_with('_')) {
                collapsed.push(c);
            }
        }
        out = collapsed.trim_matches('_').to_string();
    }
    out
}

/// Codex's model-facing sanitizer, newest form: every character outside `[A-Za-z0-9_]` becomes `_`
/// (older builds kept `-`; comparing both sides in this form matches either).
pub fn codex_sanitize(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

impl Names {
    /// `servers`: a root's serverNames; `catalog`: upstream tool names (may be empty).
    pub fn new<S: AsRef<str>, T: AsRef<str>>(servers: &[S], catalog: &[T]) -> Names {
        let servers = servers
            .iter()
            .map(|s| ServerForms::new(s.as_ref(), None))
            .collect();
        let mut names = Names {
            servers,
            ..Names::default()
        };
        for t in catalog {
            let t = t.as_ref();
            names.exact.insert(t.to_string(), ());
            insert_unique(&mut names.by_claude, claude_normalize(t), t);
            insert_unique(&mut names.by_codex, codex_sanitize(t), t);
        }
        names
    }

    /// Also counts direct calls of the servers behind mws, under their names and aliases. A name
    /// this proxy has in the root stays the proxy's.
    pub fn with_servers(mut self, servers: &Servers) -> Names {
        for (name, aliases) in &servers.0 {
            for raw in std::iter::once(name).chain(aliases) {
                if !self.servers.iter().any(|s| s.raw == *raw) {
                    let forms = ServerForms::new(raw, Some(name.clone()));
                    self.servers.push(forms);
                }
            }
        }
        self
    }

    /// What a call of `tool` on server `s` counts as: the server name to record and the tool.
    fn hit<'a>(&'a self, s: &'a ServerForms, tool: &str, client: Client) -> (&'a str, Resolved) {
        match &s.direct {
            None => (&s.raw, self.resolve(tool, client)),
            Some(name) => (name, self.direct_tool(name, tool, client)),
        }
    }

    /// `tool` of the server behind mws called `name`, as mws lists it.
    fn direct_tool(&self, name: &str, tool: &str, client: Client) -> Resolved {
        Resolved::Tool(self.upstream(&format!("{name}__{tool}"), client))
    }

    /// Like `resolve`, for a tool of `server` as returned by `codex_server_raw`.
    pub fn resolve_on(&self, server: &str, tool: &str, client: Client) -> Resolved {
        if self
            .servers
            .iter()
            .any(|s| s.direct.as_deref() == Some(server))
        {
            return self.direct_tool(server, tool, client);
        }
        self.resolve(tool, client)
    }

    /// The `mcp__<server>__` prefixes to look for in raw Claude Code lines.
    pub fn claude_prefixes(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|s| s.claude_prefix.as_str())
    }

    /// Raw server names, for prefilters on Codex lines.
    pub fn codex_forms(&self) -> impl Iterator<Item = &str> {
        self.servers.iter().map(|s| s.codex.as_str())
    }

    /// A Claude Code tool_use name `mcp__<server>__<tool>` of one of our servers: the server as
    /// configured and the resolved tool.
    pub fn claude_tool(&self, name: &str) -> Option<(&str, Resolved)> {
        let rest = name.strip_prefix("mcp__")?;
        for s in &self.servers {
            if let Some(tool) = rest
                .strip_prefix(s.claude.as_str())
                .and_then(|r| r.strip_prefix("__"))
                && !tool.is_empty()
            {
                return Some(self.hit(s, tool, Client::Claude));
            }
        }
        None
    }

    /// A Codex function call of one of our servers, in any naming generation: `namespace:
    /// "mcp__<server>[_…]"` + `name: <tool>`, flat `mcp__<server>__<tool>`, or (2025) flat
    /// `<server>__<tool>`.
    pub fn codex_tool(&self, namespace: Option<&str>, name: &str) -> Option<(&str, Resolved)> {
        if let Some(ns) = namespace.filter(|n| !n.is_empty()) {
            let server = ns.strip_prefix("mcp__")?.trim_end_matches('_');
            let s = self.codex_server(server)?;
            return Some(self.hit(s, name, Client::Codex));
        }
        let flat = name.strip_prefix("mcp__").unwrap_or(name);
        for s in &self.servers {
            for form in [&s.raw, &s.codex, &s.claude] {
                if let Some(tool) = flat
                    .strip_prefix(form.as_str())
                    .and_then(|r| r.strip_prefix("__"))
                    && !tool.is_empty()
                {
                    return Some(self.hit(s, tool, Client::Codex));
                }
            }
        }
        None
    }

    /// The configured server a recorded Codex server name (raw or sanitised) stands for: this
    /// proxy's name, or the name mws has for a server behind it (see `resolve_on`).
    pub fn codex_server_raw(&self, server: &str) -> Option<&str> {
        self.codex_server(server)
            .map(|s| s.direct.as_deref().unwrap_or(&s.raw))
    }

    fn codex_server(&self, server: &str) -> Option<&ServerForms> {
        let wanted = codex_sanitize(server);
        self.servers
            .iter()
            .find(|s| s.raw == server || s.codex == wanted)
    }

    /// A tool name as the client recorded it (already without the server part) → upstream name.
    /// The bare meta-tool names are mws's own even when the upstream has a tool of that name,
    /// which clients see as `upstream__<name>` (`server::meta_tools`).
    pub fn resolve(&self, tool: &str, client: Client) -> Resolved {
        if tool == META_CALL || tool == META_READ_ONLY_CALL {
            return Resolved::CallTool;
        }
        if tool == META_SEARCH || tool == META_SCRIPT {
            return Resolved::NotACall;
        }
        Resolved::Tool(self.upstream(tool, client))
    }

    /// Maps a recorded tool name to the upstream name: exact, else the unique catalog name with the
    /// same client-normalised form; unknown names are kept as seen.
    pub fn upstream(&self, tool: &str, client: Client) -> String {
        if self.exact.contains_key(tool) {
            return tool.to_string();
        }
        if let Some(meta) = tool.strip_prefix(meta_tools::SHADOWED_PREFIX)
            && meta_tools::is_meta(meta)
        {
            return meta.to_string();
        }
        let (map, key) = match client {
            Client::Claude => (&self.by_claude, claude_normalize(tool)),
            Client::Codex => (&self.by_codex, codex_sanitize(tool)),
        };
        match map.get(&key) {
            Some(Some(up)) => up.clone(),
            _ => tool.to_string(),
        }
    }

    /// The tool a `call_tool {name}` ran: without an `mcp__<server>__` prefix, mapped to the
    /// catalog, or the unique catalog name that ends in `<sep><name>` (an omitted backend prefix).
    pub fn call_tool_target(&self, name: &str, client: Client) -> String {
        let mut bare = name;
        if let Some(rest) = name.strip_prefix("mcp__") {
            for s in self.servers.iter().filter(|s| s.direct.is_none()) {
                for form in [&s.raw, &s.claude, &s.codex] {
                    if let Some(t) = rest
                        .strip_prefix(form.as_str())
                        .and_then(|r| r.strip_prefix("__"))
                    {
                        bare = t;
                    }
                }
            }
        }
        let mapped = self.upstream(bare, client);
        if self.exact.contains_key(&mapped) {
            return mapped;
        }
        let mut found = self.exact.keys().filter(|c| {
            c.len() > bare.len()
                && c.ends_with(bare)
                && matches!(
                    c.as_bytes()[c.len() - bare.len() - 1],
                    b'_' | b'.' | b'-' | b'/'
                )
        });
        match (found.next(), found.next()) {
            (Some(one), None) => one.clone(),
            _ => mapped,
        }
    }
}

impl ServerForms {
    fn new(raw: &str, direct: Option<String>) -> ServerForms {
        let claude = claude_normalize(raw);
        ServerForms {
            claude_prefix: format!("mcp__{claude}__"),
            codex: codex_sanitize(raw),
            claude,
            raw: raw.to_string(),
            direct,
        }
    }
}

/// Which client's sanitizer a name went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Claude,
    Codex,
}

fn insert_unique(map: &mut HashMap<String, Option<String>>, key: String, name: &str) {
    map.entry(key)
        .and_modify(|v| {
            if v.as_deref() != Some(name) {
                *v = None
            }
        })
        .or_insert_with(|| Some(name.to_string()));
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
