//! `mws init`: writes the commented default config (0600, parent dirs created), refuses to
//! overwrite one without `--force`, creates the state dir and database, prints the paths.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
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
    write_private(&path, DEFAULT_TEXT)
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

/// Writes `text` to `path` with mode 0600, creating parent directories (0700) as needed.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(dir) = path.parent()
        && !dir.as_os_str().is_empty()
        && !dir.exists()
    {
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    // An existing file keeps its mode through open(): tighten it.
    f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}
