//! `mws report` figures (docs/working-set.md): `store::report` rows, a catalog in, a `Report` out,
//! rendered as tables (`render`) or serialized as the documented JSON shape. Pure: no I/O, no
//! clock (`now` is an input), no SQL.

pub mod aggregate;
mod compute;
pub mod format;
pub mod hit_rate;
pub mod render;
pub mod shape;
pub mod tokens;

use std::collections::HashMap;

use serde::Serialize;
use serde_json::Value;
use time::OffsetDateTime;

use crate::catalog::Catalog;
use crate::clock;
use crate::store::report::{
    ClientRow, ProjectRow, RefusedRow, SearchRow, Span, ToolUsageRow, WorkingSetRow,
};
use crate::upstream::{ServerState, UpstreamStatus};

pub use compute::compute;
pub use hit_rate::HitRate;
pub use shape::{
    Calls, Checks, ClientOut, ListedTool, ProjectOut, ProjectsOut, Report, Searches, Sizes,
    ToolOut, Usage, Via, WindowOut,
};
pub use tokens::{Size, Tokenizer, TokenizerKind};

/// Most promotion candidates shown. Raising it lengthens the table, not the work.
pub const MAX_CANDIDATES: usize = 10;

/// The meta-tools the proxy lists ahead of the working set.
pub const META_TOOLS: &[&str] = &crate::catalog::exposed::META_NAMES;

/// The report window: the last `duration`, named as the user wrote it (`7d`).
#[derive(Debug, Clone, PartialEq)]
pub struct Window {
    pub label: String,
    pub duration: time::Duration,
}

impl Window {
    /// Parses `24h`, `7d`, `30d`, `2w`: a whole number and a unit (h, d or w).
    pub fn parse(s: &str) -> Result<Window, String> {
        let bad = || {
            format!("--since {s:?}: expected a number and a unit h, d or w, like 24h, 7d or 30d")
        };
        let s = s.trim();
        let unit = s.chars().last().ok_or_else(bad)?;
        let n: i64 = s[..s.len() - unit.len_utf8()].parse().map_err(|_| bad())?;
        if n <= 0 {
            return Err(bad());
        }
        let duration = match unit {
            'h' => time::Duration::hours(n),
            'd' => time::Duration::days(n),
            'w' => time::Duration::weeks(n),
            _ => return Err(bad()),
        };
        Ok(Window {
            label: s.to_string(),
            duration,
        })
    }

    /// `[now - duration, now]` in the stored timestamp form.
    pub fn span(&self, now: OffsetDateTime) -> Span {
        Span {
            since: clock::fmt(now - self.duration),
            until: clock::fmt(now),
        }
    }
}

/// What is known of the upstream right now (from a live connection, else nothing).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamInfo {
    /// The configured URL, or the command line of a stdio child.
    pub target: String,
    pub reachable: bool,
    /// `2026-07-28 (stateless)` or `2025 (session)`.
    pub era: Option<String>,
    pub protocol_version: Option<String>,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub error: Option<String>,
    /// Where the catalog in this report came from: `live`, `memory`, `catalog.json` or `none`.
    pub catalog_source: String,
    /// With `servers`: each server, in config order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub servers: Vec<ServerInfo>,
}

impl UpstreamInfo {
    /// What `status` says of the upstream at `target`, with where the catalog came from.
    pub fn of(target: String, status: &UpstreamStatus, catalog_source: &str) -> UpstreamInfo {
        let info = status.server_info.as_ref();
        let field = |k: &str| {
            info.and_then(|i| i.get(k))
                .and_then(|v| v.as_str())
                .map(str::to_string)
        };
        UpstreamInfo {
            target,
            reachable: status.reachable,
            era: status.era.map(|e| e.as_str().to_string()),
            protocol_version: status.protocol_version.clone(),
            server_name: field("name"),
            server_version: field("version"),
            error: status.last_error.clone(),
            catalog_source: catalog_source.to_string(),
            servers: status.servers.iter().map(ServerInfo::of).collect(),
        }
    }
}

/// One server behind mws (`servers`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerInfo {
    pub name: String,
    pub target: String,
    /// `up`, `down` or `not started`.
    pub status: String,
    pub era: Option<String>,
    /// Its tools in the catalog being served.
    pub tools: usize,
    pub error: Option<String>,
    /// Names shortened to fit clients' 64-character limit: `{exposed, name}`.
    pub shortened: Vec<Shortened>,
}

impl ServerInfo {
    fn of(s: &ServerState) -> ServerInfo {
        let status = if s.start_error.is_some() {
            "not started"
        } else if s.status.reachable {
            "up"
        } else {
            "down"
        };
        ServerInfo {
            name: s.name.clone(),
            target: s.target.clone(),
            status: status.into(),
            era: s.status.era.map(|e| e.as_str().to_string()),
            tools: s.tools,
            error: s
                .start_error
                .clone()
                .or_else(|| s.status.last_error.clone()),
            shortened: s
                .shortened
                .iter()
                .map(|(exposed, name)| Shortened {
                    exposed: exposed.clone(),
                    name: name.clone(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Shortened {
    /// The name clients see.
    pub exposed: String,
    /// `<server>__<tool>` in full.
    pub name: String,
}

/// Everything `compute` reads.
pub struct Inputs<'a> {
    pub now: OffsetDateTime,
    pub window: &'a Window,
    pub tokenizer: &'a Tokenizer,
    pub catalog: &'a Catalog,
    /// The `tools/list` result as the proxy serves it (`server::tools_list::choose`), and its mode.
    pub listed: &'a [Value],
    pub mode: &'a crate::listed::Mode,
    /// The config's `pins` (listed even when not in the working set).
    pub pins: &'a [String],
    pub working_set: &'a [WorkingSetRow],
    pub usage: &'a [ToolUsageRow],
    /// Last success at any time, per tool.
    pub last_success: &'a HashMap<String, String>,
    pub clients: &'a [ClientRow],
    pub sessions: u64,
    pub searches: &'a SearchRow,
    /// Calls the proxy refused in the window (`Checks`).
    pub refused: &'a RefusedRow,
    /// Catalog tools the config's policy hides (`listed::hidden_by_policy`).
    pub policy_hidden: usize,
    /// Successful non-`call_tool` calls inside the listed intervals (`hit_rate`).
    pub hits: u64,
    pub upstream: &'a UpstreamInfo,
    /// Whether search ranks with the configured embedder, or why not (`None`: not configured).
    pub semantic_ranking: Option<String>,
    /// Calls per known project in the window, and `promote.perProject`.
    pub projects: &'a [ProjectRow],
    pub per_project: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_parse() {
        for (input, want) in [
            ("24h", Ok(time::Duration::hours(24))),
            ("7d", Ok(time::Duration::days(7))),
            ("30d", Ok(time::Duration::days(30))),
            ("2w", Ok(time::Duration::weeks(2))),
        ] {
            assert_eq!(Window::parse(input).map(|w| w.duration), want, "{input}");
        }
        for bad in ["", "d", "7", "7y", "-1d", "0h", "1.5d"] {
            assert_eq!(
                Window::parse(bad),
                Err(format!(
                    "--since {bad:?}: expected a number and a unit h, d or w, like 24h, 7d or 30d"
                )),
                "{bad}"
            );
        }
    }
}
