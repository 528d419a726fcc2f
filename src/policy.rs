//! The policy rule (config `policy`, docs/configuration.md): whether an upstream tool may be
//! listed, found by search, suggested and called. `crate::listed` applies it to what is listed and
//! searched; `server::guard_call` refuses calls with `why_excluded`'s text. Pure: must not do I/O.

use std::sync::Arc;

use glob::Pattern;
use serde_json::Value;

use crate::catalog::Catalog;
use crate::catalog::exposed::{self, NameKind};
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

    /// Why the policy excludes the tool `name` (any of its names: `exposed::catalog_name`),
    /// naming the config field; `None` when it is allowed. Every rule is matched against every
    /// name the tool goes by (`exposed::every_name`: the name held, the real one of a shortened
    /// name, the one clients see), so that no name of a tool walks around a rule.
    pub fn why_excluded(&self, catalog: &Catalog, name: &str) -> Option<String> {
        let held = exposed::catalog_name(catalog, name);
        let names = exposed::every_name(catalog, held);
        let which = |kind: NameKind, matched: &str| match kind {
            _ if matched == name => String::new(),
            NameKind::Catalog | NameKind::Shown => format!(", matching its name \"{matched}\""),
            NameKind::Real => format!(", matching its full name \"{matched}\""),
        };
        for (kind, n) in &names {
            if let Some((glob, _)) = self.deny.iter().find(|(_, p)| p.matches(n)) {
                let which = which(*kind, n);
                return Some(format!("config `policy.deny` has \"{glob}\"{which}"));
            }
        }
        let named = |p: &Pattern| names.iter().any(|(_, n)| p.matches(n));
        if !self.allow.is_empty() && !self.allow.iter().any(named) {
            return Some("config `policy.allow` does not name it".into());
        }
        if names.iter().any(|(_, n)| self.read_only.applies_to(n)) && !read_only(catalog.get(held))
        {
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
        self.why_excluded(catalog, name).is_none()
    }
}

/// Whether the upstream annotates `tool` `readOnlyHint: true` (its claim; mws cannot check it).
pub fn read_only(tool: Option<&Value>) -> bool {
    tool.and_then(|t| t.get("annotations")?.get("readOnlyHint"))
        .and_then(Value::as_bool)
        == Some(true)
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
    Some(catalog.subset(|t| {
        let name = t.get("name").and_then(Value::as_str).unwrap_or("");
        rule.allows(catalog, name)
    }))
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
            hold_new_tools: false,
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
            hold_new_tools: false,
        });
        let c = catalog();
        assert_eq!(
            rule.why_excluded(&c, "mail_send").unwrap(),
            "config `policy.deny` has \"mail_*\""
        );
        assert!(
            rule.why_excluded(&Catalog::default(), "files_write")
                .unwrap()
                .contains("policy.readOnly")
        );
        assert_eq!(rule.why_excluded(&c, "files_read"), None);
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
            rule.why_excluded(&c, "files__write").unwrap(),
            "config `policy.readOnly` names its server and the upstream does not annotate it \
             readOnlyHint: true"
        );
    }

    /// A fleet catalog whose `web__` tool name mws shortened, as `exposed::Naming` builds it.
    fn shortened() -> (Catalog, String, String) {
        let long = "delete_every_repository_of_the_organisation_and_its_forks_too";
        let web = Catalog::new(vec![
            json!({"name": long, "annotations": {"readOnlyHint": false}}),
            json!({"name": "read", "annotations": {"readOnlyHint": true}}),
        ]);
        let (naming, tools) = exposed::Naming::build(&[("web", &web)], 40);
        let c = Catalog::new(tools).with_real_names(naming.real_names());
        let full = format!("web__{long}");
        let short = c.by_real_name(&full).unwrap().to_string();
        assert_ne!(short, full);
        (c, short, full)
    }

    /// Every rule sees the real name of a shortened tool as well as the name it is exposed
    /// under: a glob written for either catches it.
    #[test]
    fn a_shortened_name_cannot_slip_past_a_rule() {
        let (c, short, full) = shortened();
        let rule = |policy: Policy| Rule::new(&policy);
        let deny = |g: &str| {
            rule(Policy {
                deny: vec![g.into()],
                ..Policy::default()
            })
        };
        assert_eq!(
            deny("*_forks_too").why_excluded(&c, &short).unwrap(),
            format!("config `policy.deny` has \"*_forks_too\", matching its full name \"{full}\"")
        );
        assert_eq!(
            deny(&short).why_excluded(&c, &short).unwrap(),
            format!("config `policy.deny` has \"{short}\"")
        );
        // Called by its full name, the tool is still the shortened one.
        assert_eq!(
            deny(&short).why_excluded(&c, &full).unwrap(),
            format!("config `policy.deny` has \"{short}\", matching its name \"{short}\"")
        );
        assert!(deny("web__delete_*").allows(&c, "web__read"));
        let allow = |g: &str| {
            rule(Policy {
                allow: vec![g.into()],
                ..Policy::default()
            })
        };
        assert!(allow("*_forks_too").allows(&c, &short));
        assert!(allow(&short).allows(&c, &short));
        assert_eq!(
            allow("web__read").why_excluded(&c, &short).unwrap(),
            "config `policy.allow` does not name it"
        );
        let read_only = rule(Policy {
            read_only: ReadOnly::Servers(vec!["web".into()]),
            ..Policy::default()
        });
        assert!(
            read_only
                .why_excluded(&c, &short)
                .unwrap()
                .contains("names its server")
        );
        assert!(read_only.allows(&c, "web__read"));
        let policy = Policy {
            deny: vec!["*_forks_too".into()],
            ..Policy::default()
        };
        let kept: Vec<String> = allowed(&Arc::new(c.clone()), &policy)
            .names()
            .map(String::from)
            .collect();
        assert_eq!(kept, ["web__read"]);
        assert_eq!(hidden(&c, &policy), 1);
    }

    /// A single upstream's tool named like a meta-tool is matched under the name clients see too.
    #[test]
    fn a_renamed_meta_named_tool_is_matched_under_both_names() {
        let c = Catalog::new(vec![json!({"name": "search_tools"}), json!({"name": "x"})]);
        let rule = Rule::new(&Policy {
            deny: vec!["upstream__*".into()],
            ..Policy::default()
        });
        assert_eq!(
            rule.why_excluded(&c, "search_tools").unwrap(),
            "config `policy.deny` has \"upstream__*\", matching its name \"upstream__search_tools\""
        );
        assert!(rule.allows(&c, "x"));
    }
}
