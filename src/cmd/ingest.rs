//! `mws ingest`.

use std::path::Path;

use super::{CmdResult, not_built};
use crate::cli::IngestArgs;

pub fn run(_config: Option<&Path>, _args: IngestArgs) -> CmdResult {
    not_built("ingest")
}
