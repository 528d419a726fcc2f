//! No Markdown file narrates how the code got here: that belongs in git history, and the docs
//! describe the product as it is.

use regex::Regex;

use super::{files, rel};
use crate::support::root;

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
