//! `mws promote`.

use std::path::Path;

use super::{CmdResult, not_built};
use crate::cli::PromoteArgs;

pub fn run(_config: Option<&Path>, _args: PromoteArgs) -> CmdResult {
    not_built("promote")
}
