//! One file's lines through an adapter, and its calls paired with their results as the lines
//! come: calls still open, calls done, results of calls an earlier run or file left pending, and
//! aborted turns. The driver and `parse_all` run this same loop. No database.

use std::collections::{HashMap, HashSet};
use std::io::{self, Read};

use super::reader::{self, Line};
use super::{Adapter, Event, Status};
use crate::call::Call;

/// Calls of one file being paired with their results.
#[derive(Default)]
pub struct Pairing {
    /// Calls without a result yet (by client call id), and the order they came in.
    pub open: HashMap<String, Call>,
    pub order: Vec<String>,
    pub seen: HashSet<String>,
    pub done: Vec<Call>,
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
            Event::Call(c) => {
                let c = *c;
                let id = c.call_id().to_string();
                match c.status {
                    Some(status) => {
                        pending.remove(&id);
                        if let Some(mut o) = self.open.remove(&id) {
                            o.status = Some(status);
                            o.tool = c.tool;
                            o.ms = c.ms.or(o.ms);
                            self.done.push(o);
                        } else if self.seen.insert(id) {
                            self.done.push(c);
                        }
                    }
                    None => {
                        if self.seen.insert(id.clone()) {
                            self.order.push(id.clone());
                            self.open.insert(id, c);
                        } else {
                            self.repeats += 1;
                        }
                    }
                }
            }
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

    /// The calls still without a result, in the order they came, taken out of `open`.
    pub fn take_open(&mut self) -> Vec<Call> {
        let order = std::mem::take(&mut self.order);
        order.iter().filter_map(|id| self.open.remove(id)).collect()
    }
}

/// One file being parsed: its complete lines through `adapter`, the events paired.
pub struct FileParse<'a> {
    pub adapter: &'a mut dyn Adapter,
    pub pairing: Pairing,
    /// Call ids earlier runs and files left without a result.
    pub pending: &'a mut HashSet<String>,
    /// Complete lines consumed so far: the number of the last one.
    pub lineno: u64,
    events: Vec<Event>,
}

impl<'a> FileParse<'a> {
    /// Starts after line `lineno` of the file.
    pub fn new(
        adapter: &'a mut dyn Adapter,
        pending: &'a mut HashSet<String>,
        lineno: u64,
    ) -> FileParse<'a> {
        FileParse {
            adapter,
            pairing: Pairing::default(),
            pending,
            lineno,
            events: Vec::new(),
        }
    }

    /// Reads `input` from offset `start` to `end` (`reader::read_lines`), each complete line
    /// through the adapter; blank lines are skipped, `bad(lineno, reason)` hears of each
    /// malformed one. Returns the offset just after the last line consumed.
    pub fn read(
        &mut self,
        input: &mut dyn Read,
        (start, end): (u64, u64),
        bad: &mut dyn FnMut(u64, &str),
        progress: &mut dyn FnMut(u64),
    ) -> io::Result<u64> {
        let max = reader::MAX_LINE;
        let mut each = |line: Line<'_>| {
            self.lineno += 1;
            let bytes = match line {
                Line::TooLong => return bad(self.lineno, &format!("line longer than {max} bytes")),
                Line::Bytes(b) if b.iter().all(u8::is_ascii_whitespace) => return,
                Line::Bytes(b) => b,
            };
            let parsed = {
                let (open, pending) = (&self.pairing.open, &*self.pending);
                let wanted = |id: &str| open.contains_key(id) || pending.contains(id);
                self.adapter.line(bytes, &wanted, &mut self.events)
            };
            if let Err(reason) = parsed {
                bad(self.lineno, &reason);
            }
            for e in self.events.drain(..) {
                self.pairing.apply(e, self.pending);
            }
        };
        reader::read_lines(input, start, end, max, &mut each, progress)
    }
}
