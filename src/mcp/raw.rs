//! A `tools/call` result passed on as the upstream wrote it: its top level read (what era
//! bridging, the call's status and shaping look at), its `content` and `structuredContent` kept
//! as the bytes they came in, so that a proxied call's bulk is neither built into a `Value` tree
//! nor written out again. Used where the wire hands over the answer's bytes (a stdio upstream)
//! and the transport writes bytes (`serve --stdio`). Pure.

use std::fmt;

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::mcp::deep;

/// The members kept as bytes: a result's bulk. Nothing mws does to a result it passes on reads
/// inside them.
const KEPT: [&str; 2] = ["content", "structuredContent"];

/// A result object with its bulk kept as sent.
#[derive(Debug)]
pub struct RawResult {
    /// Every other top-level member, read.
    pub top: Map<String, Value>,
    /// `content` and `structuredContent` as sent, in the order they came.
    pub kept: Vec<(&'static str, Box<RawValue>)>,
}

/// A tool call's answer: a `Value` like any other, or a result kept as sent.
#[derive(Debug)]
pub enum Answer {
    Tree(Value),
    Raw(RawResult),
}

impl RawResult {
    /// `text` (a JSON-RPC `result`) read this way; `None` when it is not an object, or is nested
    /// deeper than mws's parser reads (`deep::MAX_DEPTH`): such a result takes the `Value` path,
    /// which refuses it as before.
    pub fn parse(text: &str) -> Option<RawResult> {
        // The kept members are skipped, not parsed, so the parser's depth limit would not look
        // at them: the result is held to it here, as the message it came in would be (the test
        // `what_the_tree_path_refuses_is_not_kept` pins the boundary).
        if nested_past(text.as_bytes(), deep::MAX_DEPTH - 2) {
            return None;
        }
        serde_json::from_str(text).ok()
    }

    /// The id and the result of a JSON-RPC response `line` whose result is an object, read in
    /// one pass; `None` for anything else (a request or notification, an error, a result that is
    /// not an object, bytes that are not UTF-8, a line nested deeper than the parser reads).
    pub fn of_response(line: &[u8]) -> Option<(Value, RawResult)> {
        #[derive(serde::Deserialize)]
        struct Head<'a> {
            #[serde(borrow)]
            id: Option<&'a RawValue>,
            method: Option<serde::de::IgnoredAny>,
            result: Option<RawResult>,
        }
        if nested_past(line, deep::MAX_DEPTH - 1) {
            return None;
        }
        let head: Head = serde_json::from_slice(line).ok()?;
        if head.method.is_some() {
            return None;
        }
        let id = serde_json::from_str(head.id?.get()).ok()?;
        Some((id, head.result?))
    }

    /// The bytes of the kept members: at least the text of `content` and the JSON of
    /// `structuredContent`, so a result no longer than `results.maxTokens` needs no shaping.
    pub fn kept_len(&self) -> usize {
        self.kept.iter().map(|(_, raw)| raw.get().len()).sum()
    }

    /// Whether `structuredContent` is here and is not an object (a legacy client drops it).
    pub fn structured_not_object(&self) -> bool {
        self.kept
            .iter()
            .any(|(k, raw)| *k == "structuredContent" && !raw.get().trim_start().starts_with('{'))
    }

    /// Drops the kept member `key`.
    pub fn drop_kept(&mut self, key: &str) {
        self.kept.retain(|(k, _)| *k != key);
    }

    /// The result as a `Value` tree (the kept members read after the others).
    pub fn into_value(self) -> Result<Value, serde_json::Error> {
        let mut top = self.top;
        for (k, raw) in self.kept {
            top.insert(k.to_string(), serde_json::from_str(raw.get())?);
        }
        Ok(Value::Object(top))
    }
}

impl Answer {
    /// A top-level member of the result.
    pub fn member(&self, key: &str) -> Option<&Value> {
        match self {
            Answer::Tree(v) => v.get(key),
            Answer::Raw(r) => r.top.get(key),
        }
    }

    pub fn into_value(self) -> Result<Value, serde_json::Error> {
        match self {
            Answer::Tree(v) => Ok(v),
            Answer::Raw(r) => r.into_value(),
        }
    }
}

/// Whether the JSON `text` nests arrays and objects more than `max` deep (brackets inside strings
/// do not count). A string is jumped over to its next quote or backslash (`memchr`), not walked
/// byte by byte: in a tool result the strings are most of the bytes.
fn nested_past(text: &[u8], max: usize) -> bool {
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = text.get(i) {
        i += 1;
        match b {
            b'"' => loop {
                // Past the string's closing quote; an unterminated one holds no brackets.
                let Some(at) = text
                    .get(i..)
                    .and_then(|rest| memchr::memchr2(b'"', b'\\', rest))
                else {
                    return false;
                };
                i += at + 1;
                match text[i - 1] {
                    b'\\' => i += 1,
                    _ => break,
                }
            },
            b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

impl<'de> serde::Deserialize<'de> for RawResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<RawResult, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = RawResult;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a result object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawResult, A::Error> {
                let mut r = RawResult {
                    top: Map::new(),
                    kept: Vec::with_capacity(2),
                };
                while let Some(key) = map.next_key::<String>()? {
                    match KEPT.iter().find(|k| **k == key) {
                        Some(k) => {
                            let raw: Box<RawValue> = map.next_value()?;
                            // A member sent twice counts once, the last one (as a `Value` reads it).
                            r.kept.retain(|(o, _)| o != k);
                            r.kept.push((k, raw));
                        }
                        None => {
                            let v: Value = map.next_value()?;
                            r.top.insert(key, v);
                        }
                    }
                }
                Ok(r)
            }
        }
        d.deserialize_map(V)
    }
}

impl Serialize for RawResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.top.len() + self.kept.len()))?;
        for (k, v) in &self.kept {
            m.serialize_entry(k, v)?;
        }
        for (k, v) in &self.top {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

/// The response to request `id` carrying `result`, as one line's bytes (no newline).
pub fn response_bytes(id: &Value, result: &RawResult) -> Vec<u8> {
    #[derive(serde::Serialize)]
    struct Response<'a> {
        jsonrpc: &'static str,
        id: &'a Value,
        result: &'a RawResult,
    }
    let r = Response {
        jsonrpc: "2.0",
        id,
        result,
    };
    serde_json::to_vec(&r).unwrap_or_default()
}

#[cfg(test)]
#[path = "raw_tests.rs"]
mod tests;
