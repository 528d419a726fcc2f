//! mws's config text once `--apply` has put servers behind it: the moved servers as `servers`
//! entries with their other names as `aliases`, their tool settings added to `policy`, and a
//! single `upstream` folded into `servers`. Pure: text in, text out.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::setup::jsonc_edit;
use crate::setup::plan::Plan;
use crate::setup::tool_policy::{self, ToolPolicy};

/// The servers an `--apply` of `plan` would write, with their aliases, keyed by name.
pub(super) fn entries(plan: &Plan, moved: &BTreeSet<&str>) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for i in plan
        .imported
        .iter()
        .filter(|i| moved.contains(i.name.as_str()))
    {
        let mut v = serde_json::to_value(&plan.servers[&i.name]).expect("a server serializes");
        let aliases: BTreeSet<&str> = i
            .sources
            .iter()
            .map(|s| s.name.as_str())
            .filter(|n| *n != i.name)
            .collect();
        if !aliases.is_empty() {
            v["aliases"] = json!(aliases);
        }
        out.insert(i.name.clone(), v);
    }
    out
}

/// The tool policies of the servers in `moved`.
pub(super) fn policies<'a>(
    plan: &'a Plan,
    moved: &BTreeSet<&str>,
) -> Vec<(&'a str, &'a ToolPolicy)> {
    plan.imported
        .iter()
        .filter(|i| moved.contains(i.name.as_str()))
        .map(|i| (i.name.as_str(), &i.policy))
        .collect()
}

/// mws's config text with `servers` set (other members untouched) and the moved servers' tool
/// settings added to `policy` (`tool_policy::add_to_config`). A config has `upstream` or
/// `servers`, never both, so a single `upstream` goes: into the entry of the same server when one
/// is written, under `UPSTREAM_SERVER_NAME` otherwise, marked `adoptsUpstreamHistory` so its
/// history keeps counting; `mws init`'s placeholder (nothing listens there) is simply dropped.
pub(super) fn config_text(
    text: &str,
    servers: &BTreeMap<String, Value>,
    policies: &[(&str, &ToolPolicy)],
) -> Result<(String, Vec<tool_policy::PolicyKey>), String> {
    let mut servers = servers.clone();
    let upstream = serde_json::from_str::<Value>(&crate::config::jsonc::strip(text))
        .ok()
        .and_then(|v| v.get("upstream").cloned());
    if let Some(up) = &upstream {
        let same = servers.values_mut().find(|v| same_server(v, up));
        match same {
            Some(v) => v["adoptsUpstreamHistory"] = json!(true),
            None if is_placeholder(up) => {}
            None => {
                let mut v = up.clone();
                v["adoptsUpstreamHistory"] = json!(true);
                servers.insert(UPSTREAM_SERVER_NAME.into(), v);
            }
        }
    }
    let mut t = text.to_string();
    for (name, v) in &servers {
        t = jsonc_edit::set(&t, &["servers"], name, v)?;
    }
    if upstream.is_some() {
        t = jsonc_edit::remove(&t, &[], "upstream")?;
    }
    tool_policy::add_to_config(t, policies)
}

/// The name a config's single `upstream` gets in `servers` when no client had it registered.
pub const UPSTREAM_SERVER_NAME: &str = "main";

/// Same server: the same URL, or the same command and arguments.
fn same_server(a: &Value, b: &Value) -> bool {
    let url = |v: &Value| v.get("url").and_then(Value::as_str).map(str::to_string);
    let cmd = |v: &Value| (v.get("command").cloned(), v.get("args").cloned());
    match (url(a), url(b)) {
        (Some(x), Some(y)) => crate::setup::plan::same_endpoint(&x, &y),
        (None, None) => a.get("command").is_some() && cmd(a) == cmd(b),
        _ => false,
    }
}

/// `mws init`'s `upstream`, which nothing answers until the user edits it.
fn is_placeholder(up: &Value) -> bool {
    let default = crate::config::Upstream::default();
    matches!(&default, crate::config::Upstream::Http(h)
        if up.get("url").and_then(Value::as_str) == Some(h.url.as_str())
            && up.get("headers").is_none_or(|h| h.as_object().is_some_and(|o| o.is_empty())))
}
