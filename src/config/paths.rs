//! Where mws's files are by default (XDG state and config dirs, the clients' transcript roots)
//! and `~` expansion, from the environment. Must not touch the disk.

use std::path::{Path, PathBuf};

use super::{TranscriptKind, TranscriptRoot};

pub(super) fn env_path(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

pub(super) fn home() -> PathBuf {
    env_path("HOME").unwrap_or_else(|| PathBuf::from("/"))
}

/// `~/.local/state/mcp-working-set`, honouring `$XDG_STATE_HOME`.
pub fn default_state_dir() -> PathBuf {
    env_path("XDG_STATE_HOME")
        .unwrap_or_else(|| home().join(".local/state"))
        .join("mcp-working-set")
}

/// `~/.config/mcp-working-set/config.json`, honouring `$XDG_CONFIG_HOME`.
pub fn default_config_path() -> PathBuf {
    env_path("XDG_CONFIG_HOME")
        .unwrap_or_else(|| home().join(".config"))
        .join("mcp-working-set/config.json")
}

/// The Claude Code and Codex transcript roots, honouring `$CLAUDE_CONFIG_DIR` and `$CODEX_HOME`.
pub fn default_transcripts() -> Vec<TranscriptRoot> {
    let claude = env_path("CLAUDE_CONFIG_DIR").unwrap_or_else(|| home().join(".claude"));
    let codex = env_path("CODEX_HOME").unwrap_or_else(|| home().join(".codex"));
    vec![
        TranscriptRoot {
            kind: TranscriptKind::ClaudeCode,
            root: claude.join("projects"),
            server_names: Vec::new(),
        },
        TranscriptRoot {
            kind: TranscriptKind::Codex,
            root: codex.join("sessions"),
            server_names: Vec::new(),
        },
    ]
}

/// Expands a leading `~` to `$HOME`.
pub fn expand_tilde(p: &Path) -> PathBuf {
    match p.strip_prefix("~") {
        Ok(rest) => home().join(rest),
        Err(_) => p.to_path_buf(),
    }
}

/// The config path in force: `--config`, else `$MWS_CONFIG`, else the XDG default.
pub fn resolve_path(flag: Option<&Path>) -> PathBuf {
    flag.map(Path::to_path_buf)
        .or_else(|| env_path("MWS_CONFIG"))
        .unwrap_or_else(default_config_path)
}
