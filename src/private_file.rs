//! The one writer of mws's private files (`catalog.json`, `upstream.json`, `working-set.json`,
//! the config `mws init` writes), the one opener of lock files, the one maker of private
//! directories (the state dir, 0700), and the check that the state dir is private. A file is
//! written whole into a new temp file with an unpredictable name, created exclusively without
//! following links (mode 0600), synced, then renamed over the target: a reader never sees half a
//! file, and a link planted in the directory is never written through. Must not open `state.db` (see
//! `store::create_private`).

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The state dir is writable by other users: they could replace the files mws writes there.
#[derive(Debug, thiserror::Error)]
#[error(
    "state dir {dir} is writable by other users (mode {mode:o}): they could replace the files mws \
     keeps there; run `chmod go-w {dir}` (or `chmod 700 {dir}`)"
)]
pub struct OpenDirError {
    pub dir: String,
    pub mode: u32,
}

/// Refuses a directory that its group or others may write to. A missing directory passes (it is
/// created 0700).
pub fn check_dir(dir: &Path) -> Result<(), OpenDirError> {
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() && m.permissions().mode() & 0o022 != 0 => Err(OpenDirError {
            dir: dir.display().to_string(),
            mode: m.permissions().mode() & 0o7777,
        }),
        _ => Ok(()),
    }
}

/// A file written and synced under a temp name, not yet in place. Dropping it without `commit`
/// removes the temp file.
pub struct Pending {
    tmp: PathBuf,
    target: PathBuf,
}

impl Pending {
    /// Renames the temp file over the target (a link at the target is replaced, not followed).
    pub fn commit(self) -> std::io::Result<()> {
        std::fs::rename(&self.tmp, &self.target)?;
        // Renamed: nothing left for Drop to remove.
        std::mem::forget(self);
        Ok(())
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Creates `dir` and any missing parents with mode 0700 (an existing directory is left as it is:
/// `check_dir` judges it).
pub fn create_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

/// Opens (creating it 0600, and its directory 0700) the lock file `path`, without following a
/// link planted there, for the OS's advisory lock; the caller locks it. A lock file is never
/// removed: a run that removed it could let another lock a new file while one still holds the old.
pub fn open_lock(path: &Path) -> std::io::Result<std::fs::File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir(dir)?;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
}

/// Writes `body` to `target` (see the module doc), creating its parent directory (0700) first.
pub fn write(target: &Path, body: &[u8]) -> std::io::Result<()> {
    prepare(target, body)?.commit()
}

/// Writes and syncs `body` under a temp name beside `target`; `commit` puts it in place.
pub fn prepare(target: &Path, body: &[u8]) -> std::io::Result<Pending> {
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    create_dir(dir)?;
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{:016x}.tmp", unpredictable()));
    // O_EXCL: an existing file or link at the temp name is an error, never opened (nor removed).
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o600)
        .open(&tmp)?;
    let pending = Pending {
        tmp,
        target: target.to_path_buf(),
    };
    f.write_all(body)?;
    f.sync_all()?;
    Ok(pending)
}

/// 64 bits no other user can guess: a randomly keyed hasher (its keys come from the OS's random
/// source) over a process-wide counter.
fn unpredictable() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = RandomState::new().build_hasher();
    h.write_u64(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
    h.write_u32(std::process::id());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_whole_and_links_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        // A link at the target is replaced, not written through; no temp file is left.
        let target = dir.path().join("sub/catalog.json");
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(&victim, &target).unwrap();
        write(&target, b"{}").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}");
        let meta = std::fs::symlink_metadata(&target).unwrap();
        assert!(meta.is_file());
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let left: Vec<_> = std::fs::read_dir(dir.path().join("sub")).unwrap().collect();
        assert_eq!(left.len(), 1);
        // Not committed: the temp file goes away.
        drop(prepare(&target, b"[]").unwrap());
        assert_eq!(
            std::fs::read_dir(dir.path().join("sub")).unwrap().count(),
            1
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "{}");
    }

    #[test]
    fn a_dir_others_can_write_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        check_dir(dir.path()).unwrap();
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check_dir(dir.path()).unwrap_err().to_string();
        let d = dir.path().display();
        assert_eq!(
            e,
            format!(
                "state dir {d} is writable by other users (mode 777): they could replace the \
                 files mws keeps there; run `chmod go-w {d}` (or `chmod 700 {d}`)"
            )
        );
    }

    #[test]
    fn directories_are_made_private_and_a_store_opens_in_one() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("a/b/state");
        let db = state.join("state.db");
        crate::store::Store::open(&db).unwrap();
        for d in [dir.path().join("a"), dir.path().join("a/b"), state] {
            let mode = std::fs::metadata(&d).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode & 0o077, 0, "{} has mode {mode:o}", d.display());
        }
    }
}
