//! Reading client transcripts into the store (SPEC §7). Adapters only parse; the driver here walks
//! the roots, reads files incrementally and hands calls to the store.

use serde::Serialize;

use crate::config::Config;
use crate::store::Store;

/// What one ingest run did (printed by `mws ingest`, `--json` for machines).
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct IngestSummary {
    pub files: u64,
    pub bytes: u64,
    pub new_calls: u64,
    pub duplicates: u64,
    pub skipped_lines: u64,
    /// `(path, message)` per file or root that could not be read.
    pub errors: Vec<(String, String)>,
}

/// Ingests every configured transcript root into `store`. `progress` shows a bar on a terminal.
pub fn ingest_all(
    _config: &Config,
    _store: &mut Store,
    _progress: bool,
) -> anyhow::Result<IngestSummary> {
    // Placeholder until the ingest adapters land.
    Ok(IngestSummary::default())
}
