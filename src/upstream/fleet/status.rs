//! What the proxy knows of several servers as one `UpstreamStatus`: each server's own state
//! (`servers`), the capabilities any of them offers, their instructions under their names, and a
//! failure only once every server has settled. Must not ask a server anything.

use serde_json::{Map, Value};

use super::members::FleetInner;
use crate::upstream::{ServerState, UpstreamStatus};

/// Capabilities the fleet passes on from its servers (`logging` is decided per server:
/// `Upstream::relays_logs`).
const MERGED_CAPABILITIES: [&str; 3] = ["resources", "prompts", "completions"];

pub fn status(f: &FleetInner) -> UpstreamStatus {
    let last = f.last_merge();
    let servers: Vec<ServerState> = f
        .members
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let (tools, shortened, warnings) = match &last {
                Some((counts, naming)) => (
                    counts.get(i).copied().unwrap_or(0),
                    naming
                        .shortened
                        .iter()
                        .filter(|(j, _, _)| *j == i)
                        .map(|(_, e, full)| (e.clone(), full.clone()))
                        .collect(),
                    naming
                        .warnings
                        .iter()
                        .filter(|(j, _)| *j == i)
                        .map(|(_, w)| w.clone())
                        .collect(),
                ),
                None => (0, Vec::new(), Vec::new()),
            };
            ServerState {
                name: m.name.clone(),
                target: m.target.clone(),
                status: m.up.status(),
                tools,
                start_error: m.start_error.clone(),
                shortened,
                warnings,
            }
        })
        .collect();
    let mut out = UpstreamStatus {
        reachable: !servers.is_empty() && servers.iter().all(|s| s.status.reachable),
        ..UpstreamStatus::default()
    };
    if let Some(first) = servers.iter().find(|s| s.status.reachable) {
        out.era = first.status.era;
        out.protocol_version = first.status.protocol_version.clone();
    }
    let mut caps = Map::new();
    let mut known = false;
    for s in &servers {
        let Some(Value::Object(c)) = &s.status.capabilities else {
            continue;
        };
        known = true;
        for key in MERGED_CAPABILITIES {
            if let Some(v) = c.get(key) {
                merge_cap(
                    caps.entry(key).or_insert_with(|| Value::Object(Map::new())),
                    v,
                );
            }
        }
    }
    if known {
        out.capabilities = Some(Value::Object(caps));
    }
    let texts: Vec<String> = servers
        .iter()
        .filter_map(|s| {
            let t = s.status.instructions.as_deref()?.trim();
            (!t.is_empty()).then(|| format!("{}: {t}", s.name))
        })
        .collect();
    if !texts.is_empty() {
        out.instructions = Some(texts.join("\n"));
    }
    // Settled: each server answered, failed, or was never started.
    let settled = servers
        .iter()
        .all(|s| s.status.reachable || s.status.last_error.is_some() || s.start_error.is_some());
    let down: Vec<String> = servers
        .iter()
        .filter(|s| s.down())
        .map(|s| {
            let why = s.status.last_error.as_deref().unwrap_or("not answering");
            format!("server \"{}\": {why}", s.name)
        })
        .collect();
    if settled && !down.is_empty() {
        out.last_error = Some(down.join("; "));
    }
    let lists: Vec<String> = servers
        .iter()
        .filter_map(|s| {
            Some(format!(
                "server \"{}\": {}",
                s.name,
                s.status.list_error.as_ref()?
            ))
        })
        .collect();
    if !lists.is_empty() {
        out.list_error = Some(lists.join("; "));
    }
    out.servers = servers;
    out
}

/// Folds one server's capability object into the merged one: a flag is on when any server's is.
fn merge_cap(into: &mut Value, v: &Value) {
    let (Some(into), Some(v)) = (into.as_object_mut(), v.as_object()) else {
        return;
    };
    for (k, x) in v {
        match (into.get(k), x) {
            (Some(Value::Bool(true)), _) => {}
            _ => {
                into.insert(k.clone(), x.clone());
            }
        }
    }
}
