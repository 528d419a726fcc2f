//! One tool call: the one type that goes from the transcript adapters and the proxy's call log to
//! the `calls` table, its outcome taxonomy, and the rule that makes the proxy's sighting and a
//! transcript's sighting of the same call one row. Pure: no SQL, no parsing, no clock. Must never
//! carry tool arguments, results or query text.

/// One MCP tool call, as the proxy logged it or as a transcript records it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Call {
    /// Unique per sighting: `proxy:<run id>:<n>`, `claude-code:<tool_use id>`, `codex:<call_id>`.
    /// A source key already stored is never stored again.
    pub source_key: String,
    /// Stored form (`clock::fmt`): when the proxy answered it, or the transcript line's time.
    pub ts: String,
    pub session_id: String,
    /// The project the call was made in (`crate::project`): a transcript line's `cwd`, a
    /// `--stdio` child's working directory, an HTTP session's first root; `None` where unknown.
    pub project: Option<String>,
    /// The server as configured (`serverNames`), when a transcript names it. Not stored.
    pub server: Option<String>,
    /// The upstream's name for the tool.
    pub tool: String,
    /// `direct` or `call_tool` (the proxy), `transcript:<adapter>` (ingest).
    pub via: String,
    /// `clientInfo.name` (the proxy) or the adapter name (`claude-code`, `codex`).
    pub client: Option<String>,
    /// The client's own call id (Claude Code's tool_use id, Codex's call_id): what matches a
    /// proxy row with a transcript row.
    pub client_call_id: Option<String>,
    /// Claude Code sub-agent id (lines in `subagents/agent-*.jsonl`). Not stored.
    pub agent_id: Option<String>,
    /// How it ended; `None` while a transcript call waits for its result line.
    pub status: Option<Status>,
    pub ms: Option<i64>,
    /// Bytes of text the proxy cut from the result (`crate::results`); `None` when it passed
    /// whole. A count only: the result itself is never carried.
    pub bytes_saved: Option<i64>,
}

/// How one call ended. Only `Ok` counts toward promotion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Status {
    Ok,
    /// Flagged as failed: `isError`, a JSON-RPC error (the proxy); `is_error`, `Err`, `failed`,
    /// `err:` (a transcript).
    Error,
    /// No flag, but the result reads as a failure (`{"error": …}`, `MCP error -32…`).
    ErrorHeuristic,
    /// A permission denial or a user rejection: the tool never ran.
    Denied,
    /// The turn was aborted or interrupted before the call answered.
    Aborted,
    /// The upstream did not answer within the proxy's timeout.
    Timeout,
    /// The proxy could not get an answer from the upstream (down, closed, not a result).
    Upstream,
    /// The proxy refused the call: its arguments do not match the tool's `inputSchema`.
    InvalidArgs,
    /// The proxy refused the call: the config's `policy` excludes the tool.
    DeniedByPolicy,
    /// The proxy refused the call: the tool's definition is held until the user approves it.
    Held,
}

const ALL: [Status; 10] = [
    Status::Ok,
    Status::Error,
    Status::ErrorHeuristic,
    Status::Denied,
    Status::Aborted,
    Status::Timeout,
    Status::Upstream,
    Status::InvalidArgs,
    Status::DeniedByPolicy,
    Status::Held,
];

impl Status {
    pub fn ok(self) -> bool {
        self == Status::Ok
    }

    /// The `calls.error_kind` value: `None` on success.
    pub fn error_kind(self) -> Option<&'static str> {
        match self {
            Status::Ok => None,
            s => Some(s.as_str()),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::ErrorHeuristic => "error_heuristic",
            Status::Denied => "denied",
            Status::Aborted => "aborted",
            Status::Timeout => "timeout",
            Status::Upstream => "upstream",
            Status::InvalidArgs => "invalid_args",
            Status::DeniedByPolicy => "denied_by_policy",
            Status::Held => "held",
        }
    }

    /// The status a stored row's `ok` and `error_kind` columns say; `None` for a failure whose
    /// kind is not one of these.
    pub fn from_stored(ok: bool, error_kind: Option<&str>) -> Option<Status> {
        if ok {
            return Some(Status::Ok);
        }
        let kind = error_kind?;
        ALL.into_iter().find(|s| !s.ok() && s.as_str() == kind)
    }
}

