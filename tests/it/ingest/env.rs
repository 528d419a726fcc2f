//! The test environment for ingest: a temp dir with a state dir, a Claude Code root and a Codex
//! root holding copies of the fixtures, and the config that names them.

use std::io::Write;
use std::path::{Path, PathBuf};

use mws::ingest::{IngestSummary, Options, ingest_with};
use mws::store::Store;
use serde_json::json;

pub const SAMPLE_SERVERS: &[&str] = &[
    "github",
    "sentry",
    "linear-server",
    "context7",
    "claude.ai Notion",
    "plugin:episodic-memory:episodic-memory",
    "chrome-devtools",
    "linear",
];

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/transcripts")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), &dst).unwrap();
        }
    }
}

/// A temp dir with a state dir, a claude root and a codex root, and the config naming them.
pub struct Env {
    dir: tempfile::TempDir,
    pub config_path: PathBuf,
}

impl Env {
    pub fn new(servers: &[&str]) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("claude/projects")).unwrap();
        std::fs::create_dir_all(root.join("codex/sessions")).unwrap();
        // The fixtures' calls have fixed dates: a history kept for ever keeps them at any date.
        let config = json!({
            "stateDir": root.join("state"),
            "historyDays": 0,
            "transcripts": [
                {"type": "claude-code", "root": root.join("claude/projects"), "serverNames": servers},
                {"type": "codex", "root": root.join("codex/sessions"), "serverNames": servers},
            ]
        });
        let config_path = root.join("config.json");
        std::fs::write(&config_path, config.to_string()).unwrap();
        Env { dir, config_path }
    }

    /// The env with the sample transcripts of `fixtures/transcripts` (claude + codex).
    pub fn samples() -> Env {
        let env = Env::new(SAMPLE_SERVERS);
        copy_dir(&fixtures().join("claude"), &env.path("claude"));
        copy_dir(&fixtures().join("codex"), &env.path("codex"));
        env
    }

    /// The env with the real clients' files laid out as the clients write them.
    pub fn real() -> Env {
        let env = Env::new(&["toolbox"]);
        let real = fixtures().join("real");
        let project = env.path("claude/projects/-home-dev-project");
        let sub = project.join("4cf52b32-2521-48d0-b7c9-00b6c103ebdd/subagents");
        std::fs::create_dir_all(&sub).unwrap();
        for (from, to) in [
            (
                "claude-code-2.1.332.jsonl",
                project.join("4db42166-1ef2-462a-959b-a4af51fb8cf9.jsonl"),
            ),
            (
                "claude-code-2.1.332-subagent/parent-session.jsonl",
                project.join("4cf52b32-2521-48d0-b7c9-00b6c103ebdd.jsonl"),
            ),
            (
                "claude-code-2.1.332-subagent/subagent.jsonl",
                sub.join("agent-abba03a1d5561506a.jsonl"),
            ),
            (
                "claude-code-2.1.332-subagent/subagent.meta.json",
                sub.join("agent-abba03a1d5561506a.meta.json"),
            ),
        ] {
            std::fs::copy(real.join(from), to).unwrap();
        }
        let day = env.path("codex/sessions/2026/11/29");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::copy(
            real.join("codex-0.169.0.jsonl"),
            day.join("rollout-2026-11-29T21-53-15-01a2294c-49c6-75d3-a9e2-1487e56a3cd2.jsonl"),
        )
        .unwrap();
        std::fs::copy(
            real.join("codex-0.169.0-direct-error.jsonl"),
            day.join("rollout-2026-11-29T21-53-16-01a2294c-4e25-77f0-8c6d-6d9d8be0a0df.jsonl"),
        )
        .unwrap();
        env
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn store(&self) -> Store {
        Store::open(&self.path("state/state.db")).unwrap()
    }

    pub fn ingest(&self) -> IngestSummary {
        self.ingest_keeping_from(None)
    }

    /// `ingest` recording only calls made at or after `keep_from` (a `historyDays` cutoff).
    pub fn ingest_keeping_from(&self, keep_from: Option<&str>) -> IngestSummary {
        let loaded = mws::config::load(Some(&self.config_path)).unwrap();
        let mut store = self.store();
        let options = Options {
            progress: false,
            now: mws::clock::parse("2026-11-29T12:00:00Z").unwrap(),
            keep_from: keep_from.map(str::to_string),
        };
        ingest_with(&loaded.config, &mut store, &options).unwrap()
    }

    /// `(source_key, session, tool, ok, error_kind, ts)` of every call, by source key.
    #[allow(clippy::type_complexity)]
    pub fn calls(&self) -> Vec<(String, String, String, bool, Option<String>, String)> {
        let store = self.store();
        let mut stmt = store
            .conn()
            .prepare("SELECT source_key, session_id, tool, ok, error_kind, ts FROM calls ORDER BY source_key")
            .unwrap();
        stmt.query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }
}

pub fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
    f.write_all(text.as_bytes()).unwrap();
}
