//! Checks tool arguments against the subset of JSON Schema the demo catalog uses: `type`,
//! `required`, `enum`, `minimum`/`maximum`, `minItems`, `items`, `additionalProperties: false`
//! and the `email` format. A failure is a message naming the argument; the caller maps it to
//! JSON-RPC -32602. Pure.

use serde_json::{Map, Value};

/// `Ok` when `args` fit the tool's `inputSchema`, else a message naming the first problem.
pub fn check_args(tool: &Value, args: &Map<String, Value>) -> Result<(), String> {
    let schema = tool.get("inputSchema").unwrap_or(&Value::Null);
    check_object(schema, args, "")
}

fn check_object(schema: &Value, obj: &Map<String, Value>, at: &str) -> Result<(), String> {
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if let Some(req) = schema.get("required").and_then(Value::as_array) {
        for r in req.iter().filter_map(Value::as_str) {
            if !obj.contains_key(r) {
                return Err(format!("missing required argument \"{at}{r}\""));
            }
        }
    }
    for (k, v) in obj {
        match props.get(k) {
            Some(p) => check_value(p, v, &format!("{at}{k}"))?,
            None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                let known: Vec<&str> = props.keys().map(String::as_str).collect();
                return Err(format!(
                    "unknown argument \"{at}{k}\" (expected one of: {})",
                    known.join(", ")
                ));
            }
            None => {}
        }
    }
    Ok(())
}

fn check_value(schema: &Value, v: &Value, at: &str) -> Result<(), String> {
    let ty = schema.get("type").and_then(Value::as_str);
    let ok = match ty {
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("array") => v.is_array(),
        Some("object") => v.is_object(),
        _ => true,
    };
    if !ok {
        return Err(format!(
            "argument \"{at}\" must be {}, got {}",
            ty.unwrap_or("?"),
            kind(v)
        ));
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(v)
    {
        let names: Vec<String> = allowed.iter().map(Value::to_string).collect();
        return Err(format!(
            "argument \"{at}\" must be one of {}, got {v}",
            names.join(", ")
        ));
    }
    if let Some(n) = v.as_f64() {
        if let Some(min) = schema.get("minimum").and_then(Value::as_f64)
            && n < min
        {
            return Err(format!("argument \"{at}\" must be at least {min}, got {n}"));
        }
        if let Some(max) = schema.get("maximum").and_then(Value::as_f64)
            && n > max
        {
            return Err(format!("argument \"{at}\" must be at most {max}, got {n}"));
        }
    }
    if let Some(s) = v.as_str()
        && schema.get("format").and_then(Value::as_str) == Some("email")
        && !looks_like_email(s)
    {
        return Err(format!(
            "argument \"{at}\" must be an email address, got {s:?}"
        ));
    }
    if let Some(items) = v.as_array() {
        if let Some(min) = schema.get("minItems").and_then(Value::as_u64)
            && (items.len() as u64) < min
        {
            return Err(format!("argument \"{at}\" needs at least {min} item(s)"));
        }
        if let Some(item_schema) = schema.get("items") {
            for (i, item) in items.iter().enumerate() {
                check_value(item_schema, item, &format!("{at}[{i}]"))?;
            }
        }
    }
    if let Some(o) = v.as_object()
        && ty == Some("object")
    {
        check_object(schema, o, &format!("{at}."))?;
    }
    Ok(())
}

fn looks_like_email(s: &str) -> bool {
    match s.split_once('@') {
        Some((user, host)) => {
            !user.is_empty() && host.contains('.') && !s.contains(char::is_whitespace)
        }
        None => false,
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
