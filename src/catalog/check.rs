//! Would a client accept this tool definition? The rules MCP clients enforce on `tools/list`
//! (one bad tool makes the Python SDK reject the whole list): a name within MCP's tool-name rules,
//! an `inputSchema` that is an object schema, an `outputSchema`, if any, that is one too. Pure.

use serde_json::Value;

/// The longest tool name MCP allows.
pub const MAX_TOOL_NAME: usize = 128;

/// Why a client would reject `tool`, or `None` when it would accept it.
pub fn unusable(tool: &Value) -> Option<String> {
    let Some(t) = tool.as_object() else {
        return Some(format!("it is {}, not a JSON object", kind(tool)));
    };
    match t.get("name") {
        Some(Value::String(n)) if !valid_name(n) => {
            return Some(format!(
                "its name breaks MCP's tool name rules (1 to {MAX_TOOL_NAME} of A-Z a-z 0-9 _ - .)"
            ));
        }
        Some(Value::String(_)) => {}
        Some(other) => return Some(format!("its name is {}, not a string", kind(other))),
        None => return Some("it has no name".into()),
    }
    match t.get("inputSchema") {
        None => return Some("it has no inputSchema".into()),
        Some(s) => {
            if let Some(why) = not_object_schema(s) {
                return Some(format!("its inputSchema {why}"));
            }
        }
    }
    match t.get("outputSchema") {
        Some(s) => not_object_schema(s).map(|why| format!("its outputSchema {why}")),
        None => None,
    }
}

fn valid_name(n: &str) -> bool {
    !n.is_empty()
        && n.len() <= MAX_TOOL_NAME
        && n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

fn not_object_schema(s: &Value) -> Option<String> {
    let Some(o) = s.as_object() else {
        return Some(format!("is {}, not a JSON Schema object", kind(s)));
    };
    match o.get("type") {
        Some(Value::String(t)) if t == "object" => None,
        Some(other) => Some(format!("has \"type\" {}, not \"object\"", clip(other))),
        None => Some("has no \"type\": \"object\"".into()),
    }
}

pub use crate::mcp::check::kind;

/// A short rendering of a value for a message.
fn clip(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(40) {
        Some((i, _)) => format!("{}...", &s[..i]),
        None => s,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_a_client_would_reject() {
        let obj = json!({"type": "object"});
        for (tool, want) in [
            (json!({"name": "ok", "inputSchema": obj}), None),
            (
                json!({"name": "a.b-c_9", "inputSchema": obj, "outputSchema": obj}),
                None,
            ),
            (json!("x"), Some("it is a string, not a JSON object")),
            (json!({"inputSchema": obj}), Some("it has no name")),
            (
                json!({"name": 3, "inputSchema": obj}),
                Some("its name is a number, not a string"),
            ),
            (
                json!({"name": "a b", "inputSchema": obj}),
                Some("its name breaks MCP's tool name rules (1 to 128 of A-Z a-z 0-9 _ - .)"),
            ),
            (
                json!({"name": "x".repeat(129), "inputSchema": obj}),
                Some("its name breaks MCP's tool name rules (1 to 128 of A-Z a-z 0-9 _ - .)"),
            ),
            (json!({"name": "n"}), Some("it has no inputSchema")),
            (
                json!({"name": "n", "inputSchema": "not a schema"}),
                Some("its inputSchema is a string, not a JSON Schema object"),
            ),
            (
                json!({"name": "n", "inputSchema": {"type": 12}}),
                Some("its inputSchema has \"type\" 12, not \"object\""),
            ),
            (
                json!({"name": "n", "inputSchema": {}}),
                Some("its inputSchema has no \"type\": \"object\""),
            ),
            (
                json!({"name": "n", "inputSchema": obj, "outputSchema": {"type": "string"}}),
                Some("its outputSchema has \"type\" \"string\", not \"object\""),
            ),
        ] {
            assert_eq!(unusable(&tool).as_deref(), want, "{tool}");
        }
    }
}
