//! `mws doctor`.

use std::path::Path;

use super::{CmdResult, not_built};
use crate::cli::DoctorArgs;

pub fn run(_config: Option<&Path>, _args: DoctorArgs) -> CmdResult {
    not_built("doctor")
}
