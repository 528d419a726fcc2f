//! Tool names as the clients record them, mapped back to the names the upstream knows. Which
//! recorded names belong to this proxy (one of a root's `serverNames`), each client's sanitizer, and
//! the catalog lookup that undoes it. Pure: no I/O.

use std::collections::HashMap;

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

#[derive(Debug, Clone)]
struct ServerForms {
    raw: String,
    claude: String,
    codex: String,
    /// `mcp__<claude form>__`, searched for in raw Claude Code lines before parsing.
    claude_prefix: String,
}

/// The two meta-tools mws itself lists. A transcript call of `call_tool` is recorded under the tool
/// it ran; `search_tools` is a search (the proxy logs those), not a tool call.
pub const META_CALL: &str = "call_tool";
pub const META_SEARCH: &str = "search_tools";

/// What a recorded MCP tool name resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A tool call: the upstream tool name.
    Tool(String),
    /// `call_tool` through mws: the inner tool is in the call's arguments (`name`).
    CallTool,
    /// `search_tools` through mws: not a tool call.
    Search,
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
            .map(|s| {
                let raw = s.as_ref().to_string();
                let claude = claude_normalize(&raw);
                ServerForms {
                    claude_prefix: format!("mcp__{claude}__"),
                    codex: codex_sanitize(&raw),
                    claude,
                    raw,
                }
            })
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
                return Some((&s.raw, self.resolve(tool, Client::Claude)));
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
            return Some((&s.raw, self.resolve(name, Client::Codex)));
        }
        let flat = name.strip_prefix("mcp__").unwrap_or(name);
        for s in &self.servers {
            for form in [&s.raw, &s.codex, &s.claude] {
                if let Some(tool) = flat
                    .strip_prefix(form.as_str())
                    .and_then(|r| r.strip_prefix("__"))
                    && !tool.is_empty()
                {
                    return Some((&s.raw, self.resolve(tool, Client::Codex)));
                }
            }
        }
        None
    }

    /// The configured server a recorded Codex server name (raw or sanitised) stands for.
    pub fn codex_server_raw(&self, server: &str) -> Option<&str> {
        self.codex_server(server).map(|s| s.raw.as_str())
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
        if tool == META_CALL {
            return Resolved::CallTool;
        }
        if tool == META_SEARCH {
            return Resolved::Search;
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
            for s in &self.servers {
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
mod tests {
    use super::*;

    fn names() -> Names {
        Names::new(
            &[
                "toolbox",
                "chrome-devtools",
                "claude.ai Notion",
                "plugin:em:em",
            ],
            &["get-sum", "mail.send", "drive_search", "calendar_list"],
        )
    }

    #[test]
    fn normalizers() {
        for (raw, claude, codex) in [
            ("chrome-devtools", "chrome-devtools", "chrome_devtools"),
            ("claude.ai Notion", "claude_ai_Notion", "claude_ai_Notion"),
            ("plugin:em:em", "plugin_em_em", "plugin_em_em"),
            ("mail.send", "mail_send", "mail_send"),
        ] {
            assert_eq!(claude_normalize(raw), claude, "{raw}");
            assert_eq!(codex_sanitize(raw), codex, "{raw}");
        }
    }

    #[test]
    fn claude_names() {
        let n = names();
        let t = |s: &str| Resolved::Tool(s.into());
        for (name, want) in [
            ("mcp__toolbox__get-sum", Some(("toolbox", t("get-sum")))),
            ("mcp__toolbox__mail_send", Some(("toolbox", t("mail.send")))),
            ("mcp__toolbox__unknown_x", Some(("toolbox", t("unknown_x")))),
            (
                "mcp__toolbox__call_tool",
                Some(("toolbox", Resolved::CallTool)),
            ),
            (
                "mcp__toolbox__search_tools",
                Some(("toolbox", Resolved::Search)),
            ),
            (
                "mcp__chrome-devtools__snap",
                Some(("chrome-devtools", t("snap"))),
            ),
            (
                "mcp__claude_ai_Notion__s",
                Some(("claude.ai Notion", t("s"))),
            ),
            (
                "mcp__plugin_em_em__search",
                Some(("plugin:em:em", t("search"))),
            ),
            ("mcp__github__search", None),
            ("mcp__toolbox__", None),
            ("Bash", None),
        ] {
            assert_eq!(n.claude_tool(name), want, "{name}");
        }
    }

    #[test]
    fn codex_names_all_generations() {
        let n = names();
        let t = |s: &str| Resolved::Tool(s.into());
        for (ns, name, want) in [
            (
                Some("mcp__toolbox"),
                "get_sum",
                Some(("toolbox", t("get-sum"))),
            ),
            (
                Some("mcp__toolbox__"),
                "get_sum",
                Some(("toolbox", t("get-sum"))),
            ),
            (
                Some("mcp__chrome_devtools"),
                "snap",
                Some(("chrome-devtools", t("snap"))),
            ),
            (
                None,
                "mcp__toolbox__mail_send",
                Some(("toolbox", t("mail.send"))),
            ),
            (
                None,
                "toolbox__drive_search",
                Some(("toolbox", t("drive_search"))),
            ),
            (
                None,
                "chrome-devtools__snap",
                Some(("chrome-devtools", t("snap"))),
            ),
            (None, "web__run", None),
            (None, "exec_command", None),
            (Some("mcp__github"), "search", None),
        ] {
            assert_eq!(n.codex_tool(ns, name), want, "{ns:?} {name}");
        }
        assert_eq!(
            n.codex_server_raw("chrome_devtools"),
            Some("chrome-devtools")
        );
    }

    #[test]
    fn call_tool_targets() {
        let n = names();
        for (name, want) in [
            ("get-sum", "get-sum"),
            ("mcp__toolbox__get-sum", "get-sum"),
            ("get_sum", "get-sum"),
            ("search", "drive_search"),
            ("list", "calendar_list"),
            ("nothing", "nothing"),
        ] {
            assert_eq!(n.call_tool_target(name, Client::Codex), want, "{name}");
        }
    }

    /// An upstream's own `call_tool`, which clients see as `upstream__call_tool`.
    #[test]
    fn meta_named_upstream_tools_are_recorded_by_their_upstream_names() {
        let n = Names::new(&["toolbox"], &["call_tool", "get-sum"]);
        let (_, r) = n.claude_tool("mcp__toolbox__call_tool").unwrap();
        assert_eq!(r, Resolved::CallTool);
        let (_, r) = n.claude_tool("mcp__toolbox__upstream__call_tool").unwrap();
        assert_eq!(r, Resolved::Tool("call_tool".into()));
        let target = n.call_tool_target("upstream__call_tool", Client::Codex);
        assert_eq!(target, "call_tool");
    }

    #[test]
    fn colliding_normal_forms_stay_as_seen() {
        let n = Names::new(&["s"], &["a.b", "a-b"]);
        assert_eq!(n.upstream("a_b", Client::Codex), "a_b");
        assert_eq!(n.upstream("a_b", Client::Claude), "a.b");
        assert_eq!(n.upstream("a-b", Client::Claude), "a-b");
    }
}
