//! The held tool definitions of a config's servers, by the names `mws tools` takes and shows
//! (`<server>__<tool>`, or the tool's own name for the single upstream), each with the change it
//! waits on. Shared by `mws tools`, `mws doctor` and the status page. Reads `definitions.json`
//! (`approvals`); must not talk to any upstream.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;

use super::approvals::{self, ApprovalError};
use super::fleet::held_name;
use super::fleet::server_dir;
use crate::catalog::definitions::{self, HeldWhy};
use crate::config::Config;

/// One held definition.
#[derive(Debug, Clone, Serialize)]
pub struct Pending {
    /// As `mws tools` takes it.
    pub name: String,
    #[serde(skip)]
    pub tool: String,
    #[serde(skip)]
    pub dir: PathBuf,
    #[serde(serialize_with = "why_str")]
    pub why: HeldWhy,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// The approved definition (`None`: a new tool).
    pub approved: Option<Value>,
    /// The definition the server lists now.
    pub listed: Value,
}

fn why_str<S: serde::Serializer>(w: &HeldWhy, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(w.as_str())
}

impl Pending {
    /// The change, a field at a time (`definitions::diff`).
    pub fn diff(&self) -> Vec<String> {
        definitions::diff(self.approved.as_ref(), &self.listed)
    }

    /// Still waiting for the user (a rejected one is decided).
    pub fn awaiting(&self) -> bool {
        self.why != HeldWhy::Rejected
    }
}

/// Every server's held definitions, and the books that could not be read.
#[derive(Debug, Default)]
pub struct Held {
    pub pending: Vec<Pending>,
    pub errors: Vec<ApprovalError>,
}

/// Where each server of `config` keeps its book, with the prefix its tools take (`None`: the
/// single upstream).
fn books(config: &Config) -> Vec<(Option<&str>, PathBuf)> {
    if config.servers.is_empty() {
        return vec![(None, config.state_dir.clone())];
    }
    config
        .servers
        .iter()
        .map(|s| (Some(s.name.as_str()), server_dir(config, &s.name)))
        .collect()
}

/// The held definitions of every server in `config`, in config order then by name.
pub fn gather(config: &Config) -> Held {
    let mut held = Held::default();
    for (server, dir) in books(config) {
        let book = match approvals::load(&dir) {
            Ok(b) => b,
            Err(e) => {
                held.errors.push(e);
                continue;
            }
        };
        for (tool, entry) in book.held {
            let approved = book.approved.get(&tool).map(|a| a.definition.clone());
            let why = match (&approved, book.rejected.get(&tool)) {
                (_, Some(r)) if *r == entry.hash => HeldWhy::Rejected,
                (None, _) => HeldWhy::New,
                (Some(_), _) => HeldWhy::Changed,
            };
            held.pending.push(Pending {
                name: server.map_or_else(|| tool.clone(), |s| held_name(s, &tool)),
                tool,
                dir: dir.clone(),
                why,
                since: entry.since,
                approved,
                listed: entry.definition,
            });
        }
    }
    held
}

/// The held definition a user means by `asked`: its name as shown, `<server>/<tool>`, or a
/// tool's own name when exactly one server holds a tool of that name.
pub fn pick<'a>(pending: &'a [Pending], asked: &str) -> Result<&'a Pending, String> {
    let asked = asked.trim();
    let slashed = asked.replacen('/', crate::catalog::exposed::SEPARATOR, 1);
    if let Some(p) = pending
        .iter()
        .find(|p| p.name == asked || p.name == slashed)
    {
        return Ok(p);
    }
    let own: Vec<&Pending> = pending.iter().filter(|p| p.tool == asked).collect();
    match own.as_slice() {
        [one] => Ok(one),
        [] if pending.is_empty() => Err(format!(
            "no tool is held, so there is no {asked} to decide on"
        )),
        [] => Err(format!(
            "no held tool is called {asked}; held: {}",
            pending
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
        many => Err(format!(
            "{asked} is held on several servers; name one: {}",
            many.iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
