//! `mws setup undo`: takes back what the newest `--apply` did. A file nobody changed since is put
//! back byte for byte; a file changed since (Claude Code rewrites `~/.claude.json` in ordinary
//! use) is undone entry by entry: the registrations `--apply` took out go back, the ones it put in
//! come out, and everything added since stays. An entry itself changed since is reported and
//! left. `--force` puts every copy back whole, after saying what that discards. Needs no
//! loadable mws config. Must not touch a file the set does not name.

use std::path::{Path, PathBuf};

use super::backup::{self, Action, Change, Saved};
use super::doc::{Doc, entry_digest};

#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error("nothing to undo: no backup set in {0}")]
    Nothing(PathBuf),
    #[error("cannot read the backup set {dir}: {message}")]
    Unreadable { dir: PathBuf, message: String },
    #[error("cannot restore {path}: {message}")]
    Write { path: PathBuf, message: String },
    #[error("cannot mark {dir} undone: {source}")]
    Mark {
        dir: PathBuf,
        source: std::io::Error,
    },
}

/// What undo did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// Put back as it was, byte for byte.
    Restored(PathBuf),
    /// It did not exist before: removed.
    Removed(PathBuf),
    /// Changed since: the entries `--apply` took out put back, those it put in taken out.
    Edited {
        path: PathBuf,
        put_back: Vec<String>,
        taken_out: Vec<String>,
    },
}

/// What an undo came to: the set, what was done, and what was left with why.
#[derive(Debug)]
pub struct Undone {
    pub dir: PathBuf,
    pub done: Vec<Done>,
    pub left: Vec<String>,
}

/// Undoes the newest set under `state_dir` (see the module doc). With `force`, `announce` is
/// told, before anything is written, what putting each changed file back whole discards.
pub fn undo(
    state_dir: &Path,
    force: bool,
    announce: &mut dyn FnMut(&str),
) -> Result<Undone, UndoError> {
    let dir =
        backup::latest(state_dir).ok_or_else(|| UndoError::Nothing(state_dir.join(backup::DIR)))?;
    let saved = backup::read_set(&dir).map_err(|message| UndoError::Unreadable {
        dir: dir.clone(),
        message,
    })?;
    let now: Vec<Option<Vec<u8>>> = saved
        .manifest
        .files
        .iter()
        .map(|e| std::fs::read(&e.path).ok())
        .collect();
    let changed =
        |i: usize| now[i].as_deref().map(super::doc::digest) != saved.manifest.files[i].after;
    if force {
        for i in (0..now.len()).filter(|&i| changed(i)) {
            announce(&discards(&saved, i, now[i].as_deref()));
        }
    }
    let mut out = Undone {
        dir: dir.clone(),
        done: Vec::new(),
        left: Vec::new(),
    };
    for (i, e) in saved.manifest.files.iter().enumerate() {
        let fail = |message: String| UndoError::Write {
            path: e.path.clone(),
            message,
        };
        if force || !changed(i) {
            match &saved.copies[i] {
                Some(bytes) => {
                    super::write::with_mode(&e.path, bytes, e.mode).map_err(fail)?;
                    out.done.push(Done::Restored(e.path.clone()));
                }
                None => match std::fs::remove_file(&e.path) {
                    Ok(()) => out.done.push(Done::Removed(e.path.clone())),
                    Err(err) if err.kind() == std::io::ErrorKind::NotFound => {}
                    Err(err) => return Err(fail(err.to_string())),
                },
            }
            continue;
        }
        let changes: Vec<&Change> = saved
            .manifest
            .changes
            .iter()
            .filter(|c| c.file == e.path)
            .collect();
        let Some(current) = now[i].as_deref() else {
            out.left.push(format!(
                "{}: removed since `mws setup import --apply`; not made again (its copy stays in \
                 {})",
                e.path.display(),
                dir.display()
            ));
            continue;
        };
        if changes.is_empty() {
            out.left.push(format!(
                "{}: changed since `mws setup import --apply`, and the set records none of its \
                 entries; left as it is (`mws setup undo --force` puts the copy back whole)",
                e.path.display()
            ));
            continue;
        }
        match entries(&e.path, current, saved.copies[i].as_deref(), &changes) {
            Ok((text, done, left)) => {
                out.left.extend(left);
                if let Some(text) = text {
                    super::write::keeping_mode(&e.path, text.as_bytes()).map_err(fail)?;
                }
                out.done.push(done);
            }
            Err(why) => out.left.push(format!(
                "{}: changed since `mws setup import --apply` and cannot be read ({why}); left as \
                 it is",
                e.path.display()
            )),
        }
    }
    backup::mark_undone(&dir).map_err(|source| UndoError::Mark {
        dir: dir.clone(),
        source,
    })?;
    Ok(out)
}

