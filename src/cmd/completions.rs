//! `mws completions <shell>`: writes clap_complete's completion script for the command line in
//! `cli.rs` on stdout. Reads no config and touches no state.

use std::io::Write;

use clap::CommandFactory;

use super::CmdResult;
use crate::cli::{Cli, CompletionsArgs};

pub fn run(args: CompletionsArgs) -> CmdResult {
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "mws", &mut buf);
    let mut out = std::io::stdout().lock();
    out.write_all(&buf)?;
    out.flush()?;
    Ok(0)
}
