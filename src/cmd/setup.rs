//! `mws setup import`: find the HOME and working directory, read the clients' configs, print the
//! plan (tables or JSON, secrets masked). Glue only; must not write any file (dry run).

use std::io::Write;

use anyhow::Context;

use super::CmdResult;
use crate::cli::SetupImportArgs;
use crate::setup::{plan, render, sources};

pub fn import(args: SetupImportArgs) -> CmdResult {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .context("cannot find the client configs: HOME is not set")?;
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    let env = sources::Env::from_process(home.into(), cwd);
    let plan = plan::plan(sources::scan(&env));
    for e in &plan.errors {
        eprintln!("mws setup import: {e} (its servers are left out; the other files were read)");
    }
    let out = if args.json {
        render::json(&plan)
    } else {
        render::text(&plan, &env.home)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(0)
}
