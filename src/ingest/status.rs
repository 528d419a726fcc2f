//! How a transcript call ended: the text rules that tell a permission denial from a server
//! failure, and a failure from a success when no flag says so (the taxonomy is `call::Status`).
//! Pure. Only classifies: never keeps or logs the result text.

use serde_json::Value;

pub use crate::call::Status;

/// Phrases Claude Code and Codex put in the result of a call that a person or a policy refused.
const DENIAL_PHRASES: &[&str] = &[
    "requested permissions to use",
    "haven't granted it yet",
    "doesn't want to proceed with this tool use",
    "tool use was rejected",
    "permission to use mcp__",
    "requires approval",
    "rejected by user",
    "user rejected",
    "user cancelled",
    "user canceled",
];

/// Phrases of a call cut short by the user (Claude Code) before it answered.
const ABORT_PHRASES: &[&str] = &["[request interrupted by user"];

/// How text starts when a tool or the MCP layer failed without the flag being set.
const FAILURE_PREFIXES: &[&str] = &["mcp error -3", "tool call failed", "err: "];

/// The texts of a result in any of the shapes clients write: a string, an array of content blocks
/// (`text`, `input_text`, `output_text`), or an object with `content`.
pub fn texts(v: &Value) -> Vec<&str> {
    match v {
        Value::String(s) => vec![s.as_str()],
        Value::Array(items) => items
            .iter()
            .filter_map(|b| match b {
                Value::String(s) => Some(s.as_str()),
                Value::Object(m) => m.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect(),
        Value::Object(m) => m.get("content").map(texts).unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// A call the client flagged as failed: a denial, an interruption, or an error.
pub fn flagged(texts: &[&str]) -> Status {
    let lower: Vec<String> = texts.iter().map(|t| t.to_lowercase()).collect();
    if lower
        .iter()
        .any(|t| DENIAL_PHRASES.iter().any(|p| t.contains(p)))
    {
        Status::Denied
    } else if lower
        .iter()
        .any(|t| ABORT_PHRASES.iter().any(|p| t.contains(p)))
    {
        Status::Aborted
    } else {
        Status::Error
    }
}

/// A call without a failure flag: `ErrorHeuristic` when the result reads as a failure.
pub fn unflagged(texts: &[&str]) -> Status {
    if texts.iter().any(|t| reads_as_failure(t)) {
        Status::ErrorHeuristic
    } else {
        Status::Ok
    }
}

/// A result text that reads as a failure: a failure prefix, or a JSON object with a non-empty
/// top-level `error` or `isError: true`.
pub fn reads_as_failure(text: &str) -> bool {
    let t = text.trim_start();
    let head: String = t.chars().take(24).collect::<String>().to_lowercase();
    if FAILURE_PREFIXES.iter().any(|p| head.starts_with(p)) {
        return true;
    }
    if t.starts_with('{')
        && let Ok(Value::Object(m)) = serde_json::from_str::<Value>(t)
    {
        let error = m
            .get("error")
            .is_some_and(|e| !matches!(e, Value::Null | Value::Bool(false)));
        let is_error = m.get("isError") == Some(&Value::Bool(true));
        return error || is_error;
    }
    false
}

/// The outcome of a `function_call_output` when no event says it: older builds wrote `err: …` for
/// a failed call; some write `{content, success}`; otherwise only the text can tell.
pub fn codex_output(output: &Value) -> Status {
    if let Some(s) = output.as_str() {
        if s.starts_with("err: ") {
            return Status::Error;
        }
        return match serde_json::from_str::<Value>(s) {
            Ok(v @ Value::Array(_)) => unflagged(&texts(&v)),
            _ => unflagged(&[s]),
        };
    }
    if output.get("success") == Some(&Value::Bool(false)) {
        return Status::Error;
    }
    let texts: Vec<&str> = texts(output)
        .into_iter()
        .filter(|t| !t.starts_with("Wall time:"))
        .collect();
    unflagged(&texts)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn flagged_results() {
        for (text, want) in [
            ("MCP error -32000: Connection closed", Status::Error),
            (
                "Claude requested permissions to use mcp__x__y, but you haven't granted it yet.",
                Status::Denied,
            ),
            (
                "The user doesn't want to proceed with this tool use. The tool use was rejected",
                Status::Denied,
            ),
            (
                "MCP tool call requires approval, but approval policy is never",
                Status::Denied,
            ),
            (
                "[Request interrupted by user for tool use]",
                Status::Aborted,
            ),
            (
                "<tool_use_error>Error: No such tool available: x</tool_use_error>",
                Status::Error,
            ),
        ] {
            assert_eq!(flagged(&[text]), want, "{text}");
        }
    }

    #[test]
    fn unflagged_results() {
        for (text, want) in [
            (
                "{\"error\": \"Not Found\", \"status\": 404}",
                Status::ErrorHeuristic,
            ),
            ("{\"error\": null, \"items\": []}", Status::Ok),
            ("{\"isError\": true}", Status::ErrorHeuristic),
            ("MCP error -32602: bad input", Status::ErrorHeuristic),
            ("err: \"tool call failed\"", Status::ErrorHeuristic),
            ("The sum of 2 and 3 is 5.", Status::Ok),
            ("Issue not found in the error log", Status::Ok),
            ("", Status::Ok),
        ] {
            assert_eq!(unflagged(&[text]), want, "{text}");
        }
    }

    #[test]
    fn texts_of_every_shape() {
        assert_eq!(texts(&json!("a")), ["a"]);
        assert_eq!(
            texts(
                &json!([{"type": "text", "text": "a"}, {"type": "image"}, {"type": "input_text", "text": "b"}])
            ),
            ["a", "b"]
        );
        assert_eq!(
            texts(&json!({"content": [{"text": "c"}], "success": true})),
            ["c"]
        );
        assert!(texts(&json!(3)).is_empty());
    }

    #[test]
    fn codex_outputs() {
        for (output, want) in [
            (json!("err: \"tool call failed\""), Status::Error),
            (
                json!("[{\"type\": \"text\", \"text\": \"MCP error -32602: bad\"}]"),
                Status::ErrorHeuristic,
            ),
            (
                json!("[{\"type\": \"text\", \"text\": \"fine\"}]"),
                Status::Ok,
            ),
            (json!("{\"libraryId\":\"/a/b\"}"), Status::Ok),
            (json!({"content": "x", "success": false}), Status::Error),
            (
                json!([{"type": "input_text", "text": "Wall time: 0.1 seconds\nOutput:"}, {"type": "input_text", "text": "MCP error -32000: closed"}]),
                Status::ErrorHeuristic,
            ),
            (
                json!([{"type": "input_text", "text": "Wall time: 0.1 seconds\nOutput:"}, {"type": "input_text", "text": "5"}]),
                Status::Ok,
            ),
        ] {
            assert_eq!(codex_output(&output), want, "{output}");
        }
    }
}
