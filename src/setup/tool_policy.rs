//! A moved server's per-tool settings in its client (Codex: `enabled_tools`, `disabled_tools`,
//! `default_tools_approval_mode`, `[mcp_servers.X.tools.<tool>] approval_mode`) carried over to
//! mws's `policy` where it can express them, and the rest named with why. Behind mws one policy
//! serves every client, so tool lists are carried only when every registration of the server
//! limits its tools alike. Pure: flags in, globs, sentences and config text out; must not read
//! a file.

use serde::Serialize;
use serde_json::{Map, Value, json};

use super::Flag;
use super::Source;
use super::entry::{opt_str, string_list};
use super::jsonc_edit;

/// What a moved server's tool settings come to in mws's config.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolPolicy {
    /// `policy.deny` globs: the server's tools its client switched off.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub deny: Vec<String>,
    /// The only tools of the server its client kept, as `policy.allow` globs (`None`: all).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub only: Option<Vec<String>>,
    /// Settings that could not be carried over, each with why.
    #[serde(rename = "notCarried", skip_serializing_if = "Vec::is_empty")]
    pub not_carried: Vec<String>,
}

impl ToolPolicy {
    pub fn is_empty(&self) -> bool {
        self.deny.is_empty() && self.only.is_none() && self.not_carried.is_empty()
    }
}

/// The flags of a Codex `[mcp_servers.<name>]` table's tool settings.
pub fn codex_flags(o: &Map<String, Value>) -> Result<Vec<Flag>, String> {
    let mut flags = Vec::new();
    if o.get("enabled_tools").is_some_and(|v| !v.is_null()) {
        flags.push(Flag::EnabledTools(string_list(o, "enabled_tools")?));
    }
    let disabled = string_list(o, "disabled_tools")?;
    if !disabled.is_empty() {
        flags.push(Flag::DisabledTools(disabled));
    }
    let mut approvals = Vec::new();
    if let Some(mode) = opt_str(o, "default_tools_approval_mode")? {
        approvals.push(format!("default_tools_approval_mode = \"{mode}\""));
    }
    if let Some(Value::Object(tools)) = o.get("tools") {
        for (tool, t) in tools {
            if let Some(mode) = t.get("approval_mode").and_then(Value::as_str) {
                approvals.push(format!("tools.{tool}.approval_mode = \"{mode}\""));
            }
        }
    }
    if !approvals.is_empty() {
        flags.push(Flag::Approvals(approvals));
    }
    Ok(flags)
}

/// The policy glob for tool `tool` of server `server` (its name behind mws, glob characters
/// taken literally).
pub fn glob(server: &str, tool: &str) -> String {
    glob::Pattern::escape(&format!("{server}__{tool}"))
}

/// The glob for every tool of `server`.
fn every_tool(server: &str) -> String {
    format!("{}__*", glob::Pattern::escape(server))
}

/// `(enabled, disabled)` of one registration.
fn lists(s: &Source) -> (Option<&Vec<String>>, &[String]) {
    let mut enabled = None;
    let mut disabled: &[String] = &[];
    for f in &s.flags {
        match f {
            Flag::EnabledTools(l) => enabled = Some(l),
            Flag::DisabledTools(l) => disabled = l,
            _ => {}
        }
    }
    (enabled, disabled)
}

