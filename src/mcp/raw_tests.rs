//! Tests of a result kept as sent: read back it is the `Value` the tree path reads, its reply
//! line is the tree path's reply, and what the tree path refuses it refuses.

use serde_json::{Value, json};

use super::*;

/// Results as upstreams write them: text with escapes and non-ASCII, structured content of each
/// kind, flags, `_meta`, members repeated, whitespace.
const RESULTS: &[&str] = &[
    r#"{"content":[{"type":"text","text":"{\n  \"calendars\": [\"é\", \"\\u00e9\", \"😀\"]\n}"}],"isError":false}"#,
    r#"{"isError":true,"content":[{"type":"text","text":"boom"}]}"#,
    r#"{ "content" : [ ] , "structuredContent" : { "a" : [1, 2.5, null, true] } , "_meta" : {"k": "v"} }"#,
    r#"{"content":[],"structuredContent":[1,2,3],"resultType":"complete"}"#,
    r#"{"content":[],"structuredContent":"text","x":{"y":[{}]}}"#,
    r#"{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create"}}}"#,
    r#"{"content":[{"type":"text","text":"one"}],"content":[{"type":"text","text":"two"}]}"#,
    r#"{}"#,
];

#[test]
fn a_result_kept_as_sent_reads_back_as_the_tree_path_reads_it() {
    for text in RESULTS {
        let tree: Value = serde_json::from_str(text).unwrap();
        let raw = RawResult::parse(text).unwrap_or_else(|| panic!("{text}"));
        let line = response_bytes(&json!(7), &raw);
        let reply: Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(
            reply,
            json!({"jsonrpc": "2.0", "id": 7, "result": tree}),
            "{text}"
        );
        let answer = Answer::Raw(raw);
        for key in ["isError", "resultType", "_meta", "content"] {
            let want = if KEPT.contains(&key) {
                None
            } else {
                tree.get(key)
            };
            assert_eq!(answer.member(key), want, "{text}: {key}");
        }
        assert_eq!(answer.into_value().unwrap(), tree, "{text}");
    }
}

#[test]
fn the_kept_members_pass_byte_for_byte() {
    let text =
        r#"{"content":[{"type":"text","text":"a\u00e9b\/c"}],"structuredContent":{ "z" : 1 }}"#;
    let raw = RawResult::parse(text).unwrap();
    let line = String::from_utf8(response_bytes(&json!("id-1"), &raw)).unwrap();
    assert_eq!(
        line,
        r#"{"jsonrpc":"2.0","id":"id-1","result":{"content":[{"type":"text","text":"a\u00e9b\/c"}],"structuredContent":{ "z" : 1 }}}"#
    );
    assert_eq!(
        raw.kept_len(),
        text.len() - r#"{"content":,"structuredContent":}"#.len()
    );
    assert!(!raw.structured_not_object());
    let array = RawResult::parse(r#"{"structuredContent": [1]}"#).unwrap();
    assert!(array.structured_not_object());
    let mut dropped = array;
    dropped.drop_kept("structuredContent");
    assert_eq!(dropped.into_value().unwrap(), json!({}));
}

/// What is not a result object, or nests deeper than the tree path reads, is not kept as sent:
/// the tree path answers it (and refuses the deep one, as before).
#[test]
fn what_the_tree_path_refuses_is_not_kept() {
    for text in ["[]", "null", "\"text\"", "3", "{", "{\"content\": [}", ""] {
        assert!(RawResult::parse(text).is_none(), "{text}");
    }
    // The same verdict as the parser's on the message the result came in, at the limit and one
    // past it, whichever member is deep.
    for levels in [deep::MAX_DEPTH - 3, deep::MAX_DEPTH - 2] {
        for key in ["content", "_meta"] {
            let inner = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
            let result = format!(r#"{{"{key}": {inner}, "s": "[[[[\"]]"}}"#);
            let message = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
            let tree_reads = deep::parse(message.as_bytes()).is_ok();
            assert_eq!(
                RawResult::parse(&result).is_some(),
                tree_reads,
                "{key} nested {levels}"
            );
            assert_eq!(
                RawResult::of_response(message.as_bytes()).is_some(),
                tree_reads,
                "{key} nested {levels}, the whole response"
            );
        }
    }
    assert!(nested_past(b"[[[", 2));
    assert!(!nested_past(br#"[["[[[[", "\"[["]]"#, 2));
}

/// The depth check gives the verdict of a byte-by-byte walk on every text of up to six bytes
/// made of brackets, quotes, backslashes and a letter (strings jumped over, escapes, unterminated
/// strings and a trailing backslash included), at every limit those texts reach.
#[test]
fn the_depth_check_jumps_strings_with_the_same_verdict_as_a_walk() {
    fn walked(text: &[u8], max: usize) -> bool {
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        for &b in text {
            match b {
                _ if in_string && escaped => escaped = false,
                b'\\' if in_string => escaped = true,
                b'"' => in_string = !in_string,
                _ if in_string => {}
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
    let alphabet = *b"[]{}\"\\a";
    let mut texts: Vec<Vec<u8>> = vec![Vec::new()];
    let mut last: Vec<Vec<u8>> = vec![Vec::new()];
    for _ in 0..6 {
        last = last
            .iter()
            .flat_map(|t| alphabet.iter().map(move |&b| [t.as_slice(), &[b]].concat()))
            .collect();
        texts.extend(last.iter().cloned());
    }
    for text in &texts {
        for max in 0..4 {
            assert_eq!(
                nested_past(text, max),
                walked(text, max),
                "{:?} at {max}",
                String::from_utf8_lossy(text)
            );
        }
    }
}

/// A response line read in one pass: its id and its result kept as sent; anything that is not a
/// response with an object result is not.
#[test]
fn a_response_line_gives_its_id_and_its_result() {
    let line = br#"{"jsonrpc":"2.0","result":{"content":[{"type":"text","text":"x"}],"isError":true},"id":"a-1"}"#;
    let (id, result) = RawResult::of_response(line).unwrap();
    assert_eq!(id, json!("a-1"));
    assert_eq!(result.kept_len(), r#"[{"type":"text","text":"x"}]"#.len());
    assert_eq!(result.top.get("isError"), Some(&json!(true)));
    for other in [
        &br#"{"jsonrpc":"2.0","id":1,"method":"ping","result":{}}"#[..],
        br#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#,
        br#"{"jsonrpc":"2.0","id":1,"result":[1]}"#,
        br#"{"jsonrpc":"2.0","result":{}}"#,
        b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"t\":\"a\xffb\"}}",
        b"not json",
    ] {
        assert!(
            RawResult::of_response(other).is_none(),
            "{}",
            String::from_utf8_lossy(other)
        );
    }
}
