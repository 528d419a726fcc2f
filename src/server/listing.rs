//! What `tools/list` shows a client: the meta-tools, then the upstream tools `crate::listed`
//! decides are listed, slimmed (docs/protocol.md) and marked `anthropic/alwaysLoad`. Pure; shared
//! by the proxy and `mws report` (which counts its tokens). Must not do I/O, nor decide which
//! tools are listed (that is `crate::listed`).

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::catalog::Catalog;
use crate::config::Config;
use crate::listed;
pub use crate::mcp::mark_always_load;
use crate::server::meta_tools;

/// The tools a client is sent, in order: `search_tools`, `call_tool`, then the upstream tools
/// `listed::entries` picks (working set, then pins), each under the name clients see.
pub fn listed_tools(catalog: &Catalog, working_set: &[String], config: &Config) -> Vec<Value> {
    let mut out = meta_tools::definitions(&listed::searchable_view(catalog, config), config);
    for e in listed::entries(catalog, working_set, config) {
        if let Some(tool) = catalog.get(&e.upstream) {
            let tool = present(tool, config.compact_descriptions);
            out.push(if e.renamed() {
                meta_tools::renamed(tool, e.shown)
            } else {
                tool
            });
        }
    }
    out
}

/// The upstream tools that are listed (no meta-tools), in listing order, by the names clients
/// see (`listed::names`).
pub fn listed_names(catalog: &Catalog, working_set: &[String], config: &Config) -> Vec<String> {
    listed::names(catalog, working_set, config)
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
#[path = "listing_tests.rs"]
mod tests;
