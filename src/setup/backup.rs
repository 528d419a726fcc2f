//! The backups `mws setup import --apply` takes before changing any file, and `mws setup undo`,
//! which puts them back. A set is `stateDir/setup-backups/<time>/`: one byte-identical copy per
//! file (`<n>.bak`, 0600) and `manifest.json` naming each file, whether it existed, its mode, and
//! a digest of what `--apply` left there. Undo refuses a file changed since then (unless forced)
//! and renames the set `<time>.undone`. Must not read or write anything but the files it names.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::private_file;

/// Where the sets live, under the state dir.
pub const DIR: &str = "setup-backups";
const MANIFEST: &str = "manifest.json";
/// The suffix of a set already put back.
const UNDONE: &str = ".undone";

/// One file of a set.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub path: PathBuf,
    /// The copy's name in the set; `None`: the file did not exist (undo removes it).
    pub backup: Option<String>,
    /// The file's mode bits before.
    pub mode: Option<u32>,
    /// Digest of the file as `--apply` left it (`None`: removed or not known yet).
    pub after: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Manifest {
    pub created: String,
    pub files: Vec<Entry>,
}

/// A set being written by `--apply`.
#[derive(Debug)]
pub struct Set {
    pub dir: PathBuf,
    manifest: Manifest,
}

/// A stable digest of file contents (FNV-1a, 64 bits): tells a changed file from an unchanged
/// one; not a security check.
pub fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl Set {
    /// A new empty set under `state_dir`, named by `stamp` (a sortable UTC time).
    pub fn create(state_dir: &Path, stamp: &str) -> std::io::Result<Set> {
        let root = state_dir.join(DIR);
        let taken = |d: &Path| d.exists() || root.join(format!("{}{UNDONE}", d.display())).exists();
        let mut dir = root.join(stamp);
        let mut n = 1;
        while taken(&dir) {
            n += 1;
            dir = root.join(format!("{stamp}-{n}"));
        }
        let set = Set {
            dir,
            manifest: Manifest {
                created: stamp.to_string(),
                files: Vec::new(),
            },
        };
        set.write_manifest()?;
        Ok(set)
    }

    /// Copies `path` (its bytes as read now; `None` if it does not exist) into the set. A file
    /// already in the set is kept as first saved.
    pub fn save(&mut self, path: &Path, bytes: Option<&[u8]>) -> std::io::Result<()> {
        if self.manifest.files.iter().any(|e| e.path == path) {
            return Ok(());
        }
        let mode = std::fs::metadata(path)
            .ok()
            .map(|m| m.permissions().mode() & 0o7777);
        let backup = match bytes {
            Some(b) => {
                let name = format!("{}.bak", self.manifest.files.len() + 1);
                private_file::write(&self.dir.join(&name), b)?;
                Some(name)
            }
            None => None,
        };
        self.manifest.files.push(Entry {
            path: path.to_path_buf(),
            backup,
            mode,
            after: None,
        });
        self.write_manifest()
    }

    /// Records what each saved file holds now, for undo's check.
    pub fn finish(&mut self) -> std::io::Result<()> {
        for e in &mut self.manifest.files {
            e.after = std::fs::read(&e.path).ok().map(|b| digest(&b));
        }
        self.write_manifest()
    }

    pub fn files(&self) -> &[Entry] {
        &self.manifest.files
    }

    fn write_manifest(&self) -> std::io::Result<()> {
        let body = serde_json::to_vec_pretty(&self.manifest).expect("a manifest serializes");
        private_file::write(&self.dir.join(MANIFEST), &body)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error("nothing to undo: no backup set in {0}")]
    Nothing(PathBuf),
    #[error("cannot read the backup set {dir}: {message}")]
    Unreadable { dir: PathBuf, message: String },
    #[error(
        "not restored: changed since `mws setup import --apply` wrote {}: {}; run `mws setup undo --force` to put the backups back anyway (the backups stay in {})",
        if .files.len() == 1 { "it" } else { "them" },
        .files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
        .dir.display()
    )]
    Changed { dir: PathBuf, files: Vec<PathBuf> },
    #[error("cannot restore {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// What undo did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Restored {
    /// Put back as it was.
    Restored(PathBuf),
    /// It did not exist before: removed.
    Removed(PathBuf),
}

