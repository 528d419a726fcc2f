//! The house checks itself: every src file opens with its `//!` header, no src file grows past
//! `MAX_SRC_LINES`, and no Markdown file narrates how the code got here (that belongs in git
//! history). Reads files only.

use std::path::{Path, PathBuf};

use regex::Regex;
use walkdir::WalkDir;

use crate::support::root;

/// Longest a src file may be. Raising it lets files grow into the 80 KB `database.rs` that the
/// house style warns against; split the file into child modules instead.
const MAX_SRC_LINES: usize = 450;

/// Phrases that narrate development rather than describe the product. Each is matched
/// case-insensitively against every Markdown file outside dependencies and build output.
const NARRATION: [&str; 8] = [
    r"\bsession[- ]\d",
    r"\bwork(ing)? sessions?\b",
    r"\bhelpers?['’]? (builds?|worktrees?|branch)",
    r"\b(before|after) this change\b",
    r"\b(before|after) the session",
    r"\bseed \d{3}\b",
    r"\bfirst sketch\b",
    r"\bpassing since \d{4}",
];

/// Folders never checked: build output, installed dependencies, VCS data.
fn skipped(path: &Path) -> bool {
    path.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some("target" | "node_modules" | ".git" | ".venv" | "corpus" | "artifacts")
        )
    })
}

fn files(under: &Path, ext: &str) -> Vec<PathBuf> {
    WalkDir::new(under)
        .into_iter()
        .filter_entry(|e| !skipped(e.path().strip_prefix(under).unwrap_or(e.path())))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == ext))
        .map(|e| e.into_path())
        .collect()
}

fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_src_file_opens_with_its_header_and_stays_small() {
    let mut problems = Vec::new();
    let sources = files(&root().join("src"), "rs");
    assert!(sources.len() > 50, "found only {} src files", sources.len());
    for path in sources {
        let text = std::fs::read_to_string(&path).unwrap();
        if !text.starts_with("//!") {
            problems.push(format!("{}: does not open with a `//!` header", rel(&path)));
        }
        let lines = text.lines().count();
        if lines > MAX_SRC_LINES {
            problems.push(format!(
                "{}: {lines} lines, more than {MAX_SRC_LINES}: split it into child modules",
                rel(&path)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_markdown_file_narrates_development() {
    let patterns: Vec<Regex> = NARRATION
        .iter()
        .map(|p| Regex::new(&format!("(?i){p}")).unwrap())
        .collect();
    let mut problems = Vec::new();
    let docs = files(&root(), "md");
    assert!(
        docs.iter().any(|p| p.ends_with("README.md")),
        "no README.md found under {}",
        root().display()
    );
    for path in docs {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            for re in &patterns {
                if let Some(m) = re.find(line) {
                    problems.push(format!(
                        "{}:{}: narrates development ({:?}): {}",
                        rel(&path),
                        n + 1,
                        m.as_str(),
                        line.trim()
                    ));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The checks above must be able to fail: each narration pattern matches a sentence it is meant
/// to catch.
#[test]
fn the_narration_patterns_catch_what_they_are_for() {
    let caught = [
        "Measured in session 3 on the idle VM",
        "the session-2 build in the same rounds",
        "while the helpers' builds ran",
        "Before this change the proxy used 40 MB",
        "the product doc's first sketch",
        "as seed 000 says",
        "Passing since 2026-11-30, once listed",
        "in the next work session",
    ];
    for line in caught {
        assert!(
            NARRATION
                .iter()
                .any(|p| Regex::new(&format!("(?i){p}")).unwrap().is_match(line)),
            "no pattern catches {line:?}"
        );
    }
    let fine = "Each client session gets its own Mcp-Session-Id; sessions expire after an hour.";
    assert!(
        !NARRATION
            .iter()
            .any(|p| Regex::new(&format!("(?i){p}")).unwrap().is_match(fine)),
        "a pattern flags ordinary prose: {fine:?}"
    );
}
