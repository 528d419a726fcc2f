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
    /// Only tools the upstream annotates `readOnlyHint: true`: every tool, or those of the
    /// servers named.
    pub read_only: ReadOnly,
    /// A known server's new tools wait for `mws tools approve` like changed ones
    /// (docs/tool-approval.md).
    pub hold_new_tools: bool,
}

/// `policy.readOnly`: `true`/`false`, or a list of server names (config `servers`).
#[derive(Debug, Clone, PartialEq)]
pub enum ReadOnly {
    /// `true` (every tool) or `false` (none).
    All(bool),
    /// Only the tools of these servers (their `<server>__<tool>` names).
    Servers(Vec<String>),
}

impl Default for ReadOnly {
    fn default() -> Self {
        ReadOnly::All(false)
    }
}

impl<'de> Deserialize<'de> for ReadOnly {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            All(bool),
            Servers(Vec<String>),
        }
        Either::deserialize(d)
            .map(|e| match e {
                Either::All(b) => ReadOnly::All(b),
                Either::Servers(s) => ReadOnly::Servers(s),
            })
            .map_err(|_| {
                serde::de::Error::custom(
                    "expected true, false or a list of server names (config `servers`)",
                )
            })
    }
}

impl ReadOnly {
    /// Whether the tool exposed as `name` must be annotated `readOnlyHint: true`.
    pub fn applies_to(&self, name: &str) -> bool {
        match self {
            ReadOnly::All(on) => *on,
            ReadOnly::Servers(servers) => servers.iter().any(|s| {
                name.strip_prefix(s.as_str())
                    .is_some_and(|rest| rest.starts_with(crate::catalog::exposed::SEPARATOR))
            }),
        }
    }

    /// Whether it limits any tool.
    pub fn is_on(&self) -> bool {
        match self {
            ReadOnly::All(on) => *on,
            ReadOnly::Servers(servers) => !servers.is_empty(),
        }
    }
}

impl Policy {
    /// The globs' syntax and `readOnly`'s server names (`servers`: the config's), checked when
    /// the config is loaded; the message names the field.
    pub fn check(&self, servers: &[super::Server]) -> Result<(), String> {
        if let ReadOnly::Servers(names) = &self.read_only {
            for (i, n) in names.iter().enumerate() {
                if !servers.iter().any(|s| s.name == *n) {
                    let known: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
                    return Err(if known.is_empty() {
                        format!(
                            "`policy.readOnly[{i}]`: \"{n}\" is not a server: a list of servers \
                             needs `servers`; with a single `upstream` write true or false"
                        )
                    } else {
                        format!(
                            "`policy.readOnly[{i}]`: \"{n}\" is not a server in `servers` \
                             (known: {})",
                            known.join(", ")
                        )
                    });
                }
            }
        }
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
