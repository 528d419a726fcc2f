//! The config of code mode (docs/code-mode.md): whether `run_script` is offered, and the limits
//! every script runs under. Only the values and their checks; the sandbox is `crate::script`.
//! Must not do I/O.

use serde::Deserialize;

/// `codeMode`: scripts that call tools (`crate::script`).
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct CodeMode {
    /// Whether `run_script` is listed and answered.
    pub enabled: bool,
    /// Longest a script may run, its tool calls included, in milliseconds.
    pub timeout_ms: u64,
    /// Most memory one script's engine may hold, in megabytes (fractions allowed).
    pub memory_mb: f64,
    /// Most tool calls one script may make.
    pub max_calls: u32,
    /// Longest value a script may return, in bytes (before result shaping).
    pub max_output_bytes: usize,
}

/// Default `codeMode.timeoutMs`: thirty upstream calls of a second each fit twice over. Raising it
/// lets a runaway script hold its client's turn longer.
pub const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// Default `codeMode.memoryMb`: room for a few thousand parsed results. Raising it lets each
/// running script grow the proxy's resident set by as much.
pub const DEFAULT_MEMORY_MB: f64 = 32.0;
/// Default `codeMode.maxCalls`. Raising it lets one script load an upstream harder.
pub const DEFAULT_MAX_CALLS: u32 = 200;
/// Default `codeMode.maxOutputBytes`: a returned value over this is refused rather than shaped.
/// Raising it lets a script return more for `results.maxTokens` to cut.
pub const DEFAULT_MAX_OUTPUT_BYTES: usize = 1024 * 1024;

impl Default for CodeMode {
    fn default() -> Self {
        CodeMode {
            enabled: true,
            timeout_ms: DEFAULT_TIMEOUT_MS,
            memory_mb: DEFAULT_MEMORY_MB,
            max_calls: DEFAULT_MAX_CALLS,
            max_output_bytes: DEFAULT_MAX_OUTPUT_BYTES,
        }
    }
}

impl CodeMode {
    /// What the types cannot check; the message names the field.
    pub fn check(&self) -> Result<(), String> {
        if self.timeout_ms == 0 {
            return Err("`codeMode.timeoutMs`: expected a positive number of milliseconds".into());
        }
        if !(self.memory_mb.is_finite() && self.memory_mb >= 1.0) {
            return Err(format!(
                "`codeMode.memoryMb`: {} is under the 1 MB a script's engine needs",
                self.memory_mb
            ));
        }
        if self.max_output_bytes == 0 {
            return Err("`codeMode.maxOutputBytes`: expected a positive number of bytes".into());
        }
        Ok(())
    }
}
