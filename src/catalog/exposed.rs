//! The names clients see for upstream tools, and the way back to the server and name a call goes
//! to. One place for every rule: an upstream tool named like a meta-tool (`SHADOWED_PREFIX`), the
//! `<server>__<tool>` prefix of `servers`, and the deterministic shortening of a name that would
//! pass a client's 64-character limit once it adds `mcp__<serverName>__`. Pure: must not do I/O.
//!
//! One rule for a single upstream's tool named like a meta-tool (`search_tools`, `call_tool`,
//! `call_read_only_tool`): clients see it as
//! `upstream__search_tools` / `upstream__call_tool` everywhere (listing, search results and
//! templates, `call_tool`, direct `tools/call`, did-you-mean), and the bare names always mean mws's
//! own meta-tools. A call is sent upstream, and logged, under the upstream's own name. With
//! `servers` every tool is prefixed, so no tool can take a meta-tool's name.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::catalog::Catalog;

pub const SEARCH_TOOLS: &str = "search_tools";
pub const CALL_TOOL: &str = "call_tool";
pub const CALL_READ_ONLY_TOOL: &str = "call_read_only_tool";
/// Code mode's meta-tool (`codeMode.enabled`): a script that calls tools.
pub const RUN_SCRIPT: &str = "run_script";

/// mws's meta-tools' names, in listing order: no upstream tool is exposed under one of them.
pub const META_NAMES: [&str; 4] = [SEARCH_TOOLS, CALL_TOOL, CALL_READ_ONLY_TOOL, RUN_SCRIPT];

/// What clients see before the name of an upstream tool named like a meta-tool. It reads as
/// the tool's server (`upstream`) in the `<server>__<tool>` form of gateways.
pub const SHADOWED_PREFIX: &str = "upstream__";

/// Between a server's name and its tool's name in an exposed name.
pub const SEPARATOR: &str = "__";

/// The longest tool name Claude's and OpenAI's APIs accept, the client's prefix included.
pub const CLIENT_NAME_LIMIT: usize = 64;

/// The fewest characters an exposed name may keep, however long `serverName` is. Lowering it
/// lets a very long `serverName` shorten names to little more than their hash.
pub const MIN_NAME_BUDGET: usize = 24;

/// Hex digits of the hash that ends a shortened name. Raising it makes a collision between two
/// shortened names even less likely and keeps fewer characters of the name itself.
const HASH_DIGITS: usize = 8;

pub fn is_meta(name: &str) -> bool {
    META_NAMES.contains(&name)
}

/// The name clients see for the upstream tool `name`: `upstream__<name>` for a meta-tool's name,
/// else `name` itself. `None` when the upstream also has a tool of that `upstream__` name (that
/// tool keeps it, and the meta-named one is not exposed).
pub fn exposed_name<'a>(catalog: &Catalog, name: &'a str) -> Option<Cow<'a, str>> {
    if !is_meta(name) {
        return Some(Cow::Borrowed(name));
    }
    let alias = format!("{SHADOWED_PREFIX}{name}");
    (!catalog.contains(&alias)).then_some(Cow::Owned(alias))
}

/// The upstream's name for a name a client used: `upstream__search_tools` → `search_tools`
/// (unless the upstream has a tool literally named `upstream__search_tools`), else the name.
pub fn upstream_name<'a>(catalog: &Catalog, name: &'a str) -> &'a str {
    match name.strip_prefix(SHADOWED_PREFIX) {
        Some(rest) if is_meta(rest) && !catalog.contains(name) => rest,
        _ => name,
    }
}

/// What one of a tool's names is, for a message that says which one a rule matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    /// The name the catalog holds it under (exposed with `servers`, the upstream's own without).
    Catalog,
    /// The unshortened `<server>__<tool>` of a name mws shortened.
    Real,
    /// The name clients see when it differs (`upstream__search_tools`).
    Shown,
}

/// Every name the catalog's tool `name` goes by, for the name rules (policy, pins): `name`
/// itself, its real name when mws shortened it, the name clients see when that differs. A rule
/// naming any of them names the tool, so a shortened or renamed tool cannot slip past one.
pub fn every_name<'a>(catalog: &'a Catalog, name: &'a str) -> Vec<(NameKind, Cow<'a, str>)> {
    let mut names = vec![(NameKind::Catalog, Cow::Borrowed(name))];
    let real = catalog.real_name(name);
    if real != name {
        names.push((NameKind::Real, Cow::Borrowed(real)));
    }
    if let Some(shown @ Cow::Owned(_)) = exposed_name(catalog, name) {
        names.push((NameKind::Shown, shown));
    }
    names
}

/// The name the catalog holds a tool under, for any of its names (`every_name`): the name
/// itself when the catalog has it, else the tool whose real or shown name it is; `name` when
/// none is.
pub fn catalog_name<'a>(catalog: &'a Catalog, name: &'a str) -> &'a str {
    if catalog.contains(name) {
        return name;
    }
    if let Some(held) = catalog.by_real_name(name) {
        return held;
    }
    upstream_name(catalog, name)
}

/// The upstream tools named like a meta-tool, with the name clients see (`None`: not exposed).
pub fn shadowed(catalog: &Catalog) -> Vec<(&'static str, Option<String>)> {
    META_NAMES
        .into_iter()
        .filter(|m| catalog.contains(m))
        .map(|m| (m, exposed_name(catalog, m).map(Cow::into_owned)))
        .collect()
}

