//! Era bridging on results going to the client (docs/protocol.md): a modern client gets
//! `resultType`, cache hints on list results and our `serverInfo`; a legacy client loses those and
//! any non-object `structuredContent`. Everything else passes as the upstream sent it. Pure.

use serde_json::{Map, Value, json};

use crate::mcp::raw::RawResult;
use crate::mcp::{Era, META_SERVER_INFO};

/// Results that must carry `ttlMs` and `cacheScope` in 2026-07-28 (SEP-2549).
const CACHEABLE: &[&str] = &[
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "server/discover",
];

/// Cache lifetime we tell modern clients. Zero: the working set may change at any promotion, and
/// a client that caches would miss it. Raising it saves clients re-listing but delays promotions.
pub const TTL_MS: u64 = 0;

/// `{"name": "mcp-working-set", "version": ...}`.
pub fn server_info() -> Value {
    static INFO: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
        || json!({"name": "mcp-working-set", "version": env!("CARGO_PKG_VERSION")}),
    );
    INFO.clone()
}

/// Shapes `result` of `method` for a client of `era`.
pub fn for_client(method: &str, mut result: Value, era: Era) -> Value {
    let Some(obj) = result.as_object_mut() else {
        return result;
    };
    match era {
        Era::Modern => {
            obj.entry("resultType").or_insert_with(|| json!("complete"));
            if CACHEABLE.contains(&method) {
                obj.entry("ttlMs").or_insert_with(|| json!(TTL_MS));
                obj.entry("cacheScope").or_insert_with(|| json!("private"));
            }
            let meta = obj
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(m) = meta.as_object_mut() {
                m.insert(META_SERVER_INFO.into(), server_info());
            }
        }
        Era::Legacy => {
            if obj.get("resultType") == Some(&json!("complete")) {
                obj.remove("resultType");
            }
            obj.remove("ttlMs");
            obj.remove("cacheScope");
            if let Some(Value::Object(m)) = obj.get_mut("_meta") {
                m.remove(META_SERVER_INFO);
                if m.is_empty() {
                    obj.remove("_meta");
                }
            }
            if method == "tools/call"
                && obj.get("structuredContent").is_some_and(|s| !s.is_object())
            {
                obj.remove("structuredContent");
            }
        }
    }
    result
}

/// `for_client` for a result kept as sent: its top level shaped the same way, and a legacy
/// client's non-object `structuredContent` dropped.
pub fn raw_for_client(method: &str, mut result: RawResult, era: Era) -> RawResult {
    if era == Era::Legacy && method == "tools/call" && result.structured_not_object() {
        result.drop_kept("structuredContent");
    }
    let top = std::mem::take(&mut result.top);
    if let Value::Object(top) = for_client(method, Value::Object(top), era) {
        result.top = top;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_gains_and_legacy_loses() {
        let r = for_client("tools/list", json!({"tools": [], "x-top": 1}), Era::Modern);
        assert_eq!(r["resultType"], "complete");
        assert_eq!(r["ttlMs"], 0);
        assert_eq!(r["cacheScope"], "private");
        assert_eq!(r["_meta"][META_SERVER_INFO]["name"], "mcp-working-set");
        assert_eq!(r["x-top"], 1);
        let r = for_client(
            "tools/call",
            json!({"content": [], "resultType": "complete"}),
            Era::Modern,
        );
        assert!(r.get("ttlMs").is_none());
        let r = for_client(
            "tools/call",
            json!({"content": [], "structuredContent": [1, 2], "resultType": "complete", "_meta": {"k": 1}}),
            Era::Legacy,
        );
        assert_eq!(r, json!({"content": [], "_meta": {"k": 1}}));
        let kept = json!({"content": [], "structuredContent": {"a": 1}});
        assert_eq!(for_client("tools/call", kept.clone(), Era::Legacy), kept);
    }

    /// A result kept as sent is bridged to what the tree is bridged to, in either era.
    #[test]
    fn a_result_kept_as_sent_is_bridged_as_its_tree() {
        let results = [
            r#"{"content":[{"type":"text","text":"x"}],"isError":false}"#,
            r#"{"content":[],"structuredContent":[1,2],"resultType":"complete","_meta":{"k":1}}"#,
            r#"{"content":[],"structuredContent":{"a":1},"ttlMs":5,"cacheScope":"shared"}"#,
            r#"{"structuredContent":"text","_meta":{}}"#,
            r#"{"content":[]}"#,
        ];
        for text in results {
            for era in [Era::Modern, Era::Legacy] {
                let tree = for_client("tools/call", serde_json::from_str(text).unwrap(), era);
                let raw = raw_for_client("tools/call", RawResult::parse(text).unwrap(), era);
                assert_eq!(raw.into_value().unwrap(), tree, "{text} {era:?}");
            }
        }
    }
}
