//! The upstream's last known identity — era, protocol version, serverInfo, capabilities,
//! instructions — kept in `stateDir/upstream.json` (0600), so that after a restart the proxy can
//! answer `initialize` and `server/discover` at once, before the upstream has been reached.
//! Must not talk to the upstream.

use std::path::Path;

use serde_json::{Value, json};

use super::UpstreamStatus;
use crate::mcp::Era;

/// The stored identity as a status (`reachable: false`: nothing has been heard in this process).
pub fn load(path: &Path) -> Option<UpstreamStatus> {
    let text = std::fs::read_to_string(path).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    let era = match v.get("era").and_then(Value::as_str)? {
        "modern" => Era::Modern,
        "legacy" => Era::Legacy,
        _ => return None,
    };
    let present = |k: &str| v.get(k).filter(|x| !x.is_null()).cloned();
    Some(UpstreamStatus {
        era: Some(era),
        protocol_version: v
            .get("protocolVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
        server_info: present("serverInfo"),
        capabilities: present("capabilities"),
        instructions: v
            .get("instructions")
            .and_then(Value::as_str)
            .map(str::to_string),
        reachable: false,
        last_error: None,
        needs_login: false,
        list_error: None,
        servers: Vec::new(),
    })
}

/// The text stored for a status (compared before writing, so an unchanged identity is not
/// rewritten on every negotiation).
pub fn render(s: &UpstreamStatus) -> String {
    json!({
        "era": match s.era { Some(Era::Modern) => "modern", Some(Era::Legacy) => "legacy", None => "unknown" },
        "protocolVersion": s.protocol_version,
        "serverInfo": s.server_info,
        "capabilities": s.capabilities,
        "instructions": s.instructions,
    })
    .to_string()
}

pub fn store(path: &Path, text: &str) {
    if let Err(e) = crate::private_file::write(path, text.as_bytes()) {
        tracing::warn!(
            "cannot store the upstream's identity in {}: {e}",
            path.display()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("upstream.json");
        let s = UpstreamStatus {
            era: Some(Era::Legacy),
            protocol_version: Some("2025-11-25".into()),
            server_info: Some(json!({"name": "x", "version": "1"})),
            capabilities: Some(json!({"tools": {"listChanged": true}})),
            instructions: Some("use x".into()),
            reachable: true,
            last_error: None,
            needs_login: false,
            list_error: None,
            servers: Vec::new(),
        };
        store(&path, &render(&s));
        let back = load(&path).unwrap();
        assert_eq!(render(&back), render(&s));
        assert!(!back.reachable);
        for bad in ["", "{", "{\"era\": \"other\"}", "[]"] {
            std::fs::write(&path, bad).unwrap();
            assert!(load(&path).is_none(), "{bad:?}");
        }
    }
}
