//! What the `server/discover` probe's outcome means (docs/protocol.md): a result is modern, a
//! recognised modern error is modern (or needs another version), anything else is legacy — and
//! on stdio a timeout or a child that died on the probe is legacy too. Pure: no I/O.

use serde_json::Value;

use super::{Negotiated, down};
use crate::mcp::{Era, META_SERVER_INFO, MODERN_VERSION, code};
use crate::upstream::UpstreamError;
use crate::upstream::wire::WireError;

#[derive(Debug)]
pub enum Probe {
    Modern(Box<Negotiated>),
    Legacy,
    /// The probe killed the child: start a new one and speak legacy to it.
    LegacyRespawn,
}

/// The probe's outcome: the HTTP status and JSON-RPC answer, or the wire error (`None`: it timed
/// out).
pub type Outcome = Result<(u16, Value), Option<WireError>>;

/// `outcome`: the HTTP status and JSON-RPC answer, or the wire error (`None`: the probe timed
/// out). `lenient`: the transport is stdio, where silence and death mean "legacy".
pub fn classify(outcome: Outcome, lenient: bool, generation: u64) -> Result<Probe, UpstreamError> {
    let (status, resp) = match outcome {
        Ok(a) => a,
        Err(None) if lenient => return Ok(Probe::Legacy),
        Err(None) => {
            return Err(UpstreamError::Timeout {
                after: super::PROBE_TIMEOUT,
                server: None,
            });
        }
        Err(Some(WireError::Down(_))) if lenient => return Ok(Probe::LegacyRespawn),
        Err(Some(WireError::Status(..) | WireError::SessionExpired)) => return Ok(Probe::Legacy),
        Err(Some(e)) => return Err(down(e)),
    };
    // A DiscoverResult lists the versions it speaks; a result that does not list ours (a legacy
    // server answering every request it does not know with `{}`) is no modern server.
    if let Some(result) = resp.get("result").filter(|r| lists_ours(r)) {
        return Ok(Probe::Modern(Box::new(discovered(
            Some(result),
            generation,
        ))));
    }
    let message = || {
        resp.pointer("/error/message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    Ok(match resp.pointer("/error/code").and_then(Value::as_i64) {
        Some(code::UNSUPPORTED_VERSION) if lists_modern(resp.pointer("/error/data")) => {
            return Err(UpstreamError::Protocol(format!(
                "upstream refused 2026-07-28 yet lists it as supported: {}",
                message()
            )));
        }
        Some(code::HEADER_MISMATCH | code::MISSING_CAPABILITY) => {
            return Err(UpstreamError::Protocol(format!(
                "upstream refused server/discover: {}",
                message()
            )));
        }
        // A 404 carrying -32601 is a modern server without discover (HTTP only: on stdio an
        // old server says the same about any method before `initialize`).
        Some(code::METHOD_NOT_FOUND) if status == 404 && !lenient => {
            Probe::Modern(Box::new(discovered(None, generation)))
        }
        _ => Probe::Legacy,
    })
}

fn discovered(result: Option<&Value>, generation: u64) -> Negotiated {
    let get = |k: &str| result.and_then(|r| r.get(k));
    Negotiated {
        era: Era::Modern,
        version: MODERN_VERSION.into(),
        server_info: result
            .and_then(|r| r.pointer(&format!("/_meta/{}", META_SERVER_INFO.replace('/', "~1"))))
            .cloned(),
        capabilities: get("capabilities").cloned(),
        instructions: get("instructions")
            .and_then(Value::as_str)
            .map(str::to_string),
        generation,
    }
}

/// Does a discover result's `supportedVersions` list 2026-07-28?
fn lists_ours(result: &Value) -> bool {
    result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|v| v == MODERN_VERSION))
}

