//! The Codex adapter: `$CODEX_HOME/sessions/**/rollout-*.jsonl`, every envelope generation (flat
//! 2025 items, `{timestamp,type,payload}`, 0.169's `{timestamp,ordinal,type,payload}`) and every
//! MCP naming generation. The outcome comes from `item_completed`/`McpToolCall` or
//! `mcp_tool_call_end` where present, else from the output text. Pure parsing: never keeps
//! arguments or result text.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::Value;

use super::names::{Client, Names, Resolved};
use super::scan::{self, Needle};
use super::status::{self, Status};
use super::{Adapter, Event};
use crate::call::Call;
use crate::clock;
use crate::config::TranscriptKind;
use crate::project;

static TYPE_KEY: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"type\":\""));
static FUNCTION_CALL: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"function_call\""));
static CUSTOM_CALL: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"custom_tool_call\""));
static CODE_MODE_MCP: LazyLock<Needle> = LazyLock::new(|| Needle::new("tools.mcp__"));
static OUTPUT: LazyLock<Needle> = LazyLock::new(|| Needle::new("_call_output\""));
static CALL_ID: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"call_id\":\""));
static CALL_END: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"mcp_tool_call_end\""));
static MCP_ITEM: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"McpToolCall\""));
static ITEM_DONE: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"item_completed\""));
static ABORTED: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"turn_aborted\""));
static CWD: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"cwd\""));

/// Parses one Codex rollout file.
pub struct Codex<'a> {
    names: &'a Names,
    /// The file's own thread: the first `session_meta` id, else the id in the file name.
    own: String,
    own_seen: bool,
    /// The thread calls are attributed to: a forked rollout copies its parent's `session_meta`
    /// and items after its own; the next `turn_context` is the child's again.
    current: String,
    fallback_ts: String,
    last_ts: Option<String>,
    /// Code-mode `exec` calls → how many MCP calls their program makes.
    exec_calls: HashMap<String, usize>,
    /// The folder of the last `session_meta` or `turn_context` (`cwd`): the calls' project.
    project: Option<String>,
}

/// The thread id in a rollout file name `rollout-<time>-<uuid>`, else the whole stem.
pub fn stem_id(stem: &str) -> String {
    // `get`: a non-ASCII file name may put a character across the cut (found by fuzzing).
    let tail = stem.len().checked_sub(36).and_then(|i| stem.get(i..));
    match tail {
        Some(t) if t.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-') => t.to_string(),
        _ => stem.to_string(),
    }
}

