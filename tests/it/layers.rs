//! The house's layers: `src/lib.rs` lists the modules from the ground up, and a module's code
//! (its tests aside) names only modules listed above it. Reads files only.
//!
//! A name counts where code says `crate::NAME` or `use crate::{NAME, …}`; comment lines, test
//! files (`tests.rs`, `*_tests.rs`) and a file's inline `#[cfg(test)] mod tests { … }` do not.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use walkdir::WalkDir;

use crate::support::root;

/// An inline test module: where a file's code for the layers ends.
static TEST_MODULE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"#\[cfg\(test\)\]\s*mod [a-z_]+\s*\{").unwrap());
/// `crate::NAME`.
static SINGLE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bcrate::([a-z_]+)\b").unwrap());
/// `crate::{NAME, …}`.
static GROUP: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\bcrate::\{([^}]*)\}").unwrap());

/// The modules `src/lib.rs` declares, in its order.
fn lib_order() -> Vec<String> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("read src/lib.rs");
    let declared = Regex::new(r"(?m)^pub mod ([a-z_]+);").unwrap();
    declared
        .captures_iter(&lib)
        .map(|c| c[1].to_string())
        .collect()
}

/// The code of one file a reader of the layers reads: no comment lines, no tests.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let code = TEST_MODULE.split(&text).next().unwrap_or_default();
    code.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules one module's files name.
fn names_used(module: &str) -> BTreeSet<String> {
    let src = root().join("src");
    let mut paths = vec![src.join(format!("{module}.rs"))];
    paths.extend(
        WalkDir::new(src.join(module))
            .into_iter()
            .filter_map(Result::ok)
            .map(|e| e.into_path()),
    );
    let mut used = BTreeSet::new();
    for path in paths
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
    {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name == "tests.rs" || name.ends_with("_tests.rs") {
            continue;
        }
        let code = code_of(path);
        used.extend(SINGLE.captures_iter(&code).map(|c| c[1].to_string()));
        for g in GROUP.captures_iter(&code) {
            for item in g[1].split(',') {
                let head = item.trim().split("::").next().unwrap_or("").trim();
                if !head.is_empty() {
                    used.insert(head.to_string());
                }
            }
        }
    }
    used.remove(module);
    used
}

#[test]
fn every_module_imports_only_modules_lib_rs_lists_above_it() {
    let order = lib_order();
    assert!(order.len() > 20, "src/lib.rs declares only {order:?}");
    let mut problems = Vec::new();
    for (at, module) in order.iter().enumerate() {
        for used in names_used(module) {
            match order.iter().position(|m| *m == used) {
                Some(p) if p > at => problems.push(format!(
                    "src/{module} names crate::{used}, which src/lib.rs lists below it: \
                     move {used} up in lib.rs if nothing it names sits between, or move what \
                     {module} takes from it down a layer"
                )),
                _ => {}
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
