//! `mws init`.

use std::path::Path;

use super::{CmdResult, not_built};
use crate::cli::InitArgs;

pub fn run(_config: Option<&Path>, _args: InitArgs) -> CmdResult {
    not_built("init")
}
