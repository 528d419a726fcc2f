//! `mws serve`.

use std::path::Path;

use super::{CmdResult, not_built};
use crate::cli::ServeArgs;

pub fn run(_config: Option<&Path>, _args: ServeArgs) -> CmdResult {
    not_built("serve")
}
