//! `#[path]` in src/ only loads a file's own tests: a file whose stem ends in `_tests` (or is
//! `tests`), in the declaring file's own folder. Any other module lives where `mod` finds it.

use std::path::Path;

use regex::Regex;

use super::{rel, src_files};

/// What is wrong with `#[path = "<target>"]` in the file at `declaring`, or None if it is fine.
fn wrong_path(declaring: &Path, target: &str) -> Option<String> {
    let name = Path::new(target);
    let stem = name.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    if target.contains('/') || target.contains('\\') {
        return Some("names a file outside the declaring file's folder".into());
    }
    if !(stem == "tests" || stem.ends_with("_tests")) || !target.ends_with(".rs") {
        return Some("names a file that is not a `_tests.rs` (or `tests.rs`) file".into());
    }
    let beside = declaring.parent().unwrap().join(name);
    (!beside.is_file()).then(|| format!("no file {} beside it", rel(&beside)))
}

#[test]
fn path_attributes_only_load_a_files_own_tests() {
    let attr = Regex::new(r#"#\[path\s*=\s*"([^"]*)"\s*\]"#).unwrap();
    let mut problems = Vec::new();
    for path in src_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            for c in attr.captures_iter(line) {
                if let Some(why) = wrong_path(&path, &c[1]) {
                    problems.push(format!("{}:{}: {}: {why}", rel(&path), n + 1, &c[0]));
                }
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The rule refuses what it is for: another folder, a non-test file, a missing file.
#[test]
fn the_path_rule_refuses_what_it_is_for() {
    let declaring = crate::support::root().join("src/setup/plan.rs");
    assert_eq!(wrong_path(&declaring, "plan_tests.rs"), None);
    for target in ["../store/log_tests.rs", "plan_helpers.rs", "gone_tests.rs"] {
        assert!(wrong_path(&declaring, target).is_some(), "{target} passed");
    }
}
