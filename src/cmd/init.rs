//! `mws init`: writes the commented default config (0600, parent dirs created), refuses to
//! overwrite one without `--force`, creates the state dir and database, prints the paths.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use super::{CmdResult, UsageError};
use crate::cli::InitArgs;
use crate::config::{self, DEFAULT_TEXT};
use crate::store::Store;
use crate::term;

pub fn run(flag: Option<&Path>, args: InitArgs) -> CmdResult {
    let path = config::resolve_path(flag);
    if path.exists() && !args.force {
        return Err(UsageError(format!(
            "{}: already exists; run `mws init --force` to overwrite it with the defaults",
            path.display()
        ))
        .into());
    }
    crate::private_file::write(&path, DEFAULT_TEXT.as_bytes())
        .with_context(|| format!("{}: cannot write the config", path.display()))?;
    // Load what was just written, so that the state dir is the one every other command will use.
    let loaded = config::load(Some(&path))?;
    let db = loaded.config.db_path();
    Store::open(&db)?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "config:    {}", term::path(&path))?;
    writeln!(out, "state dir: {}", term::path(&loaded.config.state_dir))?;
    writeln!(out, "database:  {}", term::path(&db))?;
    writeln!(
        out,
        "next: set \"upstream\" in the config, then run `mws serve`"
    )?;
    Ok(0)
}
