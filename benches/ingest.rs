//! Ingest benchmark (prints figures; not a test): generates a Claude Code corpus of the given size
//! in a temp dir, ingests it once (MB/s), then again unchanged (the incremental re-run time).
//!
//! `cargo bench --bench ingest -- 500` for 500 MB (default 50 MB; or `MWS_BENCH_MB=500`).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::time::Instant;

use mws::ingest::{Options, ingest_with};
use mws::store::Store;

/// Size of one generated session file. Real sessions run from kilobytes to 100 MB+.
const FILE_BYTES: u64 = 2 << 20;
/// Default corpus size when no size is given.
const DEFAULT_MB: u64 = 50;

/// A small deterministic generator, so that every run reads the same corpus.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Text of about `len` bytes: words, some non-ASCII, some characters JSON must escape.
    fn text(&mut self, len: usize) -> String {
        const WORDS: &[&str] = &[
            "fn",
            "let",
            "forecast",
            "température",
            "the",
            "tool",
            "result",
            "\\n",
            "\\\"quoted\\\"",
            "東京",
            "error_count",
            "0.1",
            "{",
            "}",
            "rounding",
            "timezone",
            "src/lib.rs",
            "=>",
        ];
        let mut s = String::with_capacity(len + 16);
        while s.len() < len {
            s.push_str(WORDS[self.below(WORDS.len() as u64) as usize]);
            s.push(' ');
        }
        s
    }
}

const ENVELOPE: &str = r#""parentUuid":"6f2b3c4d-1e5f-4a6b-9c7d-8e9f0a1b2c3d","isSidechain":false,"userType":"external","cwd":"/home/dev/src/weather_app","version":"2.1.332","gitBranch":"main""#;

/// A session file being written.
struct Out {
    w: BufWriter<File>,
    written: u64,
}

impl Out {
    fn line(&mut self, s: String) {
        self.w.write_all(s.as_bytes()).unwrap();
        self.w.write_all(b"\n").unwrap();
        self.written += s.len() as u64 + 1;
    }
}