/// The catalog as clients see it (search runs on it): tools named like a meta-tool renamed per
/// `exposed_name`. The same `Arc` when the upstream has none (nearly always).
pub fn exposed_catalog(catalog: &Arc<Catalog>) -> Arc<Catalog> {
    if shadowed(catalog).is_empty() {
        return catalog.clone();
    }
    let tools = catalog
        .tools()
        .iter()
        .filter_map(|t| {
            let name = t.get("name").and_then(Value::as_str).unwrap_or("");
            match exposed_name(catalog, name)? {
                Cow::Borrowed(_) => Some(t.clone()),
                Cow::Owned(alias) => Some(renamed(t.clone(), alias)),
            }
        })
        .collect();
    Arc::new(Catalog::new(tools))
}

/// `tool` with its `name` replaced (key order kept).
pub fn renamed(mut tool: Value, name: String) -> Value {
    if let Some(n) = tool.get_mut("name") {
        *n = Value::String(name);
    }
    tool
}

/// How long an exposed name may be so that `mcp__<server_name>__<name>` stays within
/// `CLIENT_NAME_LIMIT` (never under `MIN_NAME_BUDGET`).
pub fn name_budget(server_name: &str) -> usize {
    CLIENT_NAME_LIMIT
        .saturating_sub("mcp__".len() + server_name.len() + SEPARATOR.len())
        .max(MIN_NAME_BUDGET)
}

/// `name` within `budget` characters: itself when it fits, else its head and `_` plus a hash of
/// the whole name, so the result is the same in every run and two long names sharing a head differ.
pub fn shorten(name: &str, budget: usize) -> Cow<'_, str> {
    if name.len() <= budget {
        return Cow::Borrowed(name);
    }
    let keep = budget.saturating_sub(HASH_DIGITS + 1);
    let mut cut = keep.min(name.len());
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = name[..cut].trim_end_matches(['_', '-', '.']);
    let hash = format!("{:016x}", fnv1a(name.as_bytes()));
    Cow::Owned(format!("{head}_{}", &hash[..HASH_DIGITS]))
}

/// FNV-1a, 64-bit: small, stable across runs and platforms (std's hasher is neither promised).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The exposed names of several servers' tools: `<server>__<tool>`, shortened per `budget`, and
/// the way back. Built from each server's catalog in config order; the first server and tool to
/// claim an exposed name keep it.
#[derive(Debug, Default, Clone)]
pub struct Naming {
    /// Exposed name → (server index, the server's own tool name).
    back: HashMap<String, (usize, String)>,
    /// (server index, exposed, the unshortened `<server>__<tool>`) for every shortened name.
    pub shortened: Vec<(usize, String, String)>,
    /// (server index, what a user should know): duplicates dropped, meta-tool names prefixed.
    pub warnings: Vec<(usize, String)>,
}

impl Naming {
    /// Names the tools of `servers` (name, catalog), in order; returns the naming and the tools
    /// renamed as clients see them.
    pub fn build(servers: &[(&str, &Catalog)], budget: usize) -> (Naming, Vec<Value>) {
        let mut n = Naming::default();
        let mut tools = Vec::new();
        for (i, (server, catalog)) in servers.iter().enumerate() {
            for dup in catalog.duplicates() {
                n.warnings.push((
                    i,
                    format!("lists tool \"{dup}\" more than once; the first definition is used"),
                ));
            }
            for t in catalog.tools() {
                let Some(tool) = t.get("name").and_then(Value::as_str) else {
                    continue;
                };
                let full = format!("{server}{SEPARATOR}{tool}");
                let exposed = shorten(&full, budget).into_owned();
                if is_meta(tool) {
                    n.warnings.push((
                        i,
                        format!(
                            "has a tool named like mws's meta-tool \"{tool}\"; it is exposed as \
                             \"{exposed}\""
                        ),
                    ));
                }
                if let Some((j, other)) = n.back.get(&exposed) {
                    n.warnings.push((
                        i,
                        format!(
                            "tool \"{tool}\" would be exposed as \"{exposed}\", which server #{} \
                             tool \"{other}\" already has; it is left out",
                            j + 1
                        ),
                    ));
                    continue;
                }
                if exposed != full {
                    n.shortened.push((i, exposed.clone(), full));
                }
                n.back.insert(exposed.clone(), (i, tool.to_string()));
                tools.push(renamed(t.clone(), exposed));
            }
        }
        (n, tools)
    }

    /// (exposed, real `<server>__<tool>`) for every shortened name: what
    /// `Catalog::with_real_names` takes.
    pub fn real_names(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.shortened
            .iter()
            .map(|(_, e, f)| (e.clone(), f.clone()))
    }

    /// The server index and the server's own tool name for an exposed name.
    pub fn resolve(&self, exposed: &str) -> Option<(usize, &str)> {
        self.back.get(exposed).map(|(i, t)| (*i, t.as_str()))
    }
}

/// `<server>__<tool>` split at the first `__` when `server` is one of `servers`: the way back for a
/// name not (yet) in any catalog.
pub fn split_prefixed<'a>(servers: &[&str], name: &'a str) -> Option<(usize, &'a str)> {
    let (server, tool) = name.split_once(SEPARATOR)?;
    let i = servers.iter().position(|s| *s == server)?;
    (!tool.is_empty()).then_some((i, tool))
}

#[cfg(test)]
#[path = "exposed_tests.rs"]
mod tests;
