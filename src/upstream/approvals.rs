//! The tool definitions the user trusts, per server: `definitions.json` (0600) beside the server's
//! `catalog.json`, holding each approved definition, each held one (changed, or new under
//! `policy.holdNewTools`) and each rejected hash. `review` sorts a fresh list into the tools to
//! serve and the tools to hold; `approve` and `reject` are what `mws tools` runs. Every change is
//! made under `definitions.lock`, so that several mws processes (one per client over stdio) and
//! `mws tools` never lose each other's writes. Must not talk to the upstream.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::catalog::definitions::{HeldTool, HeldWhy, changed_fields, definition_hash};

/// How often a running mws looks whether `definitions.json` changed (`mws tools approve`, another
/// mws process). Raising it makes an approval take effect later; each look is one `stat`.
pub const APPROVALS_POLL: std::time::Duration = std::time::Duration::from_secs(2);

/// The file under a server's state dir.
pub const FILE: &str = "definitions.json";
/// The lock beside it (never removed: see `setup::lock`).
const LOCK: &str = "definitions.lock";

/// A definition as stored: its hash, the tool object as the upstream sent it, and when mws first
/// saw it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Entry {
    pub hash: String,
    pub definition: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
}

/// `definitions.json`.
#[derive(Debug, Default, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct Book {
    pub approved: BTreeMap<String, Entry>,
    pub held: BTreeMap<String, Entry>,
    /// Tool name → the hash of the definition the user rejected.
    pub rejected: BTreeMap<String, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApprovalError {
    #[error(
        "cannot read {path}: {message}; fix it or delete it (mws then approves every definition it lists next)"
    )]
    Unreadable { path: PathBuf, message: String },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// A fresh list sorted: the tools to serve (upstream order) and those held back.
#[derive(Debug, Default)]
pub struct Review {
    pub serve: Vec<Value>,
    pub held: Vec<HeldTool>,
    /// The file as this review left it, to tell a later change by another process.
    pub stamp: Option<Stamp>,
}

/// What identifies one version of the file: its modification time and length.
pub type Stamp = (SystemTime, u64);

/// The file's stamp now (`None`: no file).
pub fn stamp(dir: &Path) -> Option<Stamp> {
    let m = std::fs::metadata(dir.join(FILE)).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// Sorts `tools` against the approved definitions in `dir`, recording what it learns: with no
/// file yet (a server mws never listed) every definition is approved as it is; a tool not seen
/// before is approved too, unless `hold_new`; a tool whose definition differs from the approved
/// one is held (or stays held as rejected, when the user rejected this very definition). A tool
/// back at its approved definition is served and its hold forgotten. A file that cannot be read
/// is left as it is and nothing is held (the warning says so; `mws doctor` fails on it).
pub fn review(dir: &Path, tools: Vec<Value>, hold_new: bool, now: &str) -> Review {
    if let Some(stamp) = all_approved(dir, &tools) {
        return Review {
            serve: tools,
            held: Vec::new(),
            stamp: Some(stamp),
        };
    }
    let mut given = Some(tools);
    let result = locked(dir, |book, first| {
        let tools = given.take().unwrap_or_default();
        let mut dirty = first;
        let mut serve = Vec::with_capacity(tools.len());
        let mut held = Vec::new();
        let mut listed = std::collections::HashSet::with_capacity(tools.len());
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str).map(str::to_string) else {
                serve.push(tool); // `Catalog::checked` says what is wrong with it
                continue;
            };
            let hash = definition_hash(&tool);
            listed.insert(name.clone());
            match book.approved.get(&name) {
                Some(a) if a.hash == hash => {
                    dirty |= book.held.remove(&name).is_some();
                    dirty |= book.rejected.remove(&name).is_some();
                    serve.push(tool);
                }
                None if first || !hold_new => {
                    book.held.remove(&name);
                    book.approved.insert(name, entry(hash, tool.clone(), now));
                    dirty = true;
                    serve.push(tool);
                }
                approved => {
                    let why = match (approved, book.rejected.get(&name)) {
                        (_, Some(r)) if *r == hash => HeldWhy::Rejected,
                        (None, _) => HeldWhy::New,
                        (Some(_), _) => HeldWhy::Changed,
                    };
                    let fields = approved
                        .map(|a| changed_fields(&a.definition, &tool))
                        .unwrap_or_default();
                    if book.held.get(&name).is_none_or(|h| h.hash != hash) {
                        book.held.insert(name.clone(), entry(hash, tool, now));
                        dirty = true;
                    }
                    held.push(HeldTool { name, why, fields });
                }
            }
        }
        // A hold on a tool the server no longer lists is moot.
        let before = book.held.len();
        book.held.retain(|n, _| listed.contains(n));
        dirty |= book.held.len() != before;
        ((serve, held), dirty)
    });
    match result {
        Ok(((serve, held), written)) => {
            let stamp = written.unwrap_or_else(|e| {
                tracing::warn!("{e}; the holds stand for this process only");
                stamp(dir)
            });
            Review { serve, held, stamp }
        }
        Err(e) => {
            tracing::warn!("{e}; no tool definition is held meanwhile");
            Review {
                serve: given.take().unwrap_or_default(),
                held: Vec::new(),
                stamp: stamp(dir),
            }
        }
    }
}

