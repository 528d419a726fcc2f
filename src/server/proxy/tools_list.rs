//! What `tools/list` shows a client: the meta-tools, then the upstream tools `crate::listed`
//! decides are listed, or every tool when `listed::mode` says so (this file counts the tokens it
//! decides from), slimmed (docs/protocol.md) and marked `anthropic/alwaysLoad`. Pure; shared by
//! the proxy and `mws report`. Must not do I/O, nor decide which tools are listed (that is
//! `crate::listed`).

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::config::{Config, Listing};
use crate::listed;
pub use crate::mcp::mark_always_load;
use crate::report::tokens::{Tokenizer, TokenizerKind, list_size};
use crate::server::proxy::meta_tools;

/// A catalog more than this many times the working-set listing in bytes is taken as larger
/// without counting tokens (tool-definition JSON runs 3 to 5 bytes per token, so counting could
/// not change the answer), which keeps the tokenizer unloaded in front of a large catalog.
pub const UNCOUNTED_BYTES_RATIO: usize = 2;
/// Most bytes per token assumed when checking `listAllBelowTokens`: a catalog over this many
/// bytes per allowed token is not counted. Raising it counts larger catalogs.
pub const MAX_BYTES_PER_TOKEN: usize = 8;

/// What `tools/list` shows, the upstream tools in it by the names clients see, and the mode.
pub struct Chosen {
    pub tools: Vec<Value>,
    pub names: Vec<String>,
    pub mode: listed::Mode,
}

/// The listing a client gets: `search_tools`, `call_tool`, then the upstream tools
/// `listed::entries` picks (working set, then pins); or, when `listed::mode` says so, every
/// upstream tool and no meta-tools but `run_script` in code mode.
pub fn choose(catalog: &Catalog, working_set: &[String], config: &Config) -> Chosen {
    let set = build(catalog, working_set, config, true);
    let every: Vec<String> = catalog.names().map(str::to_string).collect();
    let mode = if config.listing == Listing::Auto && !catalog.is_empty() {
        let all = build(catalog, &every, config, false);
        let (sb, ab) = (wire_len(&set), wire_len(&all));
        let below = config.list_all_below_tokens as usize;
        let count = ab < sb * UNCOUNTED_BYTES_RATIO || ab < below * MAX_BYTES_PER_TOKEN;
        let tok = count.then(|| Tokenizer::load(TokenizerKind::O200k));
        let tokens = |v: &[Value]| tok.map(|t| list_size(&t, v).tokens);
        listed::mode(config, catalog.len(), tokens(&all), tokens(&set))
    } else {
        listed::mode(config, catalog.len(), None, None)
    };
    if mode.all {
        Chosen {
            tools: build(catalog, &every, config, false),
            names: listed::names(catalog, &every, config),
            mode,
        }
    } else {
        Chosen {
            tools: set,
            names: listed::names(catalog, working_set, config),
            mode,
        }
    }
}

fn build(catalog: &Catalog, names: &[String], config: &Config, meta: bool) -> Vec<Value> {
    let mut out = if meta {
        meta_tools::definitions(&listed::searchable_view(catalog, config), config)
    } else {
        Vec::new()
    };
    for e in listed::entries(catalog, names, config) {
        if let Some(tool) = catalog.get(&e.upstream) {
            let tool = present(tool, config.compact_descriptions);
            out.push(if e.renamed() {
                meta_tools::renamed(tool, e.shown)
            } else {
                tool
            });
        }
    }
    if !meta && config.code_mode.enabled {
        out.push(meta_tools::run_script_listed());
    }
    out
}

fn wire_len(tools: &[Value]) -> usize {
    tools.iter().map(crate::mcp::json_len).sum()
}

/// The tools a client is sent, in order (`choose`).
pub fn listed_tools(catalog: &Catalog, working_set: &[String], config: &Config) -> Vec<Value> {
    choose(catalog, working_set, config).tools
}

/// The upstream tools that are listed (no meta-tools), in listing order, by the names clients
/// see (`choose`). Cheap in the `working-set` mode: no listing is built.
pub fn listed_names(catalog: &Catalog, working_set: &[String], config: &Config) -> Vec<String> {
    if config.listing == Listing::WorkingSet {
        return listed::names(catalog, working_set, config);
    }
    choose(catalog, working_set, config).names
}

