//! `mws search`.

use std::path::Path;

use super::{CmdResult, not_built};
use crate::cli::SearchArgs;

pub fn run(_config: Option<&Path>, _args: SearchArgs) -> CmdResult {
    not_built("search")
}