impl<'a> Codex<'a> {
    pub fn new(names: &'a Names, stem: &str, fallback_ts: &str) -> Codex<'a> {
        let own = stem_id(stem);
        Codex {
            names,
            current: own.clone(),
            own,
            own_seen: false,
            fallback_ts: fallback_ts.to_string(),
            last_ts: None,
            exec_calls: HashMap::new(),
            project: None,
        }
    }

    fn session_meta(&mut self, id: &str) {
        if !self.own_seen {
            self.own_seen = true;
            self.own = id.to_string();
        }
        self.current = id.to_string();
    }

    /// Takes a `session_meta` or `turn_context` payload's `cwd` as the project of the calls after
    /// it; one without a usable `cwd` leaves the project as it was.
    fn saw_cwd(&mut self, payload: &Value) {
        if let Some(p) = payload
            .get("cwd")
            .and_then(Value::as_str)
            .and_then(project::normalise)
        {
            self.project = Some(p);
        }
    }

    /// The call a recorded name stands for: our tool (mapped), `call_tool`'s target, or nothing.
    fn tool_of(&self, resolved: Resolved, args: Option<&Value>) -> Option<String> {
        match resolved {
            Resolved::Tool(t) => Some(t),
            Resolved::NotACall => None,
            Resolved::CallTool => {
                let args = match args? {
                    Value::String(s) => serde_json::from_str::<Value>(s).ok()?,
                    v => v.clone(),
                };
                let inner = args.get("name")?.as_str()?;
                Some(self.names.call_tool_target(inner, Client::Codex))
            }
        }
    }

    fn call(
        &self,
        id: &str,
        server: &str,
        tool: String,
        ts: &str,
        status: Option<Status>,
    ) -> Event {
        let kind = TranscriptKind::Codex.as_str();
        let mut call = Call::from_transcript(kind, id, self.current.clone(), ts, server, tool);
        call.status = status;
        call.project.clone_from(&self.project);
        Event::Call(Box::new(call))
    }

    fn item(
        &mut self,
        item: &Value,
        ts: &str,
        wanted: &dyn Fn(&str) -> bool,
        out: &mut Vec<Event>,
    ) {
        let s = |k: &str| item.get(k).and_then(Value::as_str);
        match s("type") {
            Some("function_call") => {
                let (Some(id), Some(name)) = (s("call_id"), s("name")) else {
                    return;
                };
                let Some((server, resolved)) = self.names.codex_tool(s("namespace"), name) else {
                    return;
                };
                if let Some(tool) = self.tool_of(resolved, item.get("arguments")) {
                    out.push(self.call(id, server, tool, ts, None));
                }
            }
            Some("custom_tool_call") if s("name") == Some("exec") => {
                let (Some(id), Some(program)) = (s("call_id"), s("input")) else {
                    return;
                };
                let mut n = 0;
                for rest in program.split("tools.mcp__").skip(1) {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
                        .collect();
                    if let Some((server, resolved)) =
                        self.names.codex_tool(None, &format!("mcp__{name}"))
                        && let Some(tool) = self.tool_of(resolved, None)
                    {
                        n += 1;
                        let key = if n == 1 {
                            id.to_string()
                        } else {
                            format!("{id}#{n}")
                        };
                        out.push(self.call(&key, server, tool, ts, None));
                    }
                }
                if n > 0 {
                    self.exec_calls.insert(id.to_string(), n);
                }
            }
            Some("function_call_output") => {
                let Some(id) = s("call_id").filter(|id| wanted(id)) else {
                    return;
                };
                let status = status::codex_output(item.get("output").unwrap_or(&Value::Null));
                out.push(result(id, status, None, None));
            }
            Some("custom_tool_call_output") => {
                let Some(id) = s("call_id").filter(|id| wanted(id)) else {
                    return;
                };
                let texts = status::texts(item.get("output").unwrap_or(&Value::Null));
                let failed = texts.iter().any(|t| {
                    let t = t.trim_start().to_lowercase();
                    t.starts_with("script failed") || t.starts_with("script error")
                });
                let status = if failed {
                    Status::ErrorHeuristic
                } else {
                    status::unflagged(&texts)
                };
                let n = self.exec_calls.remove(id).unwrap_or(1);
                for k in 1..=n {
                    let key = if k == 1 {
                        id.to_string()
                    } else {
                        format!("{id}#{k}")
                    };
                    out.push(result(&key, status, None, None));
                }
            }
            Some("mcp_tool_call_end") => self.call_end(item, ts, wanted, out),
            Some("item_completed") => self.item_completed(item, ts, wanted, out),
            Some("turn_aborted") => out.push(Event::AbortOpen),
            _ => {}
        }
    }

    /// `mcp_tool_call_end` (extended persistence): raw server and tool, `Ok{isError}` or `Err`.
    fn call_end(
        &self,
        item: &Value,
        ts: &str,
        wanted: &dyn Fn(&str) -> bool,
        out: &mut Vec<Event>,
    ) {
        let Some(id) = item.get("call_id").and_then(Value::as_str) else {
            return;
        };
        let inv = item.get("invocation");
        let field = |k: &str| inv.and_then(|i| i.get(k)).and_then(Value::as_str);
        let status = match item.get("result") {
            Some(r) if r.get("Err").is_some() => {
                status::flagged(&status::texts(r.get("Err").unwrap_or(&Value::Null)))
            }
            Some(r) => match r.get("Ok").and_then(|o| o.get("isError")) {
                Some(Value::Bool(true)) => Status::Error,
                _ => Status::Ok,
            },
            None => return,
        };
        let ms = item.get("duration").and_then(duration_ms);
        self.outcome(
            id,
            field("server"),
            field("tool"),
            inv.and_then(|i| i.get("arguments")),
            status,
            ms,
            ts,
            wanted,
            out,
        );
    }

    /// 0.169 `item_completed` with an `McpToolCall` item: raw server and tool, `status`,
    /// `result.isError`, or `error` when the call was refused.
    fn item_completed(
        &self,
        payload: &Value,
        ts: &str,
        wanted: &dyn Fn(&str) -> bool,
        out: &mut Vec<Event>,
    ) {
        let Some(item) = payload.get("item") else {
            return;
        };
        let s = |k: &str| item.get(k).and_then(Value::as_str);
        let (Some("McpToolCall"), Some(id)) = (s("type"), s("id")) else {
            return;
        };
        let error = item.get("error").filter(|e| !e.is_null());
        let is_error =
            item.get("result").and_then(|r| r.get("isError")) == Some(&Value::Bool(true));
        let status = if let Some(e) = error {
            let msg = e.get("message").unwrap_or(e);
            status::flagged(&status::texts(msg))
        } else if is_error || s("status") == Some("failed") {
            Status::Error
        } else if s("status") == Some("completed") {
            Status::Ok
        } else {
            return;
        };
        let ms = item.get("duration").and_then(duration_ms);
        self.outcome(
            id,
            s("server"),
            s("tool"),
            item.get("arguments"),
            status,
            ms,
            ts,
            wanted,
            out,
        );
    }

    /// An authoritative outcome: completes the awaited call, or records the call itself when no
    /// function_call line was seen for it (dedupe happens in the store).
    #[allow(clippy::too_many_arguments)]
    fn outcome(
        &self,
        id: &str,
        server: Option<&str>,
        tool: Option<&str>,
        args: Option<&Value>,
        status: Status,
        ms: Option<i64>,
        ts: &str,
        wanted: &dyn Fn(&str) -> bool,
        out: &mut Vec<Event>,
    ) {
        let server = server.and_then(|s| self.names.codex_server_raw(s));
        let tool = match (server, tool) {
            (Some(s), Some(t)) => self.tool_of(self.names.resolve_on(s, t, Client::Codex), args),
            _ => None,
        };
        if wanted(id) {
            out.push(result(id, status, tool, ms));
        } else if let (Some(server), Some(tool)) = (server, tool) {
            let mut e = self.call(id, server, tool, ts, Some(status));
            if let Event::Call(c) = &mut e {
                c.ms = ms;
            }
            out.push(e);
        }
    }
}

fn result(id: &str, status: Status, tool: Option<String>, ms: Option<i64>) -> Event {
    Event::Result {
        id: id.to_string(),
        status,
        tool,
        ms,
    }
}

fn duration_ms(d: &Value) -> Option<i64> {
    let secs = d.get("secs")?.as_i64()?;
    let nanos = d.get("nanos").and_then(Value::as_i64).unwrap_or(0);
    Some(secs * 1000 + nanos / 1_000_000)
}

impl Adapter for Codex<'_> {
    fn line(
        &mut self,
        raw: &[u8],
        wanted: &dyn Fn(&str) -> bool,
        out: &mut Vec<Event>,
    ) -> Result<(), String> {
        // Pre-filter on the raw bytes; a line whose type is not found this way (other JSON
        // formatting) is parsed and sorted below.
        match scan::first_type(raw, &TYPE_KEY) {
            Some(b"turn_context") if !CWD.is_in(raw) => {
                self.current = self.own.clone();
                return Ok(());
            }
            Some(b"turn_context") => {}
            Some(b"compacted") => return Ok(()),
            Some(b"session_meta") | None => {}
            Some(_) => {
                let mut ids = scan::values_after(raw, &CALL_ID).peekable();
                let relevant = FUNCTION_CALL.is_in(raw)
                    || (CUSTOM_CALL.is_in(raw) && CODE_MODE_MCP.is_in(raw))
                    || (OUTPUT.is_in(raw) && (ids.peek().is_none() || ids.any(wanted)))
                    || CALL_END.is_in(raw)
                    || (MCP_ITEM.is_in(raw) && ITEM_DONE.is_in(raw))
                    || ABORTED.is_in(raw);
                if !relevant {
                    return Ok(());
                }
            }
        }
        let v: Value = super::parse_line(raw)?;
        if let Some(ts) = v
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(clock::normalize)
        {
            self.last_ts = Some(ts);
        }
        let ts = self
            .last_ts
            .clone()
            .unwrap_or_else(|| self.fallback_ts.clone());
        let kind = v.get("type").and_then(Value::as_str);
        match (kind, v.get("payload")) {
            (Some("session_meta"), Some(p)) => {
                if let Some(id) = p.get("id").and_then(Value::as_str) {
                    self.session_meta(id);
                }
                self.saw_cwd(p);
            }
            (Some("turn_context"), p) => {
                self.current = self.own.clone();
                if let Some(p) = p {
                    self.saw_cwd(p);
                }
            }
            (Some("compacted"), _) => {}
            (Some("response_item" | "event_msg"), Some(p)) => self.item(p, &ts, wanted, out),
            (Some(_), Some(_)) => {}
            // 2025 flat items: the line is the item.
            (Some(_), None) => self.item(&v, &ts, wanted, out),
            // The 2025 header line `{"id","timestamp",…}` has no type.
            (None, _) => {
                if !self.own_seen
                    && let Some(id) = v.get("id").and_then(Value::as_str)
                {
                    self.session_meta(id);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "codex_tests.rs"]
mod tests;
