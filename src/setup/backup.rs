//! The backups `mws setup import --apply` takes before changing any file, and `mws setup undo`,
//! which puts them back. A set is `stateDir/setup-backups/<time>/`: one byte-identical copy per
//! file (`<n>.bak`, 0600) and `manifest.json` naming each file, whether it existed, its mode, and
//! a digest of what `--apply` left there, and one `Change` per registration `--apply` took out of
//! or put into a file (its place and name; the value stays in the copy, only a digest of what was
//! put in is kept). `setup::undo` reads a set back. Must not read or write anything but the files
//! it names.

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
    /// What `--apply` did inside the files, entry by entry (none in a set written before
    /// entries were recorded).
    #[serde(default)]
    pub changes: Vec<Change>,
}

/// One registration `--apply` took out of a file or put into it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    pub file: PathBuf,
    /// The keys from the top of the document to the map that holds the entry (`[]`: the top).
    pub at: Vec<String>,
    pub name: String,
    pub action: Action,
    /// `doc::entry_digest` of the entry as `--apply` left it (`added` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Taken out: its old value is in the file's copy.
    Removed,
    /// Put in by `--apply`.
    Added,
}

/// A set being written by `--apply`.
#[derive(Debug)]
pub struct Set {
    pub dir: PathBuf,
    manifest: Manifest,
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
                changes: Vec::new(),
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

    /// Records one change `--apply` made inside a saved file.
    pub fn record(&mut self, file: &Path, at: &[&str], name: &str, action: Action) {
        self.manifest.changes.push(Change {
            file: file.to_path_buf(),
            at: at.iter().map(|k| k.to_string()).collect(),
            name: name.to_string(),
            action,
            after: None,
        });
    }

    /// Records what each saved file, and each entry put in, holds now, for undo's check.
    pub fn finish(&mut self) -> std::io::Result<()> {
        for e in &mut self.manifest.files {
            e.after = std::fs::read(&e.path).ok().map(|b| super::doc::digest(&b));
        }
        for c in &mut self.manifest.changes {
            if c.action == Action::Added {
                c.after = std::fs::read(&c.file)
                    .ok()
                    .and_then(|b| super::doc::Doc::parse(&b, is_toml(&c.file)).ok())
                    .and_then(|d| d.get(&c.at, &c.name))
                    .map(|v| super::doc::entry_digest(&v));
            }
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

/// A file read as TOML (Codex's `config.toml`) rather than JSON.
pub fn is_toml(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "toml")
}

/// The newest set not yet undone, or `None` when there is none.
pub fn latest(state_dir: &Path) -> Option<PathBuf> {
    let root = state_dir.join(DIR);
    let mut sets: Vec<PathBuf> = std::fs::read_dir(&root)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join(MANIFEST).is_file() && !p.to_string_lossy().ends_with(UNDONE))
        .collect();
    sets.sort();
    sets.pop()
}

/// A set as `--apply` left it: its manifest and each file's copy (`None`: it did not exist).
pub struct Saved {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub copies: Vec<Option<Vec<u8>>>,
}

/// Reads the set in `dir`, or says what is wrong with it.
pub fn read_set(dir: &Path) -> Result<Saved, String> {
    let manifest = read_manifest(dir)?;
    let mut copies = Vec::new();
    for e in &manifest.files {
        copies.push(match &e.backup {
            Some(name) => {
                Some(std::fs::read(dir.join(name)).map_err(|err| format!("{name}: {err}"))?)
            }
            None => None,
        });
    }
    Ok(Saved {
        dir: dir.to_path_buf(),
        manifest,
        copies,
    })
}

/// The manifest of the set in `dir` alone (none of the copies is read).
pub fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    let text = std::fs::read(dir.join(MANIFEST)).map_err(|e| e.to_string())?;
    serde_json::from_slice(&text).map_err(|e| format!("{MANIFEST}: {e}"))
}

/// Marks the set in `dir` put back: renamed `<time>.undone`.
pub fn mark_undone(dir: &Path) -> std::io::Result<()> {
    let mut undone = dir.to_path_buf().into_os_string();
    undone.push(UNDONE);
    std::fs::rename(dir, &undone)
}