/// One upstream tool as listed: slimmed schema, optionally compact description, alwaysLoad.
pub fn present(tool: &Value, compact: bool) -> Value {
    let mut tool = tool.clone();
    let Some(obj) = tool.as_object_mut() else {
        return tool;
    };
    let name = obj
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(schema) = obj.get_mut("inputSchema") {
        slim_top(schema, &name);
    }
    if compact && let Some(Value::String(d)) = obj.get_mut("description") {
        *d = first_paragraph(d);
    }
    mark_always_load(obj);
    tool
}

/// The description up to its first blank line, trimmed.
pub fn first_paragraph(d: &str) -> String {
    let d = d.trim();
    let end = d
        .find("\n\n")
        .or_else(|| d.find("\r\n\r\n"))
        .unwrap_or(d.len());
    d[..end].trim_end().to_string()
}

/// Slims a tool's `inputSchema`: the top-level title is dropped when it only repeats the tool name
/// (`send_mail`, `send_mailArguments`), then `slim` applies.
fn slim_top(schema: &mut Value, tool_name: &str) {
    if let Some(obj) = schema.as_object_mut()
        && let Some(Value::String(t)) = obj.get("title")
    {
        let t = squash(t);
        let n = squash(tool_name);
        if t == n || t == format!("{n}arguments") || t == format!("{n}input") {
            obj.remove("title");
        }
    }
    slim(schema);
}

/// Lossless schema slimming: no property titles that only repeat the key, no `default: null`, and
/// `anyOf [X, {"type": "null"}]` on an optional property collapsed to X when X's keys do not
/// collide with the property's own. `$schema` stays: it names the dialect the rest is read in
/// (a draft-07 `items` array means what 2020-12 calls `prefixItems`), so dropping it is not
/// lossless (the conformance check `json-schema-2020-12-$schema` asks for it too).
pub fn slim(schema: &mut Value) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    if obj.get("default") == Some(&Value::Null) {
        obj.remove("default");
    }
    let required: HashSet<String> = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    if let Some(Value::Object(props)) = obj.get_mut("properties") {
        for (key, prop) in props.iter_mut() {
            if let Some(p) = prop.as_object_mut() {
                if let Some(Value::String(t)) = p.get("title")
                    && squash(t) == squash(key)
                {
                    p.remove("title");
                }
                if !required.contains(key) {
                    collapse_nullable(p);
                }
            }
            slim(prop);
        }
    }
    for key in ["items", "additionalProperties", "not"] {
        if let Some(v) = obj.get_mut(key) {
            slim(v);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(list)) = obj.get_mut(key) {
            list.iter_mut().for_each(slim);
        }
    }
    for key in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = obj.get_mut(key) {
            defs.values_mut().for_each(slim);
        }
    }
}

/// `{"anyOf": [X, {"type": "null"}], ...rest}` → `{...X, ...rest}` when no key collides.
fn collapse_nullable(p: &mut Map<String, Value>) {
    let Some(Value::Array(any)) = p.get("anyOf") else {
        return;
    };
    if any.len() != 2 {
        return;
    }
    let is_null = |v: &Value| {
        v.as_object()
            .is_some_and(|o| o.len() == 1 && o.get("type") == Some(&Value::String("null".into())))
    };
    let other = match (is_null(&any[0]), is_null(&any[1])) {
        (true, false) => &any[1],
        (false, true) => &any[0],
        _ => return,
    };
    let Some(other) = other.as_object() else {
        return;
    };
    if other.keys().any(|k| k != "anyOf" && p.contains_key(k)) || other.contains_key("anyOf") {
        return;
    }
    let other = other.clone();
    let mut merged = Map::new();
    for (k, v) in std::mem::take(p) {
        if k == "anyOf" {
            for (ok, ov) in &other {
                merged.insert(ok.clone(), ov.clone());
            }
        } else {
            merged.insert(k, v);
        }
    }
    *p = merged;
}

/// Lowercase alphanumerics only: `Max Results` and `max_results` both give `maxresults`.
fn squash(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
#[path = "tools_list_tests.rs"]
mod tests;
