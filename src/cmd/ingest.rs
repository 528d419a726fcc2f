//! `mws ingest`: reads the configured transcript roots into the database and prints what it did
//! (stdout: the summary, or JSON with `--json`; the progress bar goes to stderr).

use std::io::Write;
use std::path::Path;

use super::{CmdResult, load_config};
use crate::cli::IngestArgs;
use crate::ingest::{IngestSummary, ingest_all};
use crate::store::Store;
use crate::term::Safe;

pub fn run(config: Option<&Path>, args: IngestArgs) -> CmdResult {
    let loaded = load_config(config)?;
    let mut store = Store::open(&loaded.config.db_path())?;
    let summary = ingest_all(&loaded.config, &mut store, !args.json)?;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", crate::term::json_pretty(&summary)?)?;
    } else {
        out.write_all(render(&summary).as_bytes())?;
    }
    Ok(0)
}

/// The summary as text: one line of figures, then one line per note, malformed file and error.
/// Paths and messages are shown with terminal controls escaped.
pub fn render(s: &IngestSummary) -> String {
    let mut text = format!(
        "ingested {} file(s) of {} ({}): {} new call(s), {} duplicate(s), {} merged with proxy rows, {} pending, {} skipped line(s)\n",
        s.files_read,
        s.files,
        human_bytes(s.bytes),
        s.new_calls,
        s.duplicates,
        s.merged,
        s.pending,
        s.skipped_lines
    );
    if s.expired > 0 {
        text += &format!(
            "  {} call(s) still without a result after {} h recorded as aborted\n",
            s.expired,
            crate::ingest::PENDING_EXPIRY.whole_hours()
        );
    }
    if s.past_horizon > 0 {
        text += &format!(
            "  {} call(s) older than historyDays not recorded\n",
            s.past_horizon
        );
    }
    for root in &s.missing_roots {
        text += &format!("  no such root: {}\n", Safe(root));
    }
    if s.files_gone > 0 {
        text += &format!(
            "  {} file(s) read before are gone: no longer tracked (their calls stay)\n",
            s.files_gone
        );
    }
    for m in &s.malformed {
        text += &format!(
            "  malformed: {} line(s) in {}, first {}\n",
            m.count,
            Safe(&m.path),
            Safe(&m.first)
        );
    }
    if !s.malformed.is_empty() {
        text += "  (MWS_LOG=debug lists every malformed line)\n";
    }
    for (path, message) in &s.errors {
        text += &format!("  error: {}: {}\n", Safe(path), Safe(message));
    }
    text
}

fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KiB", "MiB", "GiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Malformed;

    #[test]
    fn renders_every_part() {
        let s = IngestSummary {
            files: 3,
            files_read: 2,
            bytes: 1536,
            new_calls: 4,
            duplicates: 1,
            merged: 1,
            pending: 1,
            expired: 2,
            skipped_lines: 1,
            past_horizon: 3,
            missing_roots: vec!["/r".into()],
            files_gone: 2,
            errors: vec![("/x".into(), "permission denied".into())],
            malformed: vec![Malformed {
                path: "/a.jsonl".into(),
                count: 1,
                first: "/a.jsonl:3: expected value at line 1 column 1".into(),
            }],
        };
        assert_eq!(
            render(&s),
            "ingested 2 file(s) of 3 (1.5 KiB): 4 new call(s), 1 duplicate(s), 1 merged with proxy rows, 1 pending, 1 skipped line(s)\n  \
             2 call(s) still without a result after 24 h recorded as aborted\n  \
             3 call(s) older than historyDays not recorded\n  \
             no such root: /r\n  \
             2 file(s) read before are gone: no longer tracked (their calls stay)\n  \
             malformed: 1 line(s) in /a.jsonl, first /a.jsonl:3: expected value at line 1 column 1\n  \
             (MWS_LOG=debug lists every malformed line)\n  \
             error: /x: permission denied\n"
        );
    }

    /// Transcript file names and parse messages come from outside: shown with controls escaped.
    #[test]
    fn escapes_terminal_controls() {
        let s = IngestSummary {
            missing_roots: vec!["/r\u{1b}[2J".into()],
            errors: vec![("/x\u{202e}".into(), "bad \u{9b}".into())],
            malformed: vec![Malformed {
                path: "/a\u{1b}]0;t\u{7}.jsonl".into(),
                count: 1,
                first: "/a.jsonl:3: unknown variant `\u{1b}[31m`".into(),
            }],
            ..IngestSummary::default()
        };
        let text = render(&s);
        assert!(
            !text.chars().any(|c| crate::term::is_unsafe(c) && c != '\n'),
            "{text}"
        );
        for shown in [
            "no such root: /r\\x1b[2J",
            "in /a\\x1b]0;t\\x07.jsonl, first /a.jsonl:3: unknown variant `\\x1b[31m`",
            "error: /x\\u{202e}: bad \\u{9b}",
        ] {
            assert!(text.contains(shown), "{text}");
        }
    }
}
