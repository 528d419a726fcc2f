//! What `mws doctor` says about the checks before a call is sent: how many tools the config's
//! `policy` hides, and which tools' `inputSchema` mws cannot use to check arguments (their calls
//! go unchecked). Pure over a catalog; must not talk to the upstream.

use serde_json::Value;

use crate::catalog::Catalog;
use crate::config::{Config, Validation};
use crate::listed;
use crate::server::guard_call;

/// Tools named one per detail line before the rest are counted. Raising it lengthens the report.
const MAX_NAMED: usize = 10;

/// Detail lines for the upstream check; empty when there is nothing to say.
pub fn details(config: &Config, catalog: &Catalog) -> Vec<String> {
    let mut out = Vec::new();
    let hidden = listed::hidden_by_policy(catalog, config);
    if hidden > 0 {
        out.push(format!(
            "the config's policy hides {hidden} of {} tool(s): not listed, searched or run",
            catalog.len()
        ));
    }
    if config.validation == Validation::Off {
        return out;
    }
    let unusable: Vec<(String, String)> = catalog
        .tools()
        .iter()
        .filter_map(|t| {
            let name = t.get("name").and_then(Value::as_str)?;
            let why = guard_call::compile(t.get("inputSchema")?).err()?;
            Some((name.to_string(), why))
        })
        .collect();
    if !unusable.is_empty() {
        out.push(format!(
            "{} tool(s) have an inputSchema mws cannot check arguments against; their calls are \
             sent unchecked:",
            unusable.len()
        ));
    }
    for (name, why) in unusable.iter().take(MAX_NAMED) {
        out.push(format!("  {name}: {why}"));
    }
    if unusable.len() > MAX_NAMED {
        out.push(format!("  and {} more", unusable.len() - MAX_NAMED));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::config::Policy;

    #[test]
    fn names_hidden_and_unusable_schemas() {
        let catalog = Catalog::new(vec![
            json!({"name": "ok", "inputSchema": {"type": "object"}}),
            json!({"name": "odd", "inputSchema": {"type": "object", "properties": {"a": {"type": "wat"}}}}),
            json!({"name": "files_delete", "inputSchema": {"type": "object"}}),
        ]);
        let config = Config {
            policy: Policy {
                deny: vec!["*_delete".into()],
                ..Policy::default()
            },
            ..Config::default()
        };
        let d = details(&config, &catalog);
        assert_eq!(d.len(), 3, "{d:?}");
        assert_eq!(
            d[0],
            "the config's policy hides 1 of 3 tool(s): not listed, searched or run"
        );
        assert!(d[2].starts_with("  odd: "), "{d:?}");
        let off = Config {
            validation: Validation::Off,
            ..Config::default()
        };
        assert!(details(&off, &catalog).is_empty());
    }
}