/// The entry-by-entry undo of one changed file: its new text (`None`: nothing to write), what
/// was done, and the entries left with why.
fn entries(
    path: &Path,
    current: &[u8],
    copy: Option<&[u8]>,
    changes: &[&Change],
) -> Result<(Option<String>, Done, Vec<String>), String> {
    let toml = backup::is_toml(path);
    let mut doc = Doc::parse(current, toml)?;
    let old = copy.map(|c| Doc::parse(c, toml)).transpose()?;
    let (mut put_back, mut taken_out, mut left) = (Vec::new(), Vec::new(), Vec::new());
    let shown = |c: &Change| match c.at.last() {
        Some(map) => format!("{}: `{}` in `{map}`", path.display(), c.name),
        None => format!("{}: `{}`", path.display(), c.name),
    };
    // What `--apply` put in comes out first, so that what it took out fits back (mws's config
    // holds `upstream` or `servers`, never both).
    for c in changes.iter().filter(|c| c.action == Action::Added) {
        match doc.get(&c.at, &c.name) {
            None => {}
            Some(v) if Some(entry_digest(&v)) == c.after => {
                doc.remove(&c.at, &c.name)?;
                taken_out.push(c.name.clone());
                // A map `--apply` made for its entry goes with it.
                if let Some((last, parent)) = c.at.split_last() {
                    let empty = doc
                        .get(parent, last)
                        .is_some_and(|m| m.as_object().is_some_and(|o| o.is_empty()));
                    let had = old.as_ref().is_some_and(|o| o.get(parent, last).is_some());
                    if empty && !had {
                        doc.remove(parent, last)?;
                    }
                }
            }
            Some(_) => left.push(format!(
                "{}: changed since `--apply` put it there; left as it is",
                shown(c)
            )),
        }
    }
    for c in changes.iter().filter(|c| c.action == Action::Removed) {
        let Some(old) = &old else {
            left.push(format!("{}: the set has no copy to take it from", shown(c)));
            continue;
        };
        let Some(want) = old.get(&c.at, &c.name) else {
            left.push(format!("{}: the copy has no such entry", shown(c)));
            continue;
        };
        let servers_now = doc
            .get(&[], "servers")
            .is_some_and(|s| s.as_object().is_some_and(|o| !o.is_empty()));
        match doc.get(&c.at, &c.name) {
            Some(v) if entry_digest(&v) == entry_digest(&want) => {}
            Some(_) => left.push(format!(
                "{}: registered again since, with other settings; left as it is",
                shown(c)
            )),
            None if c.at.is_empty() && c.name == "upstream" && servers_now => left.push(format!(
                "{}: not put back: the config has `servers` added since, and a config holds \
                 `upstream` or `servers`, not both",
                shown(c)
            )),
            None => {
                doc.put_from(old, &c.at, &c.name)?;
                put_back.push(c.name.clone());
            }
        }
    }
    let text = doc.text();
    let written = (text.as_bytes() != current).then_some(text);
    let done = Done::Edited {
        path: path.to_path_buf(),
        put_back,
        taken_out,
    };
    Ok((written, done, left))
}

/// What `--force` discards in file `i`: the entries in its maps now that neither its copy had nor
/// `--apply` put in, and every other edit since.
fn discards(saved: &Saved, i: usize, current: Option<&[u8]>) -> String {
    let e = &saved.manifest.files[i];
    let Some(current) = current else {
        return format!(
            "{}: removed since `--apply`; --force writes its copy back",
            e.path.display()
        );
    };
    let toml = backup::is_toml(&e.path);
    let (Ok(now), old) = (
        Doc::parse(current, toml),
        saved.copies[i].as_deref().map(|c| Doc::parse(c, toml)),
    ) else {
        return format!(
            "{}: every edit made since `--apply` ({}); it is not readable as a client file",
            e.path.display(),
            saved.manifest.created
        );
    };
    let old = old.and_then(Result::ok);
    let mut maps: Vec<&Vec<String>> = saved
        .manifest
        .changes
        .iter()
        .filter(|c| c.file == e.path && !c.at.is_empty())
        .map(|c| &c.at)
        .collect();
    maps.sort();
    maps.dedup();
    let mut added = Vec::new();
    for at in maps {
        let (Some(last), parent) = (at.last(), &at[..at.len() - 1]) else {
            continue;
        };
        let names = |d: &Doc| -> Vec<String> {
            d.get(parent, last)
                .and_then(|m| m.as_object().map(|o| o.keys().cloned().collect()))
                .unwrap_or_default()
        };
        let before = old.as_ref().map(names).unwrap_or_default();
        let ours: Vec<&str> = saved
            .manifest
            .changes
            .iter()
            .filter(|c| c.file == e.path && &c.at == at && c.action == Action::Added)
            .map(|c| c.name.as_str())
            .collect();
        for n in names(&now) {
            if !before.contains(&n) && !ours.contains(&n.as_str()) {
                added.push(format!("`{n}`"));
            }
        }
    }
    let since = if added.is_empty() {
        "no registration was added since".to_string()
    } else {
        format!("the registrations added since: {}", added.join(", "))
    };
    format!(
        "{}: --force discards {since}, and every other edit made to it since `--apply` ({})",
        e.path.display(),
        saved.manifest.created
    )
}

#[cfg(test)]
#[path = "undo_tests.rs"]
mod tests;