/// Writes one session file of about `FILE_BYTES`; returns the MCP calls it holds.
fn session(path: &Path, session: &str, rng: &mut Rng, next_id: &mut u64) -> u64 {
    let mut w = Out {
        w: BufWriter::new(File::create(path).unwrap()),
        written: 0,
    };
    let mut calls = 0;
    let mut turn = 0u64;
    while w.written < FILE_BYTES {
        turn += 1;
        let ts = format!(
            "2026-11-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            1 + turn % 28,
            turn % 24,
            turn % 60,
            (turn * 7) % 60,
            turn % 1000
        );
        let sid = format!(r#""sessionId":"{session}","timestamp":"{ts}""#);
        w.line(format!(r#"{{{ENVELOPE},{sid},"type":"user","message":{{"role":"user","content":"{}"}},"uuid":"u{turn}"}}"#, rng.text(300)));
        w.line(format!(r#"{{"type":"attachment","attachment":{{"type":"deferred_tools_delta","text":"{}"}},{sid}}}"#, rng.text(900)));
        w.line(format!(r#"{{{ENVELOPE},{sid},"type":"assistant","message":{{"id":"msg_{turn}","role":"assistant","content":[{{"type":"text","text":"{}"}}]}},"requestId":"req_{turn}"}}"#, rng.text(1200)));
        // A built-in tool with a big result (a file read).
        let id = format!("toolu_b{next_id}");
        *next_id += 1;
        w.line(format!(r#"{{{ENVELOPE},{sid},"type":"assistant","message":{{"id":"msg_{turn}b","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"Read","input":{{"file_path":"/home/dev/src/lib.rs"}}}}]}}}}"#));
        let len = 6000 + rng.below(20000) as usize;
        let body = rng.text(len);
        w.line(format!(r#"{{{ENVELOPE},{sid},"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"{id}","type":"tool_result","content":"{body}"}}]}},"toolUseResult":{{"type":"text","file":{{"content":"{body}"}}}}}}"#));
        w.line(format!(r#"{{"type":"progress","data":{{"type":"bash_progress","output":"{}"}},{sid},"toolUseID":"{id}"}}"#, rng.text(400)));
        if turn.is_multiple_of(3) {
            // An MCP call of ours, with its progress lines and result.
            let id = format!("toolu_m{next_id}");
            *next_id += 1;
            calls += 1;
            let tool = ["get-sum", "echo", "mail_send", "drive_search"][rng.below(4) as usize];
            w.line(format!(r#"{{{ENVELOPE},{sid},"type":"assistant","message":{{"id":"msg_{turn}m","role":"assistant","content":[{{"type":"tool_use","id":"{id}","name":"mcp__toolbox__{tool}","input":{{"q":"{}"}}}}]}}}}"#, rng.text(80)));
            w.line(format!(r#"{{"type":"progress","data":{{"type":"mcp_progress","status":"completed","serverName":"toolbox","toolName":"{tool}"}},{sid},"toolUseID":"{id}"}}"#));
            let err = if rng.below(20) == 0 {
                r#","is_error":true"#
            } else {
                ""
            };
            w.line(format!(r#"{{{ENVELOPE},{sid},"type":"user","message":{{"role":"user","content":[{{"tool_use_id":"{id}","type":"tool_result","content":[{{"type":"text","text":"{}"}}]{err}}}]}}}}"#, rng.text(2000)));
        }
        if turn.is_multiple_of(10) {
            // The traps: a request-blob copy and a sub-agent mirror holding MCP tool_use blocks.
            let copy = format!(
                r#"{{"type":"tool_use","id":"toolu_m{}","name":"mcp__toolbox__echo","input":{{}}}}"#,
                *next_id - 1
            );
            w.line(format!(r#"{{"type":"api-request-blob",{sid},"hash":"h{turn}","message":{{"role":"user","content":[{copy},{{"type":"text","text":"{}"}}]}}}}"#, rng.text(12000)));
            w.line(format!(r#"{{{ENVELOPE},{sid},"type":"progress","data":{{"type":"agent_progress","agentId":"a1","message":{{"type":"assistant","message":{{"content":[{copy}]}}}}}}}}"#));
        }
    }
    w.w.flush().unwrap();
    calls
}

fn main() {
    let mb = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<u64>().ok())
        .or_else(|| std::env::var("MWS_BENCH_MB").ok()?.parse().ok())
        .unwrap_or(DEFAULT_MB);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("projects");
    let started = Instant::now();
    let mut rng = Rng(42);
    let (mut bytes, mut calls, mut next_id, mut files) = (0u64, 0u64, 0u64, 0u64);
    while bytes < mb << 20 {
        let project = root.join(format!("-home-dev-project{}", files % 20));
        std::fs::create_dir_all(&project).unwrap();
        let path = project.join(format!("{:08x}-0000-4000-8000-{:012x}.jsonl", files, files));
        calls += session(&path, &format!("sess-{files}"), &mut rng, &mut next_id);
        bytes += std::fs::metadata(&path).unwrap().len();
        files += 1;
    }
    println!(
        "corpus: {:.0} MB in {files} Claude Code files, {calls} MCP calls (generated in {:.1} s)",
        bytes as f64 / 1e6,
        started.elapsed().as_secs_f64()
    );
    let config_path = dir.path().join("config.json");
    let config = serde_json::json!({
        "stateDir": dir.path().join("state"),
        "transcripts": [{"type": "claude-code", "root": root, "serverNames": ["toolbox"]}],
    });
    std::fs::write(&config_path, config.to_string()).unwrap();
    let config = mws::config::load(Some(&config_path)).unwrap().config;
    let mut store = Store::open(&config.db_path()).unwrap();
    let options = Options {
        progress: false,
        now: mws::clock::now(),
        keep_from: None,
    };
    let t = Instant::now();
    let first = ingest_with(&config, &mut store, &options).unwrap();
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(
        first.new_calls, calls,
        "the benchmark must find every call: {first:?}"
    );
    println!(
        "first run: {:.0} MB in {secs:.2} s = {:.0} MB/s ({} calls recorded, {} duplicates)",
        first.bytes as f64 / 1e6,
        first.bytes as f64 / 1e6 / secs,
        first.new_calls,
        first.duplicates
    );
    let t = Instant::now();
    let second = ingest_with(&config, &mut store, &options).unwrap();
    println!(
        "second run (unchanged corpus): {:.3} s, {} files read, {} new calls",
        t.elapsed().as_secs_f64(),
        second.files_read,
        second.new_calls
    );
}
