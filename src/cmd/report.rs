//! `mws report`.

use std::path::Path;

use super::{CmdResult, not_built};
use crate::cli::ReportArgs;

pub fn run(_config: Option<&Path>, _args: ReportArgs) -> CmdResult {
    not_built("report")
}
