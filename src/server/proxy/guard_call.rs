//! The checks a tool call passes before it is sent upstream: the tool against the config's
//! `policy` (`crate::policy`), then its arguments against the tool's `inputSchema` (`validation`
//! in the config), with one compiled validator per tool and catalog
//! version. A refused call is answered with `isError` naming each problem (where, what was
//! expected, what was found) and the tool's schema without its prose, so that the model can fix
//! the call in one turn. A schema the validator cannot compile never blocks its tool: its calls go
//! unchecked, with one warning. Must not log or store arguments, and must not talk to the upstream.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use crate::call::Status;
use crate::config::{Config, Validation};
use crate::policy::Rule;
use crate::server::proxy::calls::text_result;
use crate::upstream::CatalogSnapshot;

/// Problems named in one refusal; the rest are counted. Raising it makes refusals longer.
pub const MAX_PROBLEMS: usize = 8;
/// A slimmed schema longer than this is replaced by an outline (property names and types).
/// Raising it puts more of a big schema into each refusal.
pub const MAX_SCHEMA_BYTES: usize = 4096;
/// A scalar argument whose JSON is at most this long is quoted in "found"; longer ones are named
/// by type only. Raising it echoes more of the call back.
const MAX_FOUND_CHARS: usize = 40;
/// Schema keywords that are prose for the model, dropped from the schema in a refusal.
const PROSE: &[&str] = &["description", "title", "examples", "$comment", "default"];
/// Keywords whose value maps names to schemas (the names are not keywords).
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

enum Compiled {
    Ready(jsonschema::Validator),
    /// The schema does not compile (or names a dialect the validator does not know).
    Unusable,
}

/// The policy, and the validators of the catalog version last seen, compiled on a tool's first
/// call.
pub(crate) struct Guard {
    policy: Rule,
    validation: Validation,
    validators: Mutex<(u64, HashMap<String, Arc<Compiled>>)>,
    /// Tools already warned about, across catalog versions: one warning per tool.
    warned: Mutex<HashSet<String>>,
}

impl Guard {
    pub(crate) fn new(config: &Config) -> Guard {
        Guard {
            policy: Rule::new(&config.policy),
            validation: config.validation,
            validators: Mutex::default(),
            warned: Mutex::default(),
        }
    }

    /// Whether no call can be refused (no policy, validation off): the catalog need not be read.
    pub(crate) fn is_open(&self) -> bool {
        self.policy.is_open() && self.validation == Validation::Off
    }

    /// Whether the policy excludes `tool` (any of its names, `crate::policy`).
    pub(crate) fn excludes(&self, catalog: &crate::catalog::Catalog, tool: &str) -> bool {
        !self.policy.allows(catalog, tool)
    }

    /// The answer to a call of `tool` with `params` that may not be sent, and its status: the
    /// policy excludes the tool, or its arguments do not match its schema (`check`).
    pub(crate) fn refuse(
        &self,
        snap: &CatalogSnapshot,
        tool: &str,
        params: &Value,
    ) -> Option<(Value, Status)> {
        if let Some(why) = self.policy.why_excluded(&snap.catalog, tool) {
            let text = format!(
                "{tool} may not be called: the policy in mws's config excludes it ({why}), so \
                 mws neither lists, searches nor runs it"
            );
            return Some((text_result(text, true), Status::DeniedByPolicy));
        }
        let refusal = self.check(self.validation, snap, tool, params)?;
        Some((refusal, Status::InvalidArgs))
    }

    /// The refusal for a call of `tool` with `params` (the `tools/call` params), or `None` when
    /// it may be sent: valid, not checked (`off`, no schema, an unusable schema) or `warn`.
    pub(crate) fn check(
        &self,
        mode: Validation,
        snap: &CatalogSnapshot,
        tool: &str,
        params: &Value,
    ) -> Option<Value> {
        if mode == Validation::Off {
            return None;
        }
        let schema = snap.catalog.get(tool)?.get("inputSchema")?;
        let Compiled::Ready(validator) = &*self.compiled(snap.version, tool, schema) else {
            return None;
        };
        let empty = Value::Object(Map::new());
        let args = match params.get("arguments") {
            None | Some(Value::Null) => &empty,
            Some(a) => a,
        };
        let without_nulls = without_optional_nulls(args, schema);
        let args = without_nulls.as_ref().unwrap_or(args);
        // The common case, valid arguments, without building any error.
        if validator.is_valid(args) {
            return None;
        }
        // Only the first `MAX_PROBLEMS` are described; the rest are counted (a huge array of
        // wrong items must not build a huge message).
        let (mut problems, mut count) = (Vec::new(), 0);
        for e in validator.iter_errors(args) {
            if problems.len() < MAX_PROBLEMS {
                problems.push(describe(&e));
            }
            count += 1;
        }
        if count == 0 {
            return None;
        }
        if mode == Validation::Warn {
            tracing::warn!(
                "{tool}: the arguments do not match its inputSchema ({count} problem(s)); sent \
                 anyway (validation: warn)"
            );
            return None;
        }
        Some(text_result(refusal(tool, &problems, count, schema), true))
    }

