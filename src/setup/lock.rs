//! The one lock `mws setup import --apply` and `mws setup undo` hold while they change files:
//! `stateDir/setup.lock`, locked with the OS's advisory file lock, so two runs never interleave
//! their edits (the second is refused at once, not queued). Must not remove the lock file: a
//! run that removed it could let a third run lock a new file while the second still holds the
//! old one.

use std::path::{Path, PathBuf};

/// The lock file's name under the state dir.
const FILE: &str = "setup.lock";

/// Held while the run lasts; dropping it unlocks.
#[derive(Debug)]
pub struct Held {
    _file: std::fs::File,
}

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error(
        "another `mws setup import --apply` or `mws setup undo` is running (it holds {0}); wait \
         for it to finish, then run this again"
    )]
    Busy(PathBuf),
    #[error("cannot lock {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Locks `state_dir/setup.lock` (creating the state dir, 0700, and the file, 0600), or says
/// who holds it.
pub fn hold(state_dir: &Path) -> Result<Held, LockError> {
    let path = state_dir.join(FILE);
    let io = |source| LockError::Io {
        path: path.clone(),
        source,
    };
    let file = crate::private_file::open_lock(&path).map_err(io)?;
    match file.try_lock() {
        Ok(()) => Ok(Held { _file: file }),
        Err(std::fs::TryLockError::WouldBlock) => Err(LockError::Busy(path)),
        Err(std::fs::TryLockError::Error(e)) => Err(io(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        let first = hold(&state).unwrap();
        let err = hold(&state).unwrap_err().to_string();
        assert!(
            err.starts_with("another `mws setup import --apply` or `mws setup undo` is running"),
            "{err}"
        );
        assert!(err.contains("setup.lock"), "{err}");
        drop(first);
        hold(&state).unwrap();
    }
}
