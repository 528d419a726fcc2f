//! ARCHITECTURE.md names only files and folders that exist, so that a rename or a removal that
//! forgets the map fails here instead of misleading the next reader.

use regex::Regex;
use walkdir::WalkDir;

use super::skipped;
use crate::support::root;

/// Endings that make a backticked name a file name.
const FILE_ENDINGS: [&str; 5] = [".rs", ".md", ".toml", ".py", ".sql"];

/// The path a backticked span names, or None if it names none. The span is cut at its first `::`
/// (`http/reply.rs::json_reply` names `http/reply.rs`); what is left is a path if it holds only
/// letters, digits and `_ . - /`, does not start with `/` (a URL path like `/mcp`), and either
/// ends in one of `FILE_ENDINGS`, ends in `/` (a folder, like `config/`), or contains a `/` and
/// starts with an entry of the repository root (`src/server`). A span with a `/` that is none of
/// these (`tools/call`, `server/discover`) is an MCP method, not a path.
fn named_path(span: &str) -> Option<&str> {
    let name = span.split("::").next().unwrap_or(span);
    let plain = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.-/".contains(c));
    if !plain || name.is_empty() || name.starts_with('/') {
        return None;
    }
    let first = name.split('/').next().unwrap_or(name);
    let file = FILE_ENDINGS.iter().any(|e| name.ends_with(e));
    let rooted = name.contains('/') && root().join(first).exists();
    (file || name.ends_with('/') || rooted).then_some(name)
}

/// Whether `name` exists, read in the first way that applies: from the repository root when its
/// first segment is an entry there (`src/store/log.rs`, `README.md`); from `src/` when its first
/// segment is a folder there (`store/calls.rs`, `config/`); otherwise as the tail of some path
/// in the repository (`jsonc.rs`, `http/legacy_post.rs`: the map names a file by its own name
/// under the folder its paragraph is about), outside build output and dependencies.
fn exists(name: &str, tails: &[String]) -> bool {
    let name = name.trim_end_matches('/');
    let first = name.split('/').next().unwrap_or(name);
    if root().join(first).exists() {
        return root().join(name).exists();
    }
    if root().join("src").join(first).is_dir() {
        return root().join("src").join(name).exists();
    }
    let tail = format!("/{name}");
    tails.iter().any(|p| p.ends_with(&tail))
}

/// Every file and folder in the repository, outside the `skipped` folders, as `/`-joined paths
/// from the root with a leading `/`.
fn all_paths() -> Vec<String> {
    let root = root();
    WalkDir::new(&root)
        .into_iter()
        .filter_entry(|e| !skipped(e.path().strip_prefix(&root).unwrap_or(e.path())))
        .filter_map(Result::ok)
        .filter_map(|e| {
            let rel = e.path().strip_prefix(&root).ok()?.to_str()?.to_string();
            Some(format!("/{rel}"))
        })
        .collect()
}

/// Every path `text` names (see `named_path`), with its line number; spans inside fenced code
/// blocks are not read.
fn named_paths(text: &str) -> Vec<(usize, &str)> {
    let span = Regex::new(r"`([^`]+)`").unwrap();
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let names = span.captures_iter(line).map(|c| c.get(1).unwrap().as_str());
        out.extend(names.filter_map(named_path).map(|name| (n + 1, name)));
    }
    out
}

/// The paths `text` names that do not exist, as `line N: name`.
fn missing(text: &str, tails: &[String]) -> Vec<String> {
    named_paths(text)
        .into_iter()
        .filter(|(_, name)| !exists(name, tails))
        .map(|(n, name)| format!("line {n}: {name}"))
        .collect()
}

#[test]
fn architecture_md_names_only_paths_that_exist() {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let named = named_paths(&text).len();
    assert!(named > 100, "only {named} paths found in ARCHITECTURE.md");
    let gone = missing(&text, &all_paths());
    assert!(
        gone.is_empty(),
        "ARCHITECTURE.md names paths that do not exist (fix the name, or the map):\n{}",
        gone.join("\n")
    );
}

/// The rule reads what it is for: paths of each kind found, a missing one of each kind named
/// with its line, and MCP methods, URL paths and commands left alone.
#[test]
fn the_architecture_rule_reads_what_it_is_for() {
    let tails = all_paths();
    let text = "`src/store/log.rs`, `store/calls.rs::row_for_call_id`, `config/`, `jsonc.rs`\n\
                `tools/call`, `server/discover`, `/mcp`, `farm-studio look src/server`\n\
                ```\n`src/inside_a_fence.rs`\n```\n\
                `src/gone.rs` and `store/gone.rs`\n`gone_anywhere.rs`, `docs/gone.md`\n";
    assert_eq!(
        missing(text, &tails),
        [
            "line 6: src/gone.rs",
            "line 6: store/gone.rs",
            "line 7: gone_anywhere.rs",
            "line 7: docs/gone.md",
        ]
    );
}