/// The book's hashes only: what the common review, where nothing changed, needs. Parsing past
/// the definitions instead of building them is most of what a review of an unchanged list costs.
#[derive(Deserialize, Default)]
#[serde(default)]
struct Hashes {
    approved: BTreeMap<String, HashOnly>,
    held: BTreeMap<String, serde::de::IgnoredAny>,
    rejected: BTreeMap<String, serde::de::IgnoredAny>,
}

#[derive(Deserialize)]
struct HashOnly {
    hash: String,
}

/// The book's stamp when it holds nothing and approves every named tool of `tools` as it is:
/// the review then has nothing to change (read without the lock: the file is replaced whole).
fn all_approved(dir: &Path, tools: &[Value]) -> Option<Stamp> {
    let before = stamp(dir)?;
    let bytes = std::fs::read(dir.join(FILE)).ok()?;
    let book: Hashes = serde_json::from_slice(&bytes).ok()?;
    if !book.held.is_empty() || !book.rejected.is_empty() {
        return None;
    }
    let approved = |t: &Value| {
        let Some(name) = t.get("name").and_then(Value::as_str) else {
            return true;
        };
        book.approved
            .get(name)
            .is_some_and(|a| a.hash == definition_hash(t))
    };
    // The stamp read before the file: a change in between makes the next look review again.
    tools.iter().all(approved).then_some(before)
}

fn entry(hash: String, definition: Value, now: &str) -> Entry {
    Entry {
        hash,
        definition,
        since: Some(now.to_string()),
    }
}

/// Approves the held definition of each tool in `names` (the server's own names); returns those
/// that were held.
pub fn approve(dir: &Path, names: &[String]) -> Result<Vec<String>, ApprovalError> {
    decide(dir, names, |book, n| {
        let h = book.held.remove(n)?;
        book.rejected.remove(n);
        book.approved.insert(n.to_string(), h);
        Some(())
    })
}

/// Rejects the held definition of each tool in `names`: it stays held (as rejected, and no longer
/// awaiting a decision) until the server lists another definition. Returns those that were held.
pub fn reject(dir: &Path, names: &[String]) -> Result<Vec<String>, ApprovalError> {
    decide(dir, names, |book, n| {
        let hash = book.held.get(n)?.hash.clone();
        book.rejected.insert(n.to_string(), hash);
        Some(())
    })
}

/// Applies `one` to each name of `names` under the lock (`None`: not held, nothing changed) and
/// writes the book when any changed; returns the names it changed.
fn decide(
    dir: &Path,
    names: &[String],
    one: impl Fn(&mut Book, &str) -> Option<()>,
) -> Result<Vec<String>, ApprovalError> {
    let (done, written) = locked(dir, |book, _| {
        let done: Vec<String> = names
            .iter()
            .filter(|n| one(book, n).is_some())
            .cloned()
            .collect();
        let dirty = !done.is_empty();
        (done, dirty)
    })?;
    written?;
    Ok(done)
}

/// The book as stored (empty when there is no file).
pub fn load(dir: &Path) -> Result<Book, ApprovalError> {
    let path = dir.join(FILE);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| ApprovalError::Unreadable {
            path,
            message: e.to_string(),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Book::default()),
        Err(e) => Err(ApprovalError::Unreadable {
            path,
            message: e.to_string(),
        }),
    }
}

/// Runs `change` on the book under the lock (`first`: there was no file) and writes it back if
/// `change` says it changed it, returning what `change` returned and how the write went (the
/// file's new stamp). A book that cannot be read fails before `change` runs.
#[allow(clippy::type_complexity)]
fn locked<T>(
    dir: &Path,
    change: impl FnOnce(&mut Book, bool) -> (T, bool),
) -> Result<(T, Result<Option<Stamp>, ApprovalError>), ApprovalError> {
    let _lock = lock(dir);
    let path = dir.join(FILE);
    let first = !path.exists();
    let mut book = load(dir)?;
    let (out, changed) = change(&mut book, first);
    if !changed {
        return Ok((out, Ok(stamp(dir))));
    }
    let body = serde_json::to_vec_pretty(&book).expect("a book serializes");
    let written = crate::private_file::write(&path, &body)
        .map(|()| stamp(dir))
        .map_err(|source| ApprovalError::Write { path, source });
    Ok((out, written))
}

/// Locks `dir/definitions.lock` for the length of one change; without a lock file (a state dir
/// mws cannot write) the change goes ahead unlocked and its write fails with the reason.
fn lock(dir: &Path) -> Option<std::fs::File> {
    let file = crate::private_file::open_lock(&dir.join(LOCK)).ok()?;
    file.lock().ok()?;
    Some(file)
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