/// The newest set not yet undone.
fn latest(state_dir: &Path) -> Result<PathBuf, UndoError> {
    let root = state_dir.join(DIR);
    let mut sets: Vec<PathBuf> = std::fs::read_dir(&root)
        .map_err(|_| UndoError::Nothing(root.clone()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(MANIFEST).is_file() && !p.to_string_lossy().ends_with(UNDONE))
        .collect();
    sets.sort();
    sets.pop().ok_or(UndoError::Nothing(root))
}

/// Puts back the newest set: every file byte-identical with its old mode, files that did not
/// exist removed. With a file changed since `--apply` and no `force`, nothing is restored.
pub fn undo(state_dir: &Path, force: bool) -> Result<(PathBuf, Vec<Restored>), UndoError> {
    let dir = latest(state_dir)?;
    let unreadable = |message: String| UndoError::Unreadable {
        dir: dir.clone(),
        message,
    };
    let text = std::fs::read(dir.join(MANIFEST)).map_err(|e| unreadable(e.to_string()))?;
    let manifest: Manifest =
        serde_json::from_slice(&text).map_err(|e| unreadable(format!("{MANIFEST}: {e}")))?;
    let mut copies = Vec::new();
    for e in &manifest.files {
        let copy = match &e.backup {
            Some(name) => Some(
                std::fs::read(dir.join(name))
                    .map_err(|err| unreadable(format!("{name}: {err}")))?,
            ),
            None => None,
        };
        copies.push(copy);
    }
    let changed: Vec<PathBuf> = manifest
        .files
        .iter()
        .filter(|e| std::fs::read(&e.path).ok().map(|b| digest(&b)) != e.after)
        .map(|e| e.path.clone())
        .collect();
    if !changed.is_empty() && !force {
        return Err(UndoError::Changed {
            dir,
            files: changed,
        });
    }
    let mut done = Vec::new();
    for (e, copy) in manifest.files.iter().zip(copies) {
        let io = |source| UndoError::Io {
            path: e.path.clone(),
            source,
        };
        match copy {
            Some(bytes) => {
                let pending = private_file::prepare(&e.path, &bytes).map_err(io)?;
                pending.commit().map_err(io)?;
                if let Some(mode) = e.mode {
                    std::fs::set_permissions(&e.path, std::fs::Permissions::from_mode(mode))
                        .map_err(io)?;
                }
                done.push(Restored::Restored(e.path.clone()));
            }
            None => match std::fs::remove_file(&e.path) {
                Ok(()) => done.push(Restored::Removed(e.path.clone())),
                Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                Err(err) => return Err(io(err)),
            },
        }
    }
    let mut undone = dir.clone().into_os_string();
    undone.push(UNDONE);
    std::fs::rename(&dir, &undone).map_err(|source| UndoError::Io {
        path: dir.clone(),
        source,
    })?;
    Ok((dir, done))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_change_undo_is_byte_identical_and_refuses_later_edits() {
        let dir = tempfile::tempdir().unwrap();
        let (state, a, b) = (
            dir.path().join("state"),
            dir.path().join("a.json"),
            dir.path().join("new.json"),
        );
        std::fs::write(&a, b"{\"x\": 1}").unwrap();
        std::fs::set_permissions(&a, std::fs::Permissions::from_mode(0o644)).unwrap();
        let mut set = Set::create(&state, "20261201T100000Z").unwrap();
        set.save(&a, Some(b"{\"x\": 1}")).unwrap();
        set.save(&b, None).unwrap();
        std::fs::write(&a, b"changed").unwrap();
        std::fs::write(&b, b"made").unwrap();
        set.finish().unwrap();

        std::fs::write(&a, b"changed again").unwrap();
        let err = undo(&state, false).unwrap_err().to_string();
        assert!(err.starts_with("not restored: changed since"), "{err}");
        assert!(err.contains("a.json"), "{err}");
        assert_eq!(std::fs::read(&a).unwrap(), b"changed again");

        let (_, done) = undo(&state, true).unwrap();
        assert_eq!(
            done,
            [Restored::Restored(a.clone()), Restored::Removed(b.clone())]
        );
        assert_eq!(std::fs::read(&a).unwrap(), b"{\"x\": 1}");
        let mode = std::fs::metadata(&a).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
        assert!(!b.exists());
        let again = undo(&state, false).unwrap_err().to_string();
        assert!(again.starts_with("nothing to undo"), "{again}");
    }
}
