//! The house checks itself, reading files only: every src file opens with its `//!` header and
//! stays small for a reader (`size.rs`), no Markdown file narrates how the code got here
//! (`narration.rs`), ARCHITECTURE.md names only paths that exist (`architecture.rs`), and
//! `#[path]` only loads a file's own tests (`path_attr.rs`).

mod architecture;
mod narration;
mod path_attr;
mod size;

use std::path::{Path, PathBuf};

use walkdir::WalkDir;

use crate::support::root;

/// Folders never checked: build output, installed dependencies, VCS data.
fn skipped(path: &Path) -> bool {
    path.components().any(|c| {
        matches!(
            c.as_os_str().to_str(),
            Some("target" | "node_modules" | ".git" | ".venv" | "corpus" | "artifacts")
        )
    })
}

/// Every file under `under` whose extension is `ext`, outside the `skipped` folders.
fn files(under: &Path, ext: &str) -> Vec<PathBuf> {
    WalkDir::new(under)
        .into_iter()
        .filter_entry(|e| !skipped(e.path().strip_prefix(under).unwrap_or(e.path())))
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == ext))
        .map(|e| e.into_path())
        .collect()
}

/// Every src file, checked to be more than a handful so that a wrong root fails loudly.
fn src_files() -> Vec<PathBuf> {
    let sources = files(&root().join("src"), "rs");
    assert!(sources.len() > 50, "found only {} src files", sources.len());
    sources
}

/// `path` relative to the repository root, for messages.
fn rel(path: &Path) -> String {
    path.strip_prefix(root())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_src_file_opens_with_its_header() {
    let problems: Vec<String> = src_files()
        .into_iter()
        .filter(|p| !std::fs::read_to_string(p).unwrap().starts_with("//!"))
        .map(|p| format!("{}: does not open with a `//!` header", rel(&p)))
        .collect();
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