impl Call {
    /// A call a transcript of `adapter` (`claude-code`, `codex`) records under the client's call
    /// id `id`; its status and duration are filled in when known.
    pub fn from_transcript(
        adapter: &str,
        id: &str,
        session_id: String,
        ts: &str,
        server: &str,
        tool: String,
    ) -> Call {
        Call {
            source_key: format!("{adapter}:{id}"),
            ts: ts.to_string(),
            session_id,
            project: None,
            server: Some(server.to_string()),
            tool,
            via: format!("transcript:{adapter}"),
            client: Some(adapter.to_string()),
            client_call_id: Some(id.to_string()),
            agent_id: None,
            status: None,
            ms: None,
            bytes_saved: None,
        }
    }

    /// The client's call id, empty when the client sent none.
    pub fn call_id(&self) -> &str {
        self.client_call_id.as_deref().unwrap_or("")
    }

    /// Whether a transcript recorded this sighting (else the proxy logged it).
    pub fn from_a_transcript(&self) -> bool {
        self.via.starts_with("transcript:")
    }

    /// `ok` as stored: only a known success.
    pub fn ok(&self) -> bool {
        self.status.is_some_and(Status::ok)
    }

    /// `error_kind` as stored.
    pub fn error_kind(&self) -> Option<&'static str> {
        self.status.and_then(Status::error_kind)
    }
}

/// Names one client goes by in the `calls` table: Codex introduces itself over MCP as
/// `codex-mcp-client`, and its transcripts are ingested as `codex`. Reports count one client
/// once, under the second name.
pub const CLIENT_ALIASES: &[(&str, &str)] = &[("codex-mcp-client", "codex")];

/// The name a client is counted under in reports (`CLIENT_ALIASES`).
pub fn client_family(name: &str) -> &str {
    CLIENT_ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, family)| family)
}

/// The one row of a call both the proxy and a transcript recorded (the same client call id),
/// whichever was stored first. The proxy saw the upstream's answer, so the row is the proxy's
/// (its time, tool name, `via`, outcome and source key); the transcript knows the client's
/// session, so the row is in the transcript's session. A duration or client name the proxy did
/// not have comes from the transcript, and so does a project the proxy did not know (the
/// proxy's is the one the session listed under).
pub fn merge(proxy: &Call, transcript: &Call) -> Call {
    Call {
        session_id: transcript.session_id.clone(),
        project: proxy.project.clone().or_else(|| transcript.project.clone()),
        ms: proxy.ms.or(transcript.ms),
        client: proxy.client.clone().or_else(|| transcript.client.clone()),
        server: proxy.server.clone().or_else(|| transcript.server.clone()),
        agent_id: proxy
            .agent_id
            .clone()
            .or_else(|| transcript.agent_id.clone()),
        ..proxy.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proxy() -> Call {
        Call {
            source_key: "proxy:r1:0".into(),
            ts: "2026-11-29T10:00:00.100Z".into(),
            session_id: "proxy:claude-code:1".into(),
            tool: "mail.send".into(),
            via: "call_tool".into(),
            client: Some("claude-code".into()),
            client_call_id: Some("toolu_1".into()),
            status: Some(Status::Timeout),
            ms: Some(4),
            ..Call::default()
        }
    }

    fn transcript() -> Call {
        let mut c = Call::from_transcript(
            "claude-code",
            "toolu_1",
            "sess-A".into(),
            "2026-11-29T10:00:00.000Z",
            "toolbox",
            "mail_send".into(),
        );
        c.agent_id = Some("agent-1".into());
        c.status = Some(Status::ErrorHeuristic);
        c.ms = Some(9);
        c
    }

    #[test]
    fn merge_is_the_proxys_row_in_the_transcripts_session() {
        let got = merge(&proxy(), &transcript());
        let want = Call {
            session_id: "sess-A".into(),
            server: Some("toolbox".into()),
            agent_id: Some("agent-1".into()),
            ..proxy()
        };
        assert_eq!(got, want);
        // What the proxy lacks, the transcript gives.
        let bare = Call {
            ms: None,
            client: None,
            ..proxy()
        };
        let got = merge(&bare, &transcript());
        assert_eq!(
            (got.ms, got.client.as_deref()),
            (Some(9), Some("claude-code"))
        );
    }

    #[test]
    fn status_round_trips_through_its_columns() {
        for s in ALL {
            assert_eq!(
                Status::from_stored(s.ok(), s.error_kind()),
                Some(s),
                "{s:?}"
            );
        }
        assert_eq!(Status::from_stored(false, Some("gremlins")), None);
        assert_eq!(Status::from_stored(false, None), None);
    }
}
