//! Parsing a message from an upstream when it may be nested past the JSON parser's depth limit:
//! such a message is no longer "not JSON" but a refused answer, and the id of the request it
//! answers is read by a pass that skips values without descending into them, so that request
//! can fail at once instead of waiting out its timeout. Must not do I/O.

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::Value;
use serde_json::value::RawValue;

/// serde_json refuses JSON nested this many levels deep (arrays and objects inside each other),
/// which guards the parser's stack. It is the parser's, not ours: named here so messages can say
/// it.
pub const MAX_DEPTH: usize = 128;

/// Why an upstream message did not parse.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unparsed {
    /// Nested deeper than `MAX_DEPTH`; `response_to` is the id of the request it answers, when
    /// it is a response whose top-level id could be read.
    #[error("{}", too_deep("answer"))]
    TooDeep { response_to: Option<Value> },
    #[error("not JSON")]
    NotJson,
}

/// The text of the failure for an upstream `what` (an answer, an event) nested too deep.
pub fn too_deep(what: &str) -> String {
    format!(
        "the upstream's {what} is JSON nested {MAX_DEPTH} levels deep or more, past the limit of \
         mws's JSON parser; the request failed"
    )
}

/// `text` as a JSON value, or why not.
pub fn parse(text: &[u8]) -> Result<Value, Unparsed> {
    match serde_json::from_slice::<Value>(text) {
        Ok(v) => Ok(v),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => Err(Unparsed::TooDeep {
            response_to: response_id(text),
        }),
        Err(_) => Err(Unparsed::NotJson),
    }
}

/// The top-level `id` of a JSON-RPC response (no `method`; a `result` or an `error`), read
/// without building the values around it: serde skips an ignored value iteratively, with no
/// depth limit.
fn response_id(text: &[u8]) -> Option<Value> {
    #[derive(Deserialize)]
    struct Head {
        id: Option<Box<RawValue>>,
        method: Option<IgnoredAny>,
        result: Option<IgnoredAny>,
        error: Option<IgnoredAny>,
    }
    let head: Head = serde_json::from_slice(text).ok()?;
    if head.method.is_some() || (head.result.is_none() && head.error.is_none()) {
        return None;
    }
    serde_json::from_str(head.id?.get()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(depth: usize) -> String {
        format!("{}{}", "[".repeat(depth), "]".repeat(depth))
    }

    #[test]
    fn a_deep_response_names_its_id_wherever_the_id_stands() {
        let deep = nested(200);
        let cases = [
            (
                format!(r#"{{"jsonrpc":"2.0","id":7,"result":{{"structuredContent":{deep}}}}}"#),
                Some(json!(7)),
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","result":{{"tools":[{{"inputSchema":{deep}}}]}},"id":"a"}}"#
                ),
                Some(json!("a")),
            ),
            (
                format!(
                    r#"{{"jsonrpc":"2.0","id":3,"error":{{"code":1,"message":"x","data":{deep}}}}}"#
                ),
                Some(json!(3)),
            ),
            // A notification or a request from the upstream answers nothing.
            (
                format!(r#"{{"jsonrpc":"2.0","method":"x","id":4,"params":{deep}}}"#),
                None,
            ),
            // Cut short: no id can be trusted.
            (
                format!(r#"{{"jsonrpc":"2.0","id":5,"result":{}"#, "[".repeat(200)),
                None,
            ),
        ];
        for (text, want) in cases {
            assert_eq!(
                parse(text.as_bytes()),
                Err(Unparsed::TooDeep { response_to: want }),
                "{text}"
            );
        }
    }

    #[test]
    fn the_limit_is_the_parsers_and_other_failures_are_not_json() {
        // The message and 126 arrays in it are 127 levels: still parsed; one more is refused.
        let ok = format!(r#"{{"id":1,"result":{}}}"#, nested(MAX_DEPTH - 2));
        assert!(parse(ok.as_bytes()).is_ok());
        let over = format!(r#"{{"id":1,"result":{}}}"#, nested(MAX_DEPTH - 1));
        assert_eq!(
            parse(over.as_bytes()),
            Err(Unparsed::TooDeep {
                response_to: Some(json!(1))
            })
        );
        assert_eq!(parse(b"server ready"), Err(Unparsed::NotJson));
        assert_eq!(
            Unparsed::TooDeep { response_to: None }.to_string(),
            "the upstream's answer is JSON nested 128 levels deep or more, past the limit of \
             mws's JSON parser; the request failed"
        );
    }
}
