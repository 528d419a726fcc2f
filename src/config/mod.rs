//! Config (docs/configuration.md): the file, its defaults, where it is. Errors name the file, the
//! field and what was expected. Must not do I/O beyond reading the one config file.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub mod checked;
mod code_mode;
mod errors;
pub mod history;
pub(crate) mod jsonc;
mod paths;
mod raw;
mod results;
mod safety;
pub mod schedule;
pub mod search;
pub mod servers;
pub mod team_store;
mod validate;

pub use checked::MIN_TIMEOUT_MS;
pub use code_mode::CodeMode;
pub use errors::Problem;
pub use paths::{
    default_config_path, default_state_dir, default_transcripts, expand_tilde, resolve_path,
};
pub use results::Results;
pub use safety::{Policy, ReadOnly, Validation};
pub use servers::Server;
pub use validate::{is_loopback, validate};

/// Default listen port.
pub const DEFAULT_PORT: u16 = 4484;
/// The commented default config that `mws init` writes; it parses to `Config::default()`.
pub const DEFAULT_TEXT: &str = include_str!("default.jsonc");

/// Default name the client registered the proxy under.
pub const DEFAULT_SERVER_NAME: &str = "toolbox";

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Config {
    #[serde(deserialize_with = "checked::object")]
    pub upstream: Upstream,
    /// Several upstreams by name (docs/configuration.md#servers); empty means `upstream` alone.
    #[serde(deserialize_with = "servers::servers")]
    pub servers: Vec<Server>,
    #[serde(deserialize_with = "checked::object")]
    pub listen: Listen,
    #[serde(deserialize_with = "checked::dir_path")]
    pub state_dir: PathBuf,
    pub server_name: String,
    pub backend_hints: BTreeMap<String, String>,
    pub pins: Vec<String>,
    pub pin_files: Vec<String>,
    #[serde(deserialize_with = "checked::object")]
    pub promote: Promote,
    #[serde(deserialize_with = "checked::objects")]
    pub transcripts: Vec<TranscriptRoot>,
    #[serde(deserialize_with = "checked::object")]
    pub timeouts: Timeouts,
    pub compact_descriptions: bool,
    #[serde(deserialize_with = "checked::aliases")]
    pub search_aliases: BTreeMap<String, Vec<String>>,
    /// What `tools/list` shows: `auto`, `working-set` or `all` (`crate::listed::mode`).
    pub listing: Listing,
    /// In `auto`, list every tool while the whole catalog is under this many tokens (0: off).
    pub list_all_below_tokens: u32,
    /// Whether a session's listing follows promotions and new servers (`live`) or holds from its
    /// first `tools/list` (`session`; `server::proxy::held_listing`).
    pub listing_updates: ListingUpdates,
    /// Arguments checked against the tool's `inputSchema` before a call is sent.
    pub validation: Validation,
    /// Which upstream tools may be listed, found and called.
    #[serde(deserialize_with = "checked::object")]
    pub policy: Policy,
    /// Ranking by meaning beside keywords (`search.semantic`); nothing changes until it is set.
    #[serde(deserialize_with = "checked::object")]
    pub search: search::Search,
    /// Big tool results: shaped over `results.maxTokens`, kept in memory for paging.
    #[serde(deserialize_with = "checked::object")]
    pub results: Results,
    /// Code mode: `run_script` and the limits of its sandbox.
    #[serde(deserialize_with = "checked::object")]
    pub code_mode: CodeMode,
    /// The team's shared history (docs/teams.md); `None`: this machine's state.db only.
    #[serde(deserialize_with = "checked::object")]
    pub store: team_store::TeamStore,
    /// Whose history this is in a team database; `None`: the OS login name.
    pub user: Option<String>,
    /// Days of usage history kept (`config::history`); 0 keeps everything; unset: the default
    /// or the longest promotion window, whichever is longer (`Config::history_days`).
    #[serde(rename = "historyDays")]
    pub history_days_set: Option<u32>,
}

/// The listing mode (docs/working-set.md#what-is-listed).
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum Listing {
    /// Every tool when that costs fewer tokens, else the meta-tools and the working set.
    #[default]
    Auto,
    WorkingSet,
    All,
}

