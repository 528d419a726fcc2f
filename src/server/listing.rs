//! What `tools/list` shows a client: the meta-tools, then the working-set tools the upstream
//! lists, slimmed. Pure; shared by the proxy and `mws report` (which counts its tokens).

use serde_json::Value;

use crate::catalog::Catalog;
use crate::config::Config;

/// The tools a client is sent, in order: `search_tools`, `call_tool`, then each working-set tool
/// present in `catalog`, in working-set order.
pub fn listed_tools(catalog: &Catalog, working_set: &[String], _config: &Config) -> Vec<Value> {
    // Placeholder until the proxy issue lands: no meta-tools, no slimming.
    working_set
        .iter()
        .filter_map(|n| catalog.get(n).cloned())
        .collect()
}
