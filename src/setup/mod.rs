//! `mws setup import`: the MCP servers other clients have registered, as found in their config
//! files, and the plan for putting them behind mws; `apply` carries a plan out and `undo` takes
//! it back. The readers and the plan are pure (text in, findings out); `sources` only reads;
//! only `apply*`, `write`, `backup`, `lock` and `undo` write, and only the files a plan names.

pub mod apply;
pub mod backup;
pub mod claude_code;
pub mod claude_desktop;
pub mod codex;
pub mod cursor;
pub mod doc;
pub mod entry;
pub mod gemini;
pub mod jsonc_edit;
pub mod lock;
pub mod names;
pub mod plan;
pub mod render;
pub mod sources;
pub mod tool_policy;
pub mod undo;
pub mod vars;
pub mod vscode;
pub mod write;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Serialize, Serializer};

/// A client whose config files are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Client {
    ClaudeCode,
    Codex,
    ClaudeDesktop,
    Cursor,
    VsCode,
    GeminiCli,
}

impl Client {
    pub fn as_str(self) -> &'static str {
        match self {
            Client::ClaudeCode => "claude-code",
            Client::Codex => "codex",
            Client::ClaudeDesktop => "claude-desktop",
            Client::Cursor => "cursor",
            Client::VsCode => "vs-code",
            Client::GeminiCli => "gemini-cli",
        }
    }
}

/// Where in a client a registration lives. Claude Code has `user`, `local` (one project, kept in
/// `~/.claude.json`) and `project` (`.mcp.json`); the other clients `user` (global) and `project`
/// (workspace).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    User,
    Local,
    Project,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Local => "local",
            Scope::Project => "project",
        }
    }
}

/// How a server is reached, as the client's file says (values verbatim, secrets included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Transport {
    /// A child process speaking MCP over stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP.
    Http {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// The legacy HTTP+SSE transport (2024-11-05).
    Sse {
        url: String,
        headers: BTreeMap<String, String>,
    },
    /// WebSocket (Claude Code's `ws`).
    Ws {
        url: String,
        headers: BTreeMap<String, String>,
    },
}

/// Something about an entry beyond its transport that decides where it goes.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Flag {
    /// The entry configures an OAuth login (`oauth`, `auth`, `authProviderType`).
    Oauth,
    /// The client has it switched off (`enabled = false`, `disabled: true`).
    Disabled,
    /// Claude Code's `alwaysLoad` (every tool up front).
    AlwaysLoad,
    /// Headers come from a command run at connect time (`headersHelper`, `http_headers_helper`).
    HeadersHelper,
    /// Environment read from a file at start (`envFile`); not copied.
    EnvFile,
    /// Variables forwarded from the client's own environment (Codex `env_vars`).
    ForwardsEnv,
    /// A VS Code `${input:id}` value: typed by the user, kept by VS Code, not in any file.
    Input(String),
    /// A client variable rewritten into mws's `${VAR}` form.
    VariablesRewritten,
    /// A client's own variable mws has no value for (Cursor's and VS Code's `${workspaceFolder}`).
    ClientVariable(String),
    /// A Claude Code `.mcp.json` server the user has not approved for its project, and why.
    Unapproved(String),
    /// The file is tracked by git in this repository: editing it changes every clone.
    Tracked(PathBuf),
    /// The only tools the client uses of this server (Codex `enabled_tools`).
    EnabledTools(Vec<String>),
    /// Tools of this server the client switched off (Codex `disabled_tools`).
    DisabledTools(Vec<String>),
    /// Approval settings for the server's tools, as written (Codex
    /// `default_tools_approval_mode`, `tools.<tool>.approval_mode`).
    Approvals(Vec<String>),
}

impl fmt::Display for Flag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Flag::Oauth => f.write_str("oauth"),
            Flag::Disabled => f.write_str("disabled"),
            Flag::AlwaysLoad => f.write_str("always-load"),
            Flag::HeadersHelper => f.write_str("headers-helper"),
            Flag::EnvFile => f.write_str("env-file"),
            Flag::ForwardsEnv => f.write_str("forwards-env"),
            Flag::Input(id) => write!(f, "input:{id}"),
            Flag::VariablesRewritten => f.write_str("variables-rewritten"),
            Flag::ClientVariable(v) => write!(f, "client-variable:{v}"),
            Flag::Unapproved(_) => f.write_str("unapproved"),
            Flag::Tracked(_) => f.write_str("tracked-by-git"),
            Flag::EnabledTools(_) => f.write_str("enabled-tools"),
            Flag::DisabledTools(_) => f.write_str("disabled-tools"),
            Flag::Approvals(_) => f.write_str("tool-approvals"),
        }
    }
}

impl Serialize for Flag {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// Which file a registration came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Origin {
    pub client: Client,
    pub file: PathBuf,
    pub scope: Scope,
    /// The project a `local` or `project` registration belongs to, when the file says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub project: Option<PathBuf>,
}

impl Origin {
    pub fn new(client: Client, file: &Path, scope: Scope) -> Origin {
        Origin {
            client,
            file: file.to_path_buf(),
            scope,
            project: None,
        }
    }
}

/// A registration a server behind mws came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    #[serde(flatten)]
    pub origin: Origin,
    /// Its name in that client.
    pub name: String,
    pub flags: Vec<Flag>,
}

/// One server registration found in a client's file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    #[serde(flatten)]
    pub origin: Origin,
    pub name: String,
    pub transport: Transport,
    pub flags: Vec<Flag>,
}

/// An entry that was not understood, with why; the rest of its file is still read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Skipped {
    #[serde(flatten)]
    pub origin: Origin,
    pub name: String,
    pub reason: String,
}

/// A file that could not be read or parsed; nothing in it is imported, the other files are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("{}{}: {message}", file.display(), position(*line, *column))]
pub struct FileError {
    pub client: Client,
    pub file: PathBuf,
    /// 1-based, when the parser knows where.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<usize>,
    pub message: String,
}

fn position(line: Option<usize>, column: Option<usize>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(":{l}:{c}"),
        (Some(l), None) => format!(":{l}"),
        _ => String::new(),
    }
}

/// Everything the readers found; readers push into it.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Findings {
    /// Every file that exists among those looked at: `read`, `error`, or `untrusted` (a Codex
    /// project file the user file does not trust; not imported).
    pub files: Vec<FileStatus>,
    pub found: Vec<Found>,
    pub skipped: Vec<Skipped>,
    pub errors: Vec<FileError>,
}

/// One file looked at and what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileStatus {
    pub client: Client,
    pub file: PathBuf,
    pub status: &'static str,
    /// `backup::digest` of the text the plan was made from: `--apply` changes nothing in a file
    /// that differs from it.
    #[serde(skip)]
    pub digest: Option<String>,
}

/// 1-based line and column of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}