/// When a session's listing changes (docs/working-set.md#a-listing-stable-within-a-session).
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ListingUpdates {
    /// A session keeps its first listing, less the tools that can no longer be called.
    #[default]
    Session,
    /// Every session sees every change: promotions and new servers' tools.
    Live,
}

/// Where the upstream MCP server is: Streamable HTTP or a stdio child.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(try_from = "raw::RawUpstream")]
pub enum Upstream {
    Http(HttpUpstream),
    Stdio(StdioUpstream),
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpUpstream {
    pub url: String,
    /// Header values may hold `${VAR}`, expanded from the environment when the request is made.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// An OAuth login's settings (`mws login`); tokens are sent whether or not this is set.
    #[serde(default)]
    pub oauth: Option<crate::auth::OAuthConfig>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StdioUpstream {
    pub command: String,
    #[serde(default)]
    pub args: Vec<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Listen {
    pub host: String,
    pub port: u16,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Promote {
    pub min_sessions: u32,
    pub min_calls: u32,
    pub window_days: u32,
    pub keep_days: u32,
    pub pin_decay_days: u32,
    /// When `mws serve` runs ingest + promote by itself (`config::schedule`).
    pub schedule: schedule::Schedule,
    /// Team priors: list a tool that at least this many teammates used successfully within
    /// `windowDays` (needs `store.postgres`); 0 is off.
    pub team: u32,
    /// Working sets per project (docs/working-set.md#per-project): a session whose project is
    /// known lists the tools used everywhere plus its project's own; off, every session lists
    /// the user-wide set.
    pub per_project: bool,
    /// A promoted tool with successful calls in at least this many projects within `windowDays`
    /// is listed in every project's sessions (`perProject`). Raising it keeps more tools to the
    /// projects that use them; 1 lists every promoted tool everywhere.
    pub everywhere_projects: u32,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
pub enum TranscriptKind {
    #[serde(rename = "claude-code")]
    ClaudeCode,
    #[serde(rename = "codex")]
    Codex,
}

impl TranscriptKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TranscriptKind::ClaudeCode => "claude-code",
            TranscriptKind::Codex => "codex",
        }
    }
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TranscriptRoot {
    #[serde(rename = "type")]
    pub kind: TranscriptKind,
    #[serde(deserialize_with = "checked::dir_path")]
    pub root: PathBuf,
    /// Names the upstream had in the client (default: the config's `serverName`).
    #[serde(default)]
    pub server_names: Vec<String>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Timeouts {
    /// At least `MIN_TIMEOUT_MS`, like `call_ms`.
    #[serde(deserialize_with = "checked::timeout_ms")]
    pub list_ms: u64,
    #[serde(deserialize_with = "checked::timeout_ms")]
    pub call_ms: u64,
    /// The budget of a server's first listing on a new connection, its start included (a stdio
    /// child's cold start, an `initialize` that takes its time); `list_ms` afterwards.
    #[serde(deserialize_with = "checked::timeout_ms")]
    pub first_start_ms: u64,
    /// 0 is allowed: the catalog is then listed afresh for every request.
    pub catalog_ttl_ms: u64,
}

impl Default for Upstream {
    fn default() -> Self {
        Upstream::Http(HttpUpstream {
            url: "http://127.0.0.1:4483/mcp".into(),
            headers: BTreeMap::new(),
            oauth: None,
        })
    }
}

impl Default for Listen {
    fn default() -> Self {
        Listen {
            host: "127.0.0.1".into(),
            port: DEFAULT_PORT,
        }
    }
}

impl Default for Promote {
    fn default() -> Self {
        Promote {
            min_sessions: 2,
            min_calls: 1,
            window_days: 30,
            keep_days: 60,
            pin_decay_days: 90,
            schedule: schedule::DEFAULT,
            team: 0,
            per_project: true,
            everywhere_projects: 2,
        }
    }
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            list_ms: 5_000,
            call_ms: 120_000,
            first_start_ms: 60_000,
            catalog_ttl_ms: 30_000,
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            upstream: Upstream::default(),
            servers: Vec::new(),
            listen: Listen::default(),
            state_dir: default_state_dir(),
            server_name: DEFAULT_SERVER_NAME.into(),
            backend_hints: BTreeMap::new(),
            pins: Vec::new(),
            pin_files: Vec::new(),
            promote: Promote::default(),
            transcripts: default_transcripts(),
            timeouts: Timeouts::default(),
            compact_descriptions: false,
            search_aliases: BTreeMap::new(),
            listing: Listing::Auto,
            list_all_below_tokens: 0,
            listing_updates: ListingUpdates::Session,
            validation: Validation::default(),
            policy: Policy::default(),
            search: search::Search::default(),
            results: Results::default(),
            code_mode: CodeMode::default(),
            store: team_store::TeamStore::default(),
            user: None,
            history_days_set: None,
        }
    }
}

impl Config {
    /// Each server's `description`, by server name (search ranks with it: `search::purpose`).
    pub fn server_purposes(&self) -> BTreeMap<String, String> {
        self.servers
            .iter()
            .filter_map(|s| Some((s.name.clone(), s.description.clone()?)))
            .collect()
    }

    /// Names under which this proxy's calls appear in a transcript root's tool names.
    pub fn server_names<'a>(&'a self, root: &'a TranscriptRoot) -> Vec<&'a str> {
        if root.server_names.is_empty() {
            vec![self.server_name.as_str()]
        } else {
            root.server_names.iter().map(String::as_str).collect()
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.state_dir.join("state.db")
    }
    pub fn catalog_path(&self) -> PathBuf {
        self.state_dir.join("catalog.json")
    }
    pub fn working_set_path(&self) -> PathBuf {
        self.state_dir.join("working-set.json")
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("{path}: cannot read: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// A problem at a known place in the file: `path:line:column: message`.
    #[error("{path}:{line}:{column}: {message}")]
    At {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

/// A loaded config and the file it came from (`found` is false for all-defaults when no file exists).
#[derive(Debug, Clone)]
pub struct Loaded {
    pub config: Config,
    pub path: PathBuf,
    pub found: bool,
}

/// Loads the config at `resolve_path(flag)`; a missing file means all defaults. The result is
/// checked (`validate`) and has `~` expanded.
pub fn load(flag: Option<&Path>) -> Result<Loaded, ConfigError> {
    let path = resolve_path(flag);
    let (mut config, found) = match std::fs::read_to_string(&path) {
        Ok(text) => {
            let config = parse(&text).map_err(|p| located(&path, p))?;
            (config, true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Config::default(), false),
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    validate(&config).map_err(|message| ConfigError::Invalid {
        path: path.clone(),
        message,
    })?;
    finish(&mut config);
    Ok(Loaded {
        config,
        path,
        found,
    })
}

fn located(path: &Path, p: Problem) -> ConfigError {
    if p.line == 0 {
        ConfigError::Invalid {
            path: path.to_path_buf(),
            message: p.message,
        }
    } else {
        ConfigError::At {
            path: path.to_path_buf(),
            line: p.line,
            column: p.column,
            message: p.message,
        }
    }
}

/// Parses config text (JSON, or JSONC with comments and trailing commas; a leading UTF-8 byte
/// order mark is skipped). The problem names the field path and what was expected, with the line
/// and column.
pub fn parse(text: &str) -> Result<Config, Problem> {
    let plain = jsonc::strip(text.strip_prefix('\u{feff}').unwrap_or(text));
    let mut de = serde_json::Deserializer::from_str(&plain);
    let checked::Object(config) = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        errors::describe(&path, e.inner())
    })?;
    de.end().map_err(|e| errors::describe("", &e))?;
    servers::one_of(&plain)?;
    Ok(config)
}

/// Expands `~` in every path field and `pinFiles` glob.
fn finish(config: &mut Config) {
    servers::prefix_pins(&mut config.pins, &config.servers);
    config.state_dir = expand_tilde(&config.state_dir);
    for t in &mut config.transcripts {
        t.root = expand_tilde(&t.root);
    }
    for p in &mut config.pin_files {
        *p = expand_tilde(Path::new(p.as_str()))
            .to_string_lossy()
            .into_owned();
    }
    if let Upstream::Stdio(s) = &mut config.upstream
        && let Some(cwd) = &s.cwd
    {
        s.cwd = Some(expand_tilde(cwd));
    }
}

#[cfg(test)]
mod tests;
