//! The Claude Code adapter: `~/.claude/projects/<cwd>/<session>.jsonl` and sub-agent files. Reads
//! only top-level `user`/`assistant` lines (progress mirrors and `api-request-blob` copies hold the
//! same blocks again), `tool_use` blocks named `mcp__<server>__<tool>` and their `tool_result`.
//! Pure parsing: never keeps arguments or result text.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::Value;

use super::names::{Client, Names, Resolved};
use super::scan::{self, Needle};
use super::status::{self, Status};
use super::{Adapter, Event};
use crate::call::Call;
use crate::clock;
use crate::config::TranscriptKind;
use crate::project;

static TOOL_USE: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"tool_use\""));
static TOOL_RESULT: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"tool_result\""));
static TOOL_USE_ID: LazyLock<Needle> = LazyLock::new(|| Needle::new("\"tool_use_id\":\""));

/// The fields of a transcript line this adapter reads; everything else is skipped unparsed.
#[derive(Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(rename = "sessionId")]
    session_id: Option<String>,
    timestamp: Option<String>,
    #[serde(rename = "agentId")]
    agent_id: Option<String>,
    message: Option<Message>,
    #[serde(rename = "permissionDecision")]
    permission: Option<Value>,
    /// The folder Claude Code ran in: the call's project (a value of another type is ignored,
    /// not a reason to drop the line).
    cwd: Option<Value>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Value,
}

/// Parses one Claude Code transcript file.
pub struct ClaudeCode<'a> {
    names: &'a Names,
    prefixes: Vec<Needle>,
    /// The file stem: the session id when a line has none.
    stem: String,
    /// Used when no line so far had a timestamp (the file's mtime).
    fallback_ts: String,
    last_ts: Option<String>,
    /// The last line's `cwd` as a project, for a line that has none.
    last_cwd: Option<String>,
}

