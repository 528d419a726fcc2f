//! The shape of `mws report --json` (documented in docs/working-set.md): plain serializable types,
//! camelCase keys. Changing a field here changes a user-facing interface.

use serde::Serialize;
use serde_json::Value;

use super::{HitRate, Size, UpstreamInfo};

/// The whole report; its JSON form is documented in the README ("mws report --json").
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub generated_at: String,
    pub window: WindowOut,
    pub tokenizer: &'static str,
    pub upstream: UpstreamInfo,
    pub sizes: Sizes,
    /// Every tool listed directly, or the meta-tools and the working set, and why.
    pub listing_mode: ListingMode,
    pub listed: Vec<ListedTool>,
    pub candidates: Vec<ToolOut>,
    pub searches: Searches,
    pub hit_rate: HitRate,
    pub calls: Calls,
    pub clients: Vec<ClientOut>,
    pub projects: ProjectsOut,
    pub tools: Vec<ToolOut>,
    pub checks: Checks,
}

/// The checks before a call is sent (config `policy` and `validation`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checks {
    /// Catalog tools the policy hides.
    pub policy_hidden: usize,
    /// Calls in the window refused because their arguments did not match the tool's schema.
    pub invalid_args: u64,
    /// Calls in the window refused because the policy excludes the tool.
    pub denied_by_policy: u64,
    /// Calls in the window whose result was shaped to fit `results.maxTokens`.
    pub results_shaped: u64,
    /// Bytes of text those results were spared (the results themselves are never stored).
    pub bytes_saved: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ListingMode {
    pub all: bool,
    pub why: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct WindowOut {
    pub label: String,
    pub since: String,
    pub until: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sizes {
    pub upstream: Size,
    pub listed: Size,
    pub saved: Size,
    /// `saved.tokens / upstream.tokens`; `None` with no catalog.
    pub saved_token_share: Option<f64>,
    /// The largest `search_tools` reply in the window (bytes; its text is never stored).
    pub largest_search_reply_bytes: u64,
}

/// One tool of the `tools/list` result as served, with why it is there and its use.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedTool {
    pub name: String,
    /// 1-based place in the listing; `None` for a working-set tool the upstream does not list.
    pub position: Option<usize>,
    /// `meta-tool`, or `working_set.reason` (`promoted`, `pin`, `pin-file`).
    pub reason: String,
    pub since: Option<String>,
    pub bytes: usize,
    pub tokens: usize,
    pub in_catalog: bool,
    #[serde(flatten)]
    pub usage: Usage,
}

/// One tool's calls in the window.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    pub calls: u64,
    pub ok: u64,
    pub errors: u64,
    pub sessions: u64,
    pub ok_sessions: u64,
    pub via: Via,
    pub last_call: Option<String>,
    /// At any time, not only in the window.
    pub last_success: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Via {
    pub direct: u64,
    pub call_tool: u64,
    pub transcript: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolOut {
    pub name: String,
    pub listed: bool,
    pub in_catalog: bool,
    #[serde(flatten)]
    pub usage: Usage,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Searches {
    pub count: u64,
    pub zero_results: u64,
    pub zero_result_share: Option<f64>,
    pub avg_reply_bytes: Option<u64>,
    pub max_reply_bytes: u64,
    /// Searches per mode (`exact`, `backend`, `ranked`, `catalog`).
    pub by_mode: serde_json::Map<String, Value>,
    /// With `search.semantic` in the config: whether the model answers now, or why search ranks
    /// by keywords only (`mws doctor`'s `search` line). `mws report` sets it; `compute` leaves it
    /// `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic_ranking: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Calls {
    pub total: u64,
    pub ok: u64,
    pub errors: u64,
    pub sessions: u64,
    pub via: Via,
}

/// Working sets per project (docs/working-set.md#per-project): the setting, and the window's
/// calls per known project with the tools each lists of its own.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectsOut {
    pub per_project: bool,
    /// Successful calls in the window whose project is known.
    pub ok_with_project: u64,
    pub projects: Vec<ProjectOut>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProjectOut {
    pub project: String,
    pub calls: u64,
    pub ok: u64,
    pub sessions: u64,
    /// Tools listed in this project's sessions beside those used everywhere.
    pub own_tools: u64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientOut {
    /// `None` when the client did not say who it was.
    pub client: Option<String>,
    pub calls: u64,
    pub ok: u64,
    pub errors: u64,
    pub sessions: u64,
}
