//! `mws demo-upstream` (hidden): the built-in demo MCP server over stdio, used by `serve --demo`.

use super::{CmdResult, not_built};

pub fn run() -> CmdResult {
    not_built("demo-upstream")
}
