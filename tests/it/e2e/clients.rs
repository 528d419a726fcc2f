//! Driving the real Claude Code and Codex CLIs non-interactively: an isolated HOME (and
//! CODEX_HOME) per client, the model pointed at the mock on loopback, telemetry off, one MCP server
//! registered over Streamable HTTP. Each run returns its session id and the transcript it wrote.
//! Must not read or write anything of the developer's own client setup.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::peers::{CLI_TIMEOUT, Proc, clean_command, find_file, json_lines, peer};

/// The Claude Code CLI with its own HOME and project directory under `dir`.
pub struct Claude {
    pub home: PathBuf,
    pub project: PathBuf,
    logs: PathBuf,
    model_url: String,
}

/// One `claude -p` run.
pub struct ClaudeRun {
    pub session_id: String,
    /// The `--output-format json` result.
    pub result: Value,
    /// `~/.claude/projects/<cwd>/<session_id>.jsonl`.
    pub transcript: PathBuf,
}

impl Claude {
    pub fn new(dir: &Path, model_url: &str) -> Claude {
        let home = dir.join("claude-home");
        let project = dir.join("claude-project");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&project).unwrap();
        Claude {
            home,
            project,
            logs: dir.to_path_buf(),
            model_url: model_url.to_string(),
        }
    }

    /// Claude Code with `home` as HOME and `project` as its working directory (both made), its
    /// logs in `logs`.
    pub fn in_home(home: &Path, project: &Path, logs: &Path, model_url: &str) -> Claude {
        std::fs::create_dir_all(home).unwrap();
        std::fs::create_dir_all(project).unwrap();
        Claude {
            home: home.to_path_buf(),
            project: project.to_path_buf(),
            logs: logs.to_path_buf(),
            model_url: model_url.to_string(),
        }
    }

    /// `claude mcp ARGS` run to completion; its stdout and stderr.
    pub fn mcp(&self, label: &str, args: &[&str]) -> (String, String) {
        let mut c = self.command();
        c.arg("mcp").args(args);
        let mut p = Proc::spawn(label, c, &self.logs);
        p.expect_success(CLI_TIMEOUT);
        (p.stdout(), p.stderr())
    }

    fn command(&self) -> Command {
        let mut c = clean_command(&peer(".bin/claude"));
        c.current_dir(&self.project)
            .env("HOME", &self.home)
            .env("ANTHROPIC_BASE_URL", &self.model_url)
            .env("ANTHROPIC_API_KEY", "test")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("DISABLE_ERROR_REPORTING", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            // Claude Code waits at most this long (5 s unless set) for its MCP servers before the
            // first request, then goes on without the ones still starting. On the test machine,
            // loaded by the rest of the suite, a stdio mws and its two servers can take longer
            // to start: these tests check what mws answers, not how fast the machine is.
            .env("MCP_CONNECT_TIMEOUT_MS", "30000");
        c
    }

    /// `claude mcp add -s user --transport http NAME URL`.
    pub fn add_http_server(&self, name: &str, url: &str) {
        let mut c = self.command();
        c.args(["mcp", "add", "-s", "user", "--transport", "http", name, url]);
        Proc::spawn("claude-mcp-add", c, &self.logs).expect_success(CLI_TIMEOUT);
    }

    /// `claude -p PROMPT --output-format json --allowedTools ALLOWED`; `label` names the log files.
    pub fn print(&self, label: &str, prompt: &str, allowed: &str) -> ClaudeRun {
        let mut c = self.command();
        c.args([
            "-p",
            prompt,
            "--output-format",
            "json",
            "--allowedTools",
            allowed,
        ]);
        let mut p = Proc::spawn(label, c, &self.logs);
        p.expect_success(CLI_TIMEOUT);
        let result: Value = serde_json::from_str(p.stdout().trim()).unwrap_or_else(|e| {
            panic!(
                "{label}: stdout is not one JSON result ({e}):\n{}",
                p.stdout()
            )
        });
        let session_id = result["session_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{label}: no session_id in {result}"))
            .to_string();
        let name = format!("{session_id}.jsonl");
        let transcript = find_file(&self.home.join(".claude/projects"), &|n| n == name)
            .unwrap_or_else(|| panic!("{label}: no transcript {name} under the isolated HOME"));
        ClaudeRun {
            session_id,
            result,
            transcript,
        }
    }

    /// The transcript root `mws ingest` reads.
    pub fn transcripts_root(&self) -> PathBuf {
        self.home.join(".claude/projects")
    }
}

/// The Codex CLI with its own HOME, CODEX_HOME and project directory under `dir`.
pub struct Codex {
    pub home: PathBuf,
    pub codex_home: PathBuf,
    pub project: PathBuf,
    logs: PathBuf,
}

