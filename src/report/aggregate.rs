//! One pass over the window's calls: per-tool and per-client counts, distinct sessions, and the
//! hit count against the listed intervals. Fed row by row from `Store::report_scan_calls`, so a
//! million calls cost one scan and no per-row allocation. Pure: the rows come in, counts go out.
//! `store::report` has the same figures as SQL aggregates; a test checks that both agree.

use std::collections::{HashMap, HashSet};

use super::hit_rate::ListedAt;
use crate::store::report::{CallRef, ClientRow, Interval, ToolUsageRow};

#[derive(Default)]
struct ToolAcc {
    row: ToolUsageRow,
    sessions: HashSet<u32>,
    ok_sessions: HashSet<u32>,
    last_call: String,
}

struct ClientAcc {
    client: Option<String>,
    calls: u64,
    ok: u64,
    sessions: HashSet<u32>,
}

/// What one pass found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scan {
    /// By tool name.
    pub tools: Vec<ToolUsageRow>,
    /// Most calls first, then by name.
    pub clients: Vec<ClientRow>,
    pub sessions: u64,
    /// Successful calls, not through `call_tool`, inside one of the tool's listed intervals.
    pub hits: u64,
}

/// The accumulator; `add` every call of the window, then `finish`.
pub struct Aggregate {
    tools: HashMap<String, ToolAcc>,
    clients: Vec<ClientAcc>,
    session_ids: HashMap<String, u32>,
    listed: ListedAt,
    hits: u64,
}

impl Aggregate {
    pub fn new(intervals: &[Interval]) -> Aggregate {
        Aggregate {
            tools: HashMap::new(),
            clients: Vec::new(),
            session_ids: HashMap::new(),
            listed: ListedAt::new(intervals),
            hits: 0,
        }
    }

    pub fn add(&mut self, c: &CallRef) {
        let session = match self.session_ids.get(c.session_id) {
            Some(&s) => s,
            None => {
                let s = self.session_ids.len() as u32;
                self.session_ids.insert(c.session_id.to_string(), s);
                s
            }
        };
        if !self.tools.contains_key(c.tool) {
            let mut acc = ToolAcc::default();
            acc.row.tool = c.tool.to_string();
            self.tools.insert(c.tool.to_string(), acc);
        }
        let t = self.tools.get_mut(c.tool).expect("inserted above");
        t.row.calls += 1;
        t.sessions.insert(session);
        if c.ts > t.last_call.as_str() {
            t.last_call.clear();
            t.last_call.push_str(c.ts);
        }
        match c.via {
            "direct" => t.row.direct += 1,
            "call_tool" => t.row.call_tool += 1,
            v if v.starts_with("transcript:") => t.row.transcript += 1,
            _ => {}
        }
        if c.ok {
            t.row.ok += 1;
            t.ok_sessions.insert(session);
            if c.via != "call_tool" {
                t.row.ok_not_call_tool += 1;
                if self.listed.contains(c.tool, c.ts) {
                    self.hits += 1;
                }
            }
        }
        let name = c.client.map(crate::call::client_family);
        let client = match self
            .clients
            .iter()
            .position(|a| a.client.as_deref() == name)
        {
            Some(i) => &mut self.clients[i],
            None => {
                self.clients.push(ClientAcc {
                    client: name.map(str::to_string),
                    calls: 0,
                    ok: 0,
                    sessions: HashSet::new(),
                });
                self.clients.last_mut().expect("pushed above")
            }
        };
        client.calls += 1;
        client.ok += u64::from(c.ok);
        client.sessions.insert(session);
    }

    pub fn finish(self) -> Scan {
        let mut tools: Vec<ToolUsageRow> = self
            .tools
            .into_values()
            .map(|mut t| {
                t.row.sessions = t.sessions.len() as u64;
                t.row.ok_sessions = t.ok_sessions.len() as u64;
                t.row.last_call = (!t.last_call.is_empty()).then_some(t.last_call);
                t.row
            })
            .collect();
        tools.sort_by(|a, b| a.tool.cmp(&b.tool));
        let mut clients: Vec<ClientRow> = self
            .clients
            .into_iter()
            .map(|c| ClientRow {
                client: c.client,
                calls: c.calls,
                ok: c.ok,
                sessions: c.sessions.len() as u64,
            })
            .collect();
        clients.sort_by(|a, b| b.calls.cmp(&a.calls).then_with(|| a.client.cmp(&b.client)));
        Scan {
            tools,
            clients,
            sessions: self.session_ids.len() as u64,
            hits: self.hits,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c<'a>(ts: &'a str, tool: &'a str, session: &'a str, via: &'a str, ok: bool) -> CallRef<'a> {
        CallRef {
            ts,
            tool,
            session_id: session,
            client: if session == "s1" {
                Some("claude-code")
            } else {
                None
            },
            via,
            ok,
        }
    }

    #[test]
    fn counts_sessions_vias_and_hits() {
        let intervals = vec![Interval {
            tool: "a".into(),
            from: "2026-01-02".into(),
            to: Some("2026-01-04".into()),
        }];
        let mut agg = Aggregate::new(&intervals);
        for call in [
            c("2026-01-01", "a", "s1", "direct", true), // before the interval
            c("2026-01-02", "a", "s1", "direct", true), // hit (from is inclusive)
            c("2026-01-03", "a", "s2", "call_tool", true), // call_tool: no hit
            c("2026-01-03", "a", "s2", "transcript:codex", false), // failure
            c("2026-01-04", "a", "s2", "direct", true), // `to` is exclusive
            c("2026-01-03", "b", "s3", "direct", true), // b never listed
        ] {
            agg.add(&call);
        }
        let scan = agg.finish();
        assert_eq!(scan.hits, 1);
        assert_eq!(scan.sessions, 3);
        let a = &scan.tools[0];
        assert_eq!(
            (a.tool.as_str(), a.calls, a.ok, a.sessions, a.ok_sessions),
            ("a", 5, 4, 2, 2)
        );
        assert_eq!(
            (a.direct, a.call_tool, a.transcript, a.ok_not_call_tool),
            (3, 1, 1, 3)
        );
        assert_eq!(a.last_call.as_deref(), Some("2026-01-04"));
        assert_eq!(scan.tools[1].tool, "b");
        let clients: Vec<_> = scan
            .clients
            .iter()
            .map(|c| (c.client.as_deref(), c.calls, c.ok, c.sessions))
            .collect();
        assert_eq!(clients, [(None, 4, 3, 2), (Some("claude-code"), 2, 2, 1)]);
    }

    /// Codex over MCP (`codex-mcp-client`) and Codex's transcripts (`codex`) are one client.
    #[test]
    fn one_client_under_two_names_is_counted_once() {
        let mut agg = Aggregate::new(&[]);
        for (session, client) in [("s1", "codex-mcp-client"), ("s2", "codex"), ("s1", "codex")] {
            agg.add(&CallRef {
                ts: "2026-01-01",
                tool: "a",
                session_id: session,
                client: Some(client),
                via: "direct",
                ok: true,
            });
        }
        let clients: Vec<_> = agg
            .finish()
            .clients
            .iter()
            .map(|c| (c.client.clone(), c.calls, c.sessions))
            .collect();
        assert_eq!(clients, [(Some("codex".to_string()), 3, 2)]);
    }
}
