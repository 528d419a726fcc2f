//! `mws demo-upstream` (hidden): the built-in demo MCP server over stdio, used by `serve --demo`.

use super::CmdResult;

pub fn run() -> CmdResult {
    let stdin = std::io::stdin().lock();
    let stdout = std::io::stdout().lock();
    crate::demo::serve_lines(stdin, stdout)?;
    Ok(0)
}