    fn compiled(&self, version: u64, tool: &str, schema: &Value) -> Arc<Compiled> {
        {
            let cache = self.validators.lock().unwrap_or_else(|e| e.into_inner());
            if cache.0 == version
                && let Some(c) = cache.1.get(tool)
            {
                return c.clone();
            }
        }
        // Compiled outside the lock: a big schema must not hold up other tools' calls.
        let compiled = Arc::new(match compile(schema) {
            Ok(v) => Compiled::Ready(v),
            Err(why) => {
                let first = self
                    .warned
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(tool.to_string());
                if first {
                    tracing::warn!(
                        "{tool}: its inputSchema cannot be used to check arguments ({why}); its \
                         calls are sent unchecked"
                    );
                }
                Compiled::Unusable
            }
        });
        let mut cache = self.validators.lock().unwrap_or_else(|e| e.into_inner());
        if cache.0 != version {
            *cache = (version, HashMap::new());
        }
        cache.1.insert(tool.to_string(), compiled.clone());
        compiled
    }
}

/// `args` without its top-level `null` members that the schema does not require, when it has
/// any: a null argument is an omitted one (as the 2026-07-28 `Mcp-Param-*` rules treat it, and
/// as clients and models send optional arguments), so it is checked as absent and sent as is.
fn without_optional_nulls(args: &Value, schema: &Value) -> Option<Value> {
    let obj = args.as_object()?;
    let required = |k: &str| {
        schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n.as_str() == Some(k)))
    };
    let drop = |(k, v): (&String, &Value)| v.is_null() && !required(k);
    if !obj.iter().any(drop) {
        return None;
    }
    Some(Value::Object(
        obj.iter()
            .filter(|kv| !drop(*kv))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    ))
}

/// Compiles a tool's `inputSchema` (draft 2020-12 unless it says `$schema`; `format` is not
/// checked, as upstreams differ in what they accept). The error says why it cannot be used.
pub fn compile(schema: &Value) -> Result<jsonschema::Validator, String> {
    jsonschema::options()
        .should_validate_formats(false)
        .build(schema)
        .map_err(|e| e.to_string())
}

/// One problem: where, what was expected (the validator's words, with the value masked) and what
/// was found.
fn describe(e: &jsonschema::ValidationError<'_>) -> String {
    let path = e.instance_path().as_str();
    let at = if path.is_empty() { "(arguments)" } else { path };
    let found = match e.kind() {
        jsonschema::error::ValidationErrorKind::Required { .. } => "missing".to_string(),
        jsonschema::error::ValidationErrorKind::AdditionalProperties { .. } => {
            "properties the schema does not allow".to_string()
        }
        _ => found(e.instance()),
    };
    format!("- at {at}: {} (found {found})", e.masked_with("the value"))
}

/// The JSON type of `v`, with the value itself when it is a short scalar.
fn found(v: &Value) -> String {
    let kind = match v {
        Value::Null => return "null".into(),
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(a) => return format!("an array of {} item(s)", a.len()),
        Value::Object(_) => return "an object".into(),
    };
    let text = v.to_string();
    if text.chars().count() <= MAX_FOUND_CHARS {
        format!("{kind} {text}")
    } else {
        format!("a long {kind}")
    }
}

/// The refusal text: the first problems (`count` in all) and the slimmed schema or its outline.
fn refusal(tool: &str, problems: &[String], count: usize, schema: &Value) -> String {
    let mut text = format!(
        "invalid arguments for {tool}: mws checked them against the tool's inputSchema and did \
         not send the call (config `validation`)\n"
    );
    for p in problems {
        text.push_str(p);
        text.push('\n');
    }
    if count > problems.len() {
        text.push_str(&format!(
            "- and {} more problem(s)\n",
            count - problems.len()
        ));
    }
    let slim = slim(schema, false);
    let shown = slim.to_string();
    if shown.len() <= MAX_SCHEMA_BYTES {
        text.push_str(&format!(
            "fix the arguments and call again; the input schema:\n{shown}"
        ));
    } else {
        text.push_str(&format!(
            "fix the arguments and call again; the input schema's outline (the full schema is in \
             the tool's listing or search_tools):\n{}",
            outline(schema)
        ));
    }
    text
}

/// `schema` without its prose keywords (`PROSE`); property names are kept whatever they are.
pub fn slim(schema: &Value, names: bool) -> Value {
    match schema {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| names || !PROSE.contains(&k.as_str()))
                .map(|(k, v)| {
                    let v = if names {
                        slim(v, false)
                    } else {
                        slim(v, SCHEMA_MAPS.contains(&k.as_str()))
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| slim(v, false)).collect()),
        v => v.clone(),
    }
}

/// The top level of an object schema: its required names and each property's type.
fn outline(schema: &Value) -> Value {
    let props: Map<String, Value> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(k, v)| {
                    let t = v.get("type").cloned().unwrap_or(json!("any"));
                    (k.clone(), json!({"type": t}))
                })
                .collect()
        })
        .unwrap_or_default();
    json!({
        "type": "object",
        "required": schema.get("required").cloned().unwrap_or(json!([])),
        "properties": props,
    })
}

#[cfg(test)]
#[path = "guard_call_tests.rs"]
mod tests;
