//! The config for checking calls before they reach the upstream (docs/configuration.md,
//! "Validation"): how arguments are checked against each tool's `inputSchema`. Only the values;
//! the check itself lives in `server::guard_call`. Must not do I/O.

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
