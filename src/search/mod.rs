//! Search over the full upstream catalog (SPEC §6): tokenisation, BM25F ranking, modes and the reply
//! budget. Pure: no I/O, no clock.

use std::collections::{BTreeMap, HashSet};

use serde_json::{Value, json};

use crate::catalog::Catalog;

/// Largest `search_tools` reply in bytes.
pub const REPLY_BUDGET: usize = 6 * 1024;

/// Options that come from the config.
#[derive(Debug, Clone, Default)]
pub struct SearchOptions {
    /// `searchAliases`: extra synonyms merged over the built-in table.
    pub aliases: BTreeMap<String, Vec<String>>,
    /// `backendHints`: labels per backend prefix.
    pub backend_hints: BTreeMap<String, String>,
}

/// An index over one catalog version. Build once per version, query many times.
pub struct SearchIndex {
    catalog: Catalog,
}

/// A reply as `search_tools` returns it.
#[derive(Debug, Clone)]
pub struct Reply {
    /// `{"mode", "results": [...], "more"?}`.
    pub json: Value,
    /// `exact` | `backend` | `ranked` | `catalog`.
    pub mode: &'static str,
    pub result_count: usize,
}

impl SearchIndex {
    pub fn build(catalog: &Catalog, _options: &SearchOptions) -> SearchIndex {
        SearchIndex {
            catalog: catalog.clone(),
        }
    }

    /// Runs one query. `listed` holds the names currently listed (marked in replies).
    pub fn search(&self, query: &str, listed: &HashSet<String>) -> Reply {
        // Placeholder until the search issue lands: exact name, else the names.
        if let Some(t) = self.catalog.get(query.trim()) {
            return Reply {
                json: json!({"mode": "exact", "results": [t]}),
                mode: "exact",
                result_count: 1,
            };
        }
        let names: Vec<Value> = self
            .catalog
            .names()
            .map(|n| json!({"name": n, "listed": listed.contains(n)}))
            .collect();
        Reply {
            result_count: names.len(),
            json: json!({"mode": "catalog", "results": names}),
            mode: "catalog",
        }
    }
}
