//! The config of big results (docs/configuration.md, "Results"): the token limit over which a
//! tool result is shaped before it reaches the client, how long the full result is kept in memory
//! for paging, and the memory cap of that store. Only the values and their checks; the shaping
//! and the store live in `crate::results`. Must not do I/O.

use serde::Deserialize;

/// `results`: big tool results (`crate::results`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Results {
    /// A result over this many tokens is shaped; 0 turns shaping off.
    pub max_tokens: u32,
    /// How long a shaped result's full text stays pageable, in minutes (fractions allowed).
    pub keep_minutes: f64,
    /// The most memory the kept results may take, in megabytes (fractions allowed).
    pub memory_mb: f64,
}

/// Default `results.maxTokens`. Claude Code warns about a tool result over 10,000 tokens and
/// refuses one over 25,000; a limit at the warning line keeps every shaped result under both with
/// room for the marker, and a model reads 10,000 tokens (about 40 KB of text) in one turn.
/// Raising it sends more of a big result at once; lowering it pages sooner.
pub const DEFAULT_MAX_TOKENS: u32 = 10_000;
/// Default `results.keepMinutes`: long enough for a model to page through a result across the
/// turns of one task. Raising it keeps memory in use longer.
pub const DEFAULT_KEEP_MINUTES: f64 = 30.0;
/// Default `results.memoryMb`: about sixty 1 MB results. Raising it evicts less often and lets
/// the proxy's resident set grow by as much.
pub const DEFAULT_MEMORY_MB: f64 = 64.0;

impl Default for Results {
    fn default() -> Self {
        Results {
            max_tokens: DEFAULT_MAX_TOKENS,
            keep_minutes: DEFAULT_KEEP_MINUTES,
            memory_mb: DEFAULT_MEMORY_MB,
        }
    }
}

impl Results {
    /// What the types cannot check; the message names the field.
    pub fn check(&self) -> Result<(), String> {
        if !(self.keep_minutes.is_finite() && self.keep_minutes > 0.0) {
            return Err(format!(
                "`results.keepMinutes`: {} is not a positive number of minutes",
                self.keep_minutes
            ));
        }
        if !(self.memory_mb.is_finite() && self.memory_mb > 0.0) {
            return Err(format!(
                "`results.memoryMb`: {} is not a positive number of megabytes",
                self.memory_mb
            ));
        }
        Ok(())
    }

    /// `keepMinutes` as a duration.
    pub fn keep(&self) -> std::time::Duration {
        std::time::Duration::from_secs_f64(self.keep_minutes * 60.0)
    }

    /// `memoryMb` in bytes.
    pub fn memory_bytes(&self) -> usize {
        (self.memory_mb * 1024.0 * 1024.0) as usize
    }
}
