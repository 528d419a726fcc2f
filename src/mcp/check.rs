//! The checks every incoming JSON-RPC message gets before the proxy looks at it, on both
//! transports: its id is a string or an integer (MCP: never null; JSON-RPC: no fraction), and a
//! request has a `method`. Integers too large for `serde_json`'s `Value` are carried through the
//! proxy as a placeholder string and restored in the reply text, so they come back digit for
//! digit. Must not do I/O.

use serde_json::Value;
use serde_json::value::RawValue;

/// Starts the placeholder that stands for an integer id too large for `Value` (`\u0001` keeps it
/// apart from ids a client would choose); the digits follow.
const BIG_ID_MARK: &str = "\u{1}mws-id:";
/// The placeholder as it appears in JSON text, opening quote included.
const BIG_ID_MARK_JSON: &[u8] = b"\"\\u0001mws-id:";

/// What a JSON value is, for messages ("a number", "an object", ...).
pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks a message's `id` (`None` when it has none). `raw` is the whole message text, read again
/// only for an id that parsed as a float. `Ok(Some(placeholder))`: an integer beyond 64 bits, to
/// put in place of the id (`restore` turns it back in the reply text).
pub fn id(id: Option<&Value>, raw: &[u8]) -> Result<Option<Value>, String> {
    let what = match id {
        None | Some(Value::String(_)) => return Ok(None),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => return Ok(None),
        Some(Value::Number(_)) => match raw_id(raw) {
            Some(text) if is_integer(&text) => {
                return Ok(Some(Value::String(format!("{BIG_ID_MARK}{text}"))));
            }
            Some(text) => format!("a number with a fraction or exponent ({text})"),
            None => "a number with a fraction or exponent".to_string(),
        },
        Some(other) => kind(other).to_string(),
    };
    Err(format!(
        "invalid request: the request id must be a string or an integer, not {what}"
    ))
}

/// The `id` of a message as written (`None` if it cannot be read again).
fn raw_id(raw: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct OnlyId<'a> {
        #[serde(borrow)]
        id: &'a RawValue,
    }
    let m: OnlyId = serde_json::from_slice(raw).ok()?;
    Some(m.id.get().to_string())
}

fn is_integer(text: &str) -> bool {
    let digits = text.strip_prefix('-').unwrap_or(text);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// Does `text` carry a big-id placeholder? (cheap: one substring search)
pub fn has_big_id(text: &[u8]) -> bool {
    memchr::memmem::find(text, BIG_ID_MARK_JSON).is_some()
}

/// `text` with every big-id placeholder (a JSON string) replaced by its digits.
pub fn restore(text: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = memchr::memmem::find(rest, BIG_ID_MARK_JSON) {
        let after = &rest[at + BIG_ID_MARK_JSON.len()..];
        let digits = after
            .iter()
            .take_while(|b| b.is_ascii_digit() || **b == b'-')
            .count();
        if after.get(digits) == Some(&b'"') && digits > 0 {
            out.extend_from_slice(&rest[..at]);
            out.extend_from_slice(&after[..digits]);
            rest = &after[digits + 1..];
        } else {
            out.extend_from_slice(&rest[..at + 1]);
            rest = &rest[at + 1..];
        }
    }
    out.extend_from_slice(rest);
    out
}

/// A request needs a string `method`; a response (`result` or `error`) does not.
pub fn method(msg: &serde_json::Map<String, Value>) -> Result<(), String> {
    match msg.get("method") {
        Some(Value::String(_)) => Ok(()),
        Some(other) => Err(format!(
            "invalid request: the method must be a string, not {}",
            kind(other)
        )),
        None if msg.contains_key("result") || msg.contains_key("error") => Ok(()),
        None => Err("invalid request: the method is missing (a request needs \"method\")".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(text: &str) -> Result<Option<Value>, String> {
        let v: Value = serde_json::from_str(text).unwrap();
        id(v.get("id"), text.as_bytes())
    }

    #[test]
    fn ids() {
        assert_eq!(check(r#"{"id": 7}"#), Ok(None));
        assert_eq!(check(r#"{"id": "x"}"#), Ok(None));
        assert_eq!(check(r#"{"method": "m"}"#), Ok(None));
        assert_eq!(check(r#"{"id": 18446744073709551615}"#), Ok(None));
        for (text, what) in [
            (r#"{"id": null}"#, "null"),
            (r#"{"id": true}"#, "a boolean"),
            (r#"{"id": [1]}"#, "an array"),
            (r#"{"id": {"a": 1}}"#, "an object"),
            (r#"{"id": 1.5}"#, "a fraction or exponent (1.5)"),
            (r#"{"id": 1e3}"#, "a fraction or exponent (1e3)"),
        ] {
            let e = check(text).unwrap_err();
            assert!(e.ends_with(what), "{text}: {e}");
        }
        let big = "123456789012345678901234567890";
        let p = check(&format!(r#"{{"x": {{"id": 1}}, "id": -{big}}}"#))
            .unwrap()
            .unwrap();
        let reply = json!({"jsonrpc": "2.0", "id": p, "result": {"id": "\u{1}mws-id:x"}});
        let text = serde_json::to_vec(&reply).unwrap();
        assert!(has_big_id(&text));
        assert_eq!(
            String::from_utf8(restore(&text)).unwrap(),
            format!(r#"{{"jsonrpc":"2.0","id":-{big},"result":{{"id":"\u0001mws-id:x"}}}}"#)
        );
    }

    #[test]
    fn methods() {
        let m = |v: Value| method(v.as_object().unwrap());
        assert!(m(json!({"method": "ping"})).is_ok());
        assert!(m(json!({"result": {}})).is_ok());
        assert!(
            m(json!({"id": 1}))
                .unwrap_err()
                .contains("method is missing")
        );
        assert!(
            m(json!({"method": 3}))
                .unwrap_err()
                .contains("not a number")
        );
    }
}