impl<'a> ClaudeCode<'a> {
    pub fn new(names: &'a Names, stem: &str, fallback_ts: &str) -> ClaudeCode<'a> {
        ClaudeCode {
            names,
            prefixes: names
                .claude_prefixes()
                .map(|p| Needle::new(&format!("\"{p}")))
                .collect(),
            stem: stem.to_string(),
            fallback_ts: fallback_ts.to_string(),
            last_ts: None,
            last_cwd: None,
        }
    }

    /// Whether the raw line may hold a call of ours or a result someone waits for.
    fn may_matter(&self, line: &[u8], wanted: &dyn Fn(&str) -> bool) -> bool {
        if let Some(t) = scan::leading_type(line)
            && t != b"user"
            && t != b"assistant"
        {
            return false;
        }
        if TOOL_USE.is_in(line) && self.prefixes.iter().any(|p| p.is_in(line)) {
            return true;
        }
        if !TOOL_RESULT.is_in(line) {
            return false;
        }
        let mut ids = scan::values_after(line, &TOOL_USE_ID).peekable();
        // No id found in the compact form: let the parser look.
        ids.peek().is_none() || ids.any(wanted)
    }

    fn call(&self, block: &Value, line: &Line, ts: &str, out: &mut Vec<Event>) {
        let (Some(id), Some(name)) = (
            block.get("id").and_then(Value::as_str),
            block.get("name").and_then(Value::as_str),
        ) else {
            return;
        };
        let Some((server, resolved)) = self.names.claude_tool(name) else {
            return;
        };
        let tool = match resolved {
            Resolved::Tool(t) => t,
            Resolved::NotACall => return,
            Resolved::CallTool => {
                match block
                    .get("input")
                    .and_then(|i| i.get("name"))
                    .and_then(Value::as_str)
                {
                    Some(inner) => self.names.call_tool_target(inner, Client::Claude),
                    None => return,
                }
            }
        };
        let session = line.session_id.clone().unwrap_or_else(|| self.stem.clone());
        let kind = TranscriptKind::ClaudeCode.as_str();
        let mut call = Call::from_transcript(kind, id, session, ts, server, tool);
        call.agent_id = line.agent_id.clone();
        call.project.clone_from(&self.last_cwd);
        out.push(Event::Call(Box::new(call)));
    }
}

/// The outcome of a `tool_result` block: `is_error: true` is a failure (or a denial, by its text or
/// the line's `permissionDecision`); absent means success unless the text reads as a failure.
fn result_status(block: &Value, permission: Option<&Value>) -> Status {
    let texts = status::texts(block.get("content").unwrap_or(&Value::Null));
    match block.get("is_error") {
        Some(Value::Bool(true)) => {
            let refused = permission
                .and_then(|p| p.get("decision"))
                .and_then(Value::as_str)
                .is_some_and(|d| matches!(d, "deny" | "denied" | "reject" | "rejected"));
            if refused {
                Status::Denied
            } else {
                status::flagged(&texts)
            }
        }
        Some(Value::Bool(false)) => Status::Ok,
        _ => status::unflagged(&texts),
    }
}

impl Adapter for ClaudeCode<'_> {
    fn line(
        &mut self,
        raw: &[u8],
        wanted: &dyn Fn(&str) -> bool,
        out: &mut Vec<Event>,
    ) -> Result<(), String> {
        if !self.may_matter(raw, wanted) {
            return Ok(());
        }
        let line: Line = super::parse_line(raw)?;
        if !matches!(line.kind.as_deref(), Some("user" | "assistant")) {
            return Ok(());
        }
        if let Some(ts) = line.timestamp.as_deref().and_then(clock::normalize) {
            self.last_ts = Some(ts);
        }
        if let Some(cwd) = line.cwd.as_ref().and_then(Value::as_str) {
            self.last_cwd = project::normalise(cwd);
        }
        let ts = self
            .last_ts
            .clone()
            .unwrap_or_else(|| self.fallback_ts.clone());
        let Some(Value::Array(blocks)) = line.message.as_ref().map(|m| &m.content) else {
            return Ok(());
        };
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("tool_use") => self.call(block, &line, &ts, out),
                Some("tool_result") => {
                    let Some(id) = block.get("tool_use_id").and_then(Value::as_str) else {
                        continue;
                    };
                    if wanted(id) {
                        out.push(Event::Result {
                            id: id.to_string(),
                            status: result_status(block, line.permission.as_ref()),
                            tool: None,
                            ms: None,
                        });
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::parse_all;

    fn run(
        servers: &[&str],
        catalog: &[&str],
        text: &str,
    ) -> (Vec<(String, String, Option<Status>)>, u64) {
        let names = Names::new(servers, catalog);
        let mut a = ClaudeCode::new(&names, "stem-session", "2026-01-01T00:00:00.000Z");
        let (calls, bad) = parse_all(&mut a, text.as_bytes());
        (
            calls
                .into_iter()
                .map(|c| {
                    (
                        c.call_id().to_string(),
                        format!("{}/{}@{}", c.server.unwrap(), c.tool, c.session_id),
                        c.status,
                    )
                })
                .collect(),
            bad,
        )
    }

    fn use_line(id: &str, name: &str, input: &str) -> String {
        format!(
            r#"{{"type":"assistant","sessionId":"s1","timestamp":"2026-11-28T10:00:00.5Z","message":{{"content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{input}}}]}}}}"#
        )
    }

    fn result_line(id: &str, rest: &str) -> String {
        format!(
            r#"{{"type":"user","sessionId":"s1","message":{{"content":[{{"tool_use_id":"{id}","type":"tool_result",{rest}}}]}}}}"#
        )
    }

    /// A call's project is its line's `cwd` (normalised), else the last `cwd` seen in the file;
    /// a relative or control-laden `cwd` is no project.
    #[test]
    fn the_project_is_the_lines_cwd() {
        let with_cwd = |id: &str, cwd: &str| {
            use_line(id, "mcp__toolbox__get-sum", "{}").replacen(
                "{\"type\"",
                &format!("{{\"cwd\":{cwd},\"type\""),
                1,
            )
        };
        let text = [
            use_line("t0", "mcp__toolbox__get-sum", "{}"),
            with_cwd("t1", r#""/home/u/repo/""#),
            use_line("t2", "mcp__toolbox__get-sum", "{}"),
            with_cwd("t3", r#""/home/u/other/./x/..""#),
            with_cwd("t4", r#""relative/dir""#),
            with_cwd("t5", r#""/home/u/\u001b[31mred""#),
            // A `cwd` of another type is no project, and the call still counts.
            with_cwd("t6", "123"),
        ]
        .join("\n")
            + "\n";
        let names = Names::new(&["toolbox"], &["get-sum"]);
        let mut a = ClaudeCode::new(&names, "stem", "2026-01-01T00:00:00.000Z");
        let (calls, bad) = parse_all(&mut a, text.as_bytes());
        assert_eq!(bad, 0);
        let got: Vec<(&str, Option<&str>)> = calls
            .iter()
            .map(|c| (c.call_id(), c.project.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                ("t0", None),
                ("t1", Some("/home/u/repo")),
                ("t2", Some("/home/u/repo")),
                ("t3", Some("/home/u/other")),
                ("t4", None),
                ("t5", None),
                ("t6", None),
            ]
        );
    }

    #[test]
    fn pairs_and_classifies() {
        let lines = [
            use_line("t1", "mcp__toolbox__get-sum", "{}"),
            result_line("t1", r#""content":[{"type":"text","text":"5"}]"#),
            use_line("t2", "mcp__toolbox__get-sum", "{}"),
            result_line(
                "t2",
                r#""content":"MCP error -32000: closed","is_error":true"#,
            ),
            use_line(
                "t3",
                "mcp__toolbox__call_tool",
                r#"{"name":"mail_send","arguments":{}}"#,
            ),
            result_line(
                "t3",
                r#""content":"Claude requested permissions to use mcp__toolbox__call_tool, but you haven't granted it yet.","is_error":true"#,
            ),
            use_line("t4", "mcp__toolbox__search_tools", r#"{"query":"q"}"#),
            use_line("t5", "mcp__other__x", "{}"),
            use_line("t6", "Bash", "{}"),
            use_line("t7", "mcp__toolbox__get-sum", "{}"),
            result_line("t7", r#""content":"{\"error\":\"nope\"}""#),
            use_line("t8", "mcp__toolbox__get-sum", "{}"),
            String::new(),
        ];
        let (calls, bad) = run(&["toolbox"], &["get-sum", "mail.send"], &lines.join("\n"));
        assert_eq!(bad, 0);
        let got: Vec<_> = calls
            .iter()
            .map(|(i, n, s)| (i.as_str(), n.as_str(), *s))
            .collect();
        assert_eq!(
            got,
            [
                ("t1", "toolbox/get-sum@s1", Some(Status::Ok)),
                ("t2", "toolbox/get-sum@s1", Some(Status::Error)),
                ("t3", "toolbox/mail.send@s1", Some(Status::Denied)),
                ("t7", "toolbox/get-sum@s1", Some(Status::ErrorHeuristic)),
                ("t8", "toolbox/get-sum@s1", None),
            ]
        );
    }

    #[test]
    fn ignores_mirrors_and_copies() {
        let nested = use_line("t9", "mcp__toolbox__echo", "{}");
        let lines = [
            format!(
                r#"{{"type":"progress","data":{{"type":"agent_progress","message":{nested}}}}}"#
            ),
            r#"{"type":"api-request-blob","message":{"content":[{"type":"tool_use","id":"t9","name":"mcp__toolbox__echo","input":{}}]}}"#.to_string(),
            format!(r#"{{"parentUuid":"x","type":"progress","data":{{"message":{nested}}}}}"#),
            String::new(),
        ];
        let (calls, bad) = run(&["toolbox"], &[], &lines.join("\n"));
        assert_eq!((calls.len(), bad), (0, 0), "{calls:?}");
    }

    #[test]
    fn session_falls_back_to_stem_and_bad_lines_count() {
        let lines = [
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"mcp__toolbox__echo","input":{}}]}}"#,
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"b","name":"mcp__toolbox__echo" BROKEN"#,
            "",
        ];
        let (calls, bad) = run(&["toolbox"], &[], &lines.join("\n"));
        assert_eq!(bad, 1);
        assert_eq!(calls[0].1, "toolbox/echo@stem-session");
    }

    #[test]
    fn spaced_json_is_read_too() {
        let lines = [
            r#"{"type": "assistant", "sessionId": "s1", "message": {"content": [{"type": "tool_use", "id": "a", "name": "mcp__toolbox__echo", "input": {}}]}}"#,
            r#"{"type": "user", "sessionId": "s1", "message": {"content": [{"tool_use_id": "a", "type": "tool_result", "content": "x", "is_error": true}]}}"#,
            "",
        ];
        let (calls, bad) = run(&["toolbox"], &[], &lines.join("\n"));
        assert_eq!(bad, 0);
        assert_eq!(
            calls,
            [("a".into(), "toolbox/echo@s1".into(), Some(Status::Error))]
        );
    }
}
