//! The config for checking calls before they reach the upstream (docs/configuration.md,
//! "Validation" and "Policy"): how arguments are checked against each tool's `inputSchema`, and
//! which tools may be used at all. Only the values and their syntax; the checks live in
//! `server::guard_call` and `crate::policy`. Must not do I/O.

use serde::Deserialize;

/// `validation`: what mws does with a call whose arguments do not match the tool's `inputSchema`.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Validation {
    /// Refuse it with the problems and the schema; the upstream never sees it.
    #[default]
    Enforce,
    /// Send it on, and log a warning naming the tool and how many problems it had.
    Warn,
    /// Do not check arguments.
    Off,
}

/// `policy`: which upstream tools may be listed, found by search and called (`crate::policy`).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Policy {
    /// Globs over tool names; a match is excluded.
    pub deny: Vec<String>,
    /// Globs over tool names; when not empty, only matching tools are kept.
    pub allow: Vec<String>,
    /// Only tools the upstream annotates `readOnlyHint: true`.
    pub read_only: bool,
}

impl Policy {
    /// The globs' syntax, checked when the config is loaded; the message names the field.
    pub fn check(&self) -> Result<(), String> {
        for (field, globs) in [("deny", &self.deny), ("allow", &self.allow)] {
            for (i, p) in globs.iter().enumerate() {
                if let Err(e) = glob::Pattern::new(p) {
                    return Err(format!(
                        "`policy.{field}[{i}]`: \"{p}\" is not a valid glob: {e}"
                    ));
                }
            }
        }
        Ok(())
    }
}
