//! The policy rule (config `policy`, docs/configuration.md): whether an upstream tool may be
//! listed, found by search, suggested and called. `crate::listed` applies it to what is listed and
//! searched; `server::guard_call` refuses calls with `why_excluded`'s text. Pure: must not do I/O.

use std::sync::Arc;

use glob::Pattern;
use serde_json::Value;

use crate::catalog::Catalog;
use crate::config::{Policy, ReadOnly};

/// The policy with its globs compiled.
pub struct Rule {
    deny: Vec<(String, Pattern)>,
    allow: Vec<Pattern>,
    read_only: ReadOnly,
}

impl Rule {
    /// Globs that do not compile were refused when the config was loaded; here they match nothing.
    pub fn new(policy: &Policy) -> Rule {
        let compile = |p: &String| Pattern::new(p).ok();
        Rule {
            deny: policy
                .deny
                .iter()
                .filter_map(|p| Some((p.clone(), compile(p)?)))
                .collect(),
            allow: policy.allow.iter().filter_map(compile).collect(),
            read_only: policy.read_only.clone(),
        }
    }

    /// Whether the policy keeps every tool.
    pub fn is_open(&self) -> bool {
        self.deny.is_empty() && self.allow.is_empty() && !self.read_only.is_on()
    }

    /// Why the policy excludes the tool `name` (`tool`: its catalog entry, when known), naming
    /// the config field; `None` when it is allowed.
    pub fn why_excluded(&self, name: &str, tool: Option<&Value>) -> Option<String> {
        if let Some((glob, _)) = self.deny.iter().find(|(_, p)| p.matches(name)) {
            return Some(format!("config `policy.deny` has \"{glob}\""));
        }
        if !self.allow.is_empty() && !self.allow.iter().any(|p| p.matches(name)) {
            return Some("config `policy.allow` does not name it".into());
        }
        let read_only = || {
            tool.and_then(|t| t.get("annotations")?.get("readOnlyHint"))
                .and_then(Value::as_bool)
                == Some(true)
        };
        if self.read_only.applies_to(name) && !read_only() {
            let which = match &self.read_only {
                ReadOnly::All(_) => "is true".to_string(),
                ReadOnly::Servers(_) => "names its server".to_string(),
            };
            return Some(format!(
                "config `policy.readOnly` {which} and the upstream does not annotate it \
                 readOnlyHint: true"
            ));
        }
        None
    }

    pub fn allows(&self, catalog: &Catalog, name: &str) -> bool {
        self.why_excluded(name, catalog.get(name)).is_none()
    }
}

/// The catalog's tools the policy allows: the same catalog when it allows everything.
pub fn allowed(catalog: &Arc<Catalog>, policy: &Policy) -> Arc<Catalog> {
    match filtered(catalog, policy) {
        Some(c) => Arc::new(c),
        None => catalog.clone(),
    }
}

/// The catalog's tools the policy allows, or `None` when it allows everything.
pub fn filtered(catalog: &Catalog, policy: &Policy) -> Option<Catalog> {
    let rule = Rule::new(policy);
    if rule.is_open() {
        return None;
    }
    let tools = catalog
        .tools()
        .iter()
        .filter(|t| {
            let name = t.get("name").and_then(Value::as_str).unwrap_or("");
            rule.why_excluded(name, Some(t)).is_none()
        })
        .cloned()
        .collect();
    Some(Catalog::new(tools))
}

/// How many of the catalog's tools the policy hides.
pub fn hidden(catalog: &Catalog, policy: &Policy) -> usize {
    let rule = Rule::new(policy);
    if rule.is_open() {
        return 0;
    }
    catalog.names().filter(|n| !rule.allows(catalog, n)).count()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn catalog() -> Catalog {
        Catalog::new(vec![
            json!({"name": "files_read", "annotations": {"readOnlyHint": true}}),
            json!({"name": "files_delete_all", "annotations": {"readOnlyHint": true}}),
            json!({"name": "files_write"}),
            json!({"name": "mail_send", "annotations": {"readOnlyHint": false}}),
        ])
    }

    fn kept(policy: Policy) -> Vec<String> {
        let c = Arc::new(catalog());
        let names = allowed(&c, &policy).names().map(String::from).collect();
        assert_eq!(hidden(&c, &policy), 4 - allowed(&c, &policy).len());
        names
    }

    #[test]
    fn the_rule_as_data() {
        let p = |deny: &[&str], allow: &[&str], read_only| Policy {
            deny: deny.iter().map(|s| s.to_string()).collect(),
            allow: allow.iter().map(|s| s.to_string()).collect(),
            read_only: ReadOnly::All(read_only),
        };
        let all = ["files_read", "files_delete_all", "files_write", "mail_send"];
        assert_eq!(kept(p(&[], &[], false)), all);
        assert_eq!(
            kept(p(&["*_delete_*"], &[], false)),
            ["files_read", "files_write", "mail_send"]
        );
        assert_eq!(
            kept(p(&[], &["files_*"], false)),
            ["files_read", "files_delete_all", "files_write"]
        );
        assert_eq!(kept(p(&[], &[], true)), ["files_read", "files_delete_all"]);
        // Deny wins over allow and readOnly.
        assert_eq!(kept(p(&["*_delete_*"], &["files_*"], true)), ["files_read"]);
    }

    #[test]
    fn the_reason_names_the_config_field() {
        let rule = Rule::new(&Policy {
            deny: vec!["mail_*".into()],
            allow: vec![],
            read_only: ReadOnly::All(true),
        });
        let c = catalog();
        assert_eq!(
            rule.why_excluded("mail_send", c.get("mail_send")).unwrap(),
            "config `policy.deny` has \"mail_*\""
        );
        assert!(
            rule.why_excluded("files_write", None)
                .unwrap()
                .contains("policy.readOnly")
        );
        assert_eq!(rule.why_excluded("files_read", c.get("files_read")), None);
    }

    #[test]
    fn read_only_for_some_servers_limits_only_theirs() {
        let rule = Rule::new(&Policy {
            read_only: ReadOnly::Servers(vec!["files".into()]),
            ..Policy::default()
        });
        let c = Catalog::new(vec![
            json!({"name": "files__read", "annotations": {"readOnlyHint": true}}),
            json!({"name": "files__write"}),
            json!({"name": "filesystem__write"}),
            json!({"name": "mail__send"}),
        ]);
        let kept: Vec<&str> = c.names().filter(|n| rule.allows(&c, n)).collect();
        assert_eq!(kept, ["files__read", "filesystem__write", "mail__send"]);
        assert_eq!(
            rule.why_excluded("files__write", c.get("files__write"))
                .unwrap(),
            "config `policy.readOnly` names its server and the upstream does not annotate it \
             readOnlyHint: true"
        );
    }
}