/// One `codex exec` run.
pub struct CodexRun {
    /// `session_meta.payload.id` of the rollout (= the exec's thread id).
    pub session_id: String,
    /// `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<ts>-<id>.jsonl`.
    pub rollout: PathBuf,
    /// The `--json` events printed on stdout.
    pub events: Vec<Value>,
}

/// A model slug Codex does not know: no tool_search, every MCP tool up front.
pub const CODEX_UNKNOWN_MODEL: &str = "mock-model";
/// A model Codex knows: MCP tools deferred behind its client-side tool_search, as users see it.
pub const CODEX_KNOWN_MODEL: &str = "gpt-5.5-codex";

impl Codex {
    /// Writes `config.toml`: the mock as the model provider, analytics off, one MCP server whose
    /// tools are approved (Codex refuses tools without readOnlyHint under approval_policy never).
    pub fn new(dir: &Path, model: &str, model_url: &str, server: &str, mcp_url: &str) -> Codex {
        let home = dir.join("codex-user-home");
        let codex_home = dir.join("codex-home");
        let project = dir.join("codex-project");
        for d in [&home, &codex_home, &project] {
            std::fs::create_dir_all(d).unwrap();
        }
        let config = format!(
            "{}\n[mcp_servers.{server}]\nurl = \"{mcp_url}\"\n\
             default_tools_approval_mode = \"approve\"\n",
            model_config(model, model_url)
        );
        std::fs::write(codex_home.join("config.toml"), config).unwrap();
        Codex {
            home,
            codex_home,
            project,
            logs: dir.to_path_buf(),
        }
    }

    /// Codex with `home` as HOME, its default CODEX_HOME (`~/.codex`) holding a `config.toml`
    /// with the mock as the model provider and no MCP server (add them with [`Codex::mcp`]).
    pub fn in_home(
        home: &Path,
        project: &Path,
        logs: &Path,
        model: &str,
        model_url: &str,
    ) -> Codex {
        let codex_home = home.join(".codex");
        for d in [home, &codex_home, project] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(
            codex_home.join("config.toml"),
            model_config(model, model_url),
        )
        .unwrap();
        Codex {
            home: home.to_path_buf(),
            codex_home,
            project: project.to_path_buf(),
            logs: logs.to_path_buf(),
        }
    }

    fn command(&self) -> Command {
        let mut c = clean_command(&peer(".bin/codex"));
        c.current_dir(&self.project)
            .env("HOME", &self.home)
            .env("CODEX_HOME", &self.codex_home);
        c
    }

    /// `codex mcp ARGS` run to completion.
    pub fn mcp(&self, label: &str, args: &[&str]) {
        let mut c = self.command();
        c.arg("mcp").args(args);
        Proc::spawn(label, c, &self.logs).expect_success(CLI_TIMEOUT);
    }

    /// `codex exec --json --skip-git-repo-check PROMPT` run to its end, whatever its exit.
    pub fn exec_proc(&self, label: &str, prompt: &str) -> Proc {
        let mut c = self.command();
        c.args(["exec", "--json", "--skip-git-repo-check", prompt]);
        let mut p = Proc::spawn(label, c, &self.logs);
        p.wait(CLI_TIMEOUT);
        p
    }

    /// `codex exec --json --skip-git-repo-check PROMPT`; `label` names the log files.
    pub fn exec(&self, label: &str, prompt: &str) -> CodexRun {
        let mut p = self.exec_proc(label, prompt);
        p.expect_success(CLI_TIMEOUT);
        let events: Vec<Value> = p
            .stdout()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect();
        let thread = events
            .iter()
            .find_map(|e| e["thread_id"].as_str())
            .unwrap_or_else(|| panic!("{label}: no thread_id in stdout:\n{}", p.stdout()))
            .to_string();
        let rollout = find_file(&self.codex_home.join("sessions"), &|n| {
            n.starts_with("rollout-") && n.ends_with(&format!("{thread}.jsonl"))
        })
        .unwrap_or_else(|| panic!("{label}: no rollout for thread {thread} under CODEX_HOME"));
        let meta = json_lines(&rollout)
            .into_iter()
            .find(|l| l["type"] == "session_meta")
            .unwrap_or_else(|| panic!("{}: no session_meta line", rollout.display()));
        let session_id = meta["payload"]["id"].as_str().unwrap().to_string();
        CodexRun {
            session_id,
            rollout,
            events,
        }
    }

    /// The transcript root `mws ingest` reads.
    pub fn transcripts_root(&self) -> PathBuf {
        self.codex_home.join("sessions")
    }
}

/// The top of a Codex `config.toml`: `model`, the mock as its provider, `approval_policy =
/// "never"` (a tool not marked readOnlyHint is refused), a read-only sandbox, analytics off.
fn model_config(model: &str, model_url: &str) -> String {
    format!(
        r#"model = "{model}"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "read-only"

[model_providers.mock]
name = "mock"
base_url = "{model_url}/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false
"#
    )
}