/// Does an error's `data.supported` list 2026-07-28?
pub fn lists_modern(data: Option<&Value>) -> bool {
    data.and_then(|d| d.get("supported"))
        .and_then(Value::as_array)
        .is_some_and(|s| s.iter().any(|v| v == MODERN_VERSION))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::caps::list_changes;
    use serde_json::json;

    fn err(code: i64, data: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 1, "error": {"code": code, "message": "m", "data": data}})
    }

    /// (case, outcome, stdio?, expected: "modern" | "legacy" | "respawn" | "error")
    #[test]
    fn outcomes() {
        let discover = json!({"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": ["2026-07-28"],
            "capabilities": {"tools": {"listChanged": true}}, "instructions": "hi",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s"}}}});
        let ts_legacy = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32000, "message": "Bad Request: Server not initialized"}});
        let cases: Vec<(&str, Outcome, bool, &str)> = vec![
            (
                "discover result",
                Ok((200, discover.clone())),
                false,
                "modern",
            ),
            ("discover result stdio", Ok((200, discover)), true, "modern"),
            (
                "a result that is no DiscoverResult ({} to anything)",
                Ok((200, json!({"jsonrpc": "2.0", "id": 1, "result": {}}))),
                false,
                "legacy",
            ),
            (
                "a discover result without our version",
                Ok((
                    200,
                    json!({"jsonrpc": "2.0", "id": 1, "result": {"supportedVersions": ["2027-01-01"]}}),
                )),
                false,
                "legacy",
            ),
            (
                "TS legacy 400 -32000",
                Ok((400, ts_legacy)),
                false,
                "legacy",
            ),
            (
                "400 without JSON-RPC",
                Err(Some(WireError::Status(400, "".into()))),
                false,
                "legacy",
            ),
            (
                "405",
                Err(Some(WireError::Status(405, "".into()))),
                false,
                "legacy",
            ),
            (
                "404 -32601 on HTTP",
                Ok((404, err(-32601, Value::Null))),
                false,
                "modern",
            ),
            (
                "-32601 on stdio",
                Ok((200, err(-32601, Value::Null))),
                true,
                "legacy",
            ),
            (
                "-32022 legacy versions only",
                Ok((400, err(-32022, json!({"supported": ["2025-11-25"]})))),
                false,
                "legacy",
            ),
            (
                "-32022 listing ours",
                Ok((400, err(-32022, json!({"supported": ["2026-07-28"]})))),
                false,
                "error",
            ),
            (
                "-32020",
                Ok((400, err(-32020, Value::Null))),
                false,
                "error",
            ),
            (
                "-32021",
                Ok((400, err(-32021, Value::Null))),
                false,
                "error",
            ),
            (
                "-32602 stdio",
                Ok((200, err(-32602, Value::Null))),
                true,
                "legacy",
            ),
            ("timeout stdio", Err(None), true, "legacy"),
            ("timeout HTTP", Err(None), false, "error"),
            (
                "child died on the probe",
                Err(Some(WireError::Down("x".into()))),
                true,
                "respawn",
            ),
            (
                "connection refused",
                Err(Some(WireError::Down("x".into()))),
                false,
                "error",
            ),
        ];
        for (case, outcome, stdio, want) in cases {
            let got = match classify(outcome, stdio, 1) {
                Ok(Probe::Modern(_)) => "modern",
                Ok(Probe::Legacy) => "legacy",
                Ok(Probe::LegacyRespawn) => "respawn",
                Err(_) => "error",
            };
            assert_eq!(got, want, "{case}");
        }
    }

    #[test]
    fn discover_result_is_read() {
        let r = json!({"capabilities": {"tools": {"listChanged": true}}, "instructions": "hi",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}}});
        let n = discovered(Some(&r), 3);
        assert_eq!(n.server_info.unwrap()["name"], "s");
        assert_eq!(n.instructions.as_deref(), Some("hi"));
        assert!(list_changes(n.capabilities.as_ref()));
        assert!(!list_changes(Some(&json!({"tools": {}}))));
    }
}
