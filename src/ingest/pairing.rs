//! Pairing the calls of one file with their results as the lines come: calls still open, calls
//! done, results of calls an earlier run or file left pending, and aborted turns. Pure.

use std::collections::{HashMap, HashSet};

use super::{CallEvent, Event, Status};

/// Calls of one file being paired with their results.
#[derive(Default)]
pub struct Pairing {
    /// Calls without a result yet, and the order they came in.
    pub open: HashMap<String, CallEvent>,
    pub order: Vec<String>,
    pub seen: HashSet<String>,
    pub done: Vec<CallEvent>,
    /// Results of calls left pending by an earlier run or file.
    pub resolved: Vec<(String, Status, Option<String>, Option<i64>)>,
    pub abort: bool,
    /// Calls seen again in the same file (duplicate lines, replays).
    pub repeats: u64,
}

impl Pairing {
    /// Applies one event; `pending` holds the call ids earlier runs and files left without a
    /// result (a result found here for one of them is taken out of it).
    pub fn apply(&mut self, event: Event, pending: &mut HashSet<String>) {
        match event {
            Event::Call(c) => match c.status {
                Some(status) => {
                    pending.remove(&c.id);
                    if let Some(mut o) = self.open.remove(&c.id) {
                        o.status = Some(status);
                        o.tool = c.tool;
                        o.ms = c.ms.or(o.ms);
                        self.done.push(o);
                    } else if self.seen.insert(c.id.clone()) {
                        self.done.push(c);
                    }
                }
                None => {
                    if self.seen.insert(c.id.clone()) {
                        self.order.push(c.id.clone());
                        self.open.insert(c.id.clone(), c);
                    } else {
                        self.repeats += 1;
                    }
                }
            },
            Event::Result {
                id,
                status,
                tool,
                ms,
            } => {
                if let Some(mut o) = self.open.remove(&id) {
                    o.status = Some(status);
                    o.tool = tool.unwrap_or(o.tool);
                    o.ms = ms.or(o.ms);
                    self.done.push(o);
                } else if pending.remove(&id) {
                    self.resolved.push((id, status, tool, ms));
                }
            }
            Event::AbortOpen => {
                for id in &self.order {
                    if let Some(mut o) = self.open.remove(id) {
                        o.status = Some(Status::Aborted);
                        self.done.push(o);
                    }
                }
                self.abort = true;
            }
        }
    }
}