/// What the registrations `sources` of the server called `server` behind mws carry over.
pub fn of(server: &str, sources: &[Source]) -> ToolPolicy {
    let mut out = ToolPolicy::default();
    let limited: Vec<&Source> = sources
        .iter()
        .filter(|s| {
            let (e, d) = lists(s);
            e.is_some() || !d.is_empty()
        })
        .collect();
    if let Some(first) = limited.first() {
        let alike =
            limited.len() == sources.len() && sources.iter().all(|s| lists(s) == lists(first));
        if alike {
            let (enabled, disabled) = lists(first);
            out.deny = disabled.iter().map(|t| glob(server, t)).collect();
            match enabled {
                // No tool enabled: none of them is usable.
                Some(e) if e.is_empty() => out.deny = vec![every_tool(server)],
                Some(e) => out.only = Some(e.iter().map(|t| glob(server, t)).collect()),
                None => {}
            }
        } else {
            let all: Vec<String> = limited.iter().map(|s| shown(s)).collect();
            out.not_carried.push(format!(
                "the tool lists (`enabled_tools`, `disabled_tools`) of {}: behind mws one policy \
                 serves every client, and not every registration of it limits its tools alike",
                all.join(", ")
            ));
        }
    }
    for s in sources {
        for f in &s.flags {
            if let Flag::Approvals(settings) = f {
                out.not_carried.push(format!(
                    "{} of {}: Codex approves the tools of mws's registration, not of each \
                     server behind it; `call_read_only_tool` runs its read-only tools under any \
                     approval policy",
                    settings.join(", "),
                    shown(s)
                ));
            }
        }
    }
    out
}

/// `codex (`gh`)`: a registration as the plan names it.
fn shown(s: &Source) -> String {
    format!("{} (`{}`)", s.origin.client.as_str(), s.name)
}

/// What an `--apply` adds to `policy`, from the servers it moves.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Added {
    /// Every `deny` glob of the moved servers.
    pub deny: Vec<String>,
    /// The tools kept of the servers that keep only some (`policy.allow` globs).
    pub only: Vec<String>,
    /// `<name>__*` for every other server of the config (its `servers`, once written), when some
    /// server keeps only some tools: a `policy.allow` written anew must name them to keep their
    /// tools.
    pub others: Vec<String>,
}

/// The `policy` additions of the servers `moved` (name behind mws, its policy), with `servers`
/// every server of the config.
pub fn merged<'a>(
    moved: impl IntoIterator<Item = (&'a str, &'a ToolPolicy)>,
    servers: &[String],
) -> Added {
    let mut out = Added::default();
    let mut limited = Vec::new();
    for (name, p) in moved {
        out.deny.extend(p.deny.iter().cloned());
        if let Some(o) = &p.only {
            out.only.extend(o.iter().cloned());
            limited.push(name);
        }
    }
    if !limited.is_empty() {
        out.others = servers
            .iter()
            .filter(|s| !limited.contains(&s.as_str()))
            .map(|s| every_tool(s))
            .collect();
    }
    out
}

/// A member of `policy` an `--apply` wrote: its key, whether the config had it before, and the
/// globs added.
pub type PolicyKey = (&'static str, bool, Vec<String>);

/// `text` with the `policy.deny` and `policy.allow` additions of `policies`
/// (`merged`), each list keeping what it held. An `allow` the config already has
/// limits every server: only the kept tools are added to it; a new one also names every other
/// server's tools (`<name>__*`).
pub fn add_to_config(
    text: String,
    policies: &[(&str, &ToolPolicy)],
) -> Result<(String, Vec<PolicyKey>), String> {
    let v: Value = serde_json::from_str(&crate::config::jsonc::strip(&text))
        .map_err(|e| format!("not valid JSON: {e}"))?;
    let servers: Vec<String> = v["servers"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    let add = merged(policies.iter().copied(), &servers);
    let mut t = text;
    let mut written = Vec::new();
    for (key, mut globs) in [("deny", add.deny), ("allow", add.only)] {
        if globs.is_empty() {
            continue;
        }
        let had: Vec<String> = v["policy"][key]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|g| g.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        if key == "allow" && had.is_empty() {
            globs.extend(add.others.iter().cloned());
        }
        globs.retain(|g| !had.contains(g));
        if globs.is_empty() {
            continue;
        }
        let mut list = had.clone();
        list.extend(globs.iter().cloned());
        t = jsonc_edit::set(&t, &["policy"], key, &json!(list))?;
        written.push((key, v["policy"].get(key).is_some(), globs));
    }
    Ok((t, written))
}

#[cfg(test)]
#[path = "tool_policy_tests.rs"]
mod tests;
