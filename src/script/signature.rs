//! A tool's call in a script, as `search_tools` shows it: a TypeScript-style signature derived
//! from its `inputSchema` (`tools.github__list_issues(args: {repo: string; state?: "open" |
//! "closed"}): Promise<any>`), so that the model writes the call right the first time. Pure;
//! bounded in depth and length so that a hostile schema cannot grow a search reply. Must not do
//! I/O.

use serde_json::{Map, Value};

/// Deepest nesting of objects and arrays spelled out; deeper ones read `object`. Raising it
/// shows more of a nested schema in each search result.
pub const MAX_DEPTH: usize = 3;
/// Longest signature in characters; a longer one is cut after the last whole property that fits
/// and ends with `...`. Raising it makes search replies longer.
pub const MAX_CHARS: usize = 600;
/// Most enum values spelled out as a union; more read as the enum's type. Raising it lengthens
/// signatures of tools with long enums.
pub const MAX_ENUM: usize = 8;

/// `tools.<name>(args: {...}): Promise<...>` for the tool `name` as the script calls it.
pub fn signature(name: &str, tool: &Value) -> String {
    let args = tool
        .get("inputSchema")
        .map(|s| type_of(s, 0))
        .unwrap_or_else(|| "{}".into());
    let returns = match tool.get("outputSchema") {
        Some(s) if s.is_object() => type_of(s, 0),
        _ => "any".into(),
    };
    let access = if is_identifier(name) {
        format!("tools.{name}")
    } else {
        format!("tools[{}]", Value::String(name.into()))
    };
    let sig = format!("{access}(args: {args}): Promise<{returns}>");
    cut(sig)
}

fn cut(sig: String) -> String {
    if sig.chars().count() <= MAX_CHARS {
        return sig;
    }
    let mut out: String = sig.chars().take(MAX_CHARS).collect();
    if let Some(i) = out.rfind(';') {
        out.truncate(i + 1);
    }
    out.push_str(" ...");
    out
}

/// The TypeScript type a schema describes, as far as a model needs it to write a call.
fn type_of(schema: &Value, depth: usize) -> String {
    let Some(s) = schema.as_object().filter(|_| depth <= MAX_DEPTH) else {
        return "any".into();
    };
    if let Some(Value::Array(values)) = s.get("enum")
        && !values.is_empty()
        && values.len() <= MAX_ENUM
    {
        return values.iter().map(literal).collect::<Vec<_>>().join(" | ");
    }
    if let Some(v) = s.get("const") {
        return literal(v);
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(options)) = s.get(key)
            && !options.is_empty()
        {
            let mut seen: Vec<String> = Vec::new();
            for t in options.iter().map(|o| type_of(o, depth + 1)) {
                if !seen.contains(&t) {
                    seen.push(t);
                }
            }
            return seen.join(" | ");
        }
    }
    match s.get("type") {
        Some(Value::String(t)) => named(t, s, depth),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .map(|t| named(t, s, depth))
            .collect::<Vec<_>>()
            .join(" | "),
        _ if s.contains_key("properties") => object(s, depth),
        _ => "any".into(),
    }
}

fn named(t: &str, s: &Map<String, Value>, depth: usize) -> String {
    match t {
        "string" => "string".into(),
        "integer" | "number" => "number".into(),
        "boolean" => "boolean".into(),
        "null" => "null".into(),
        "array" if depth >= MAX_DEPTH => "any[]".into(),
        "array" => match s.get("items") {
            Some(items) => {
                let inner = type_of(items, depth + 1);
                if inner.contains(' ') && !inner.starts_with('{') {
                    format!("({inner})[]")
                } else {
                    format!("{inner}[]")
                }
            }
            None => "any[]".into(),
        },
        "object" => object(s, depth),
        _ => "any".into(),
    }
}

fn object(s: &Map<String, Value>, depth: usize) -> String {
    let Some(Value::Object(props)) = s.get("properties") else {
        return "object".into();
    };
    if props.is_empty() {
        return "{}".into();
    }
    if depth >= MAX_DEPTH {
        return "object".into();
    }
    let required: Vec<&str> = match s.get("required") {
        Some(Value::Array(r)) => r.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let fields: Vec<String> = props
        .iter()
        .map(|(k, v)| {
            let key = if is_identifier(k) {
                k.clone()
            } else {
                Value::String(k.clone()).to_string()
            };
            let opt = if required.contains(&k.as_str()) {
                ""
            } else {
                "?"
            };
            format!("{key}{opt}: {}", type_of(v, depth + 1))
        })
        .collect();
    format!("{{{}}}", fields.join("; "))
}

fn literal(v: &Value) -> String {
    match v {
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => v.to_string(),
        _ => "any".into(),
    }
}

/// Whether `name` can follow `tools.` in JavaScript (ASCII identifiers only; others are quoted).
pub fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(tool: Value, expect: &str) {
        assert_eq!(signature("gh__list", &tool), expect);
    }

    #[test]
    fn signatures_follow_the_schema() {
        check(
            json!({"inputSchema": {"type": "object", "properties": {
                "repo": {"type": "string"},
                "state": {"type": "string", "enum": ["open", "closed"]},
                "limit": {"type": "integer"},
                "labels": {"type": "array", "items": {"type": "string"}},
                "filter": {"type": "object", "properties": {"draft": {"type": "boolean"}}}
            }, "required": ["repo"]}}),
            "tools.gh__list(args: {repo: string; state?: \"open\" | \"closed\"; limit?: number; \
             labels?: string[]; filter?: {draft?: boolean}}): Promise<any>",
        );
        check(json!({}), "tools.gh__list(args: {}): Promise<any>");
        check(
            json!({"inputSchema": {"type": "object"}, "outputSchema": {"type": "object",
                "properties": {"items": {"type": "array", "items": {"type": ["string", "null"]}}},
                "required": ["items"]}}),
            "tools.gh__list(args: object): Promise<{items: (string | null)[]}>",
        );
        check(
            json!({"inputSchema": {"properties": {"a-b": {"anyOf": [{"type": "string"}, {"type": "number"}]}}}}),
            "tools.gh__list(args: {\"a-b\"?: string | number}): Promise<any>",
        );
    }

    #[test]
    fn names_that_are_not_identifiers_are_quoted() {
        assert_eq!(
            signature("my-tool", &json!({})),
            "tools[\"my-tool\"](args: {}): Promise<any>"
        );
    }

    #[test]
    fn hostile_schemas_stay_bounded() {
        let mut deep = json!({"type": "string"});
        for _ in 0..200 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        let s = signature("t", &json!({"inputSchema": deep}));
        assert_eq!(s, "tools.t(args: {x?: {x?: {x?: object}}}): Promise<any>");
        let wide: Map<String, Value> = (0..500)
            .map(|i| (format!("field{i}"), json!({"type": "string"})))
            .collect();
        let s = signature("t", &json!({"inputSchema": {"properties": wide}}));
        assert!(s.chars().count() <= MAX_CHARS + 4, "{s}");
        assert!(s.ends_with("; ...") || s.ends_with(" ..."), "{s}");
    }
}
