//! No src file grows past `MAX_SRC_LINES` of what a reader reads, so that a file too big for one
//! concept is split into child modules, while comments and a file's own tests cost nothing.

use super::{rel, src_files};

/// Most lines a reader may meet in one src file (counted by `reader_lines`). Raising it lets
/// files grow into the 80 KB `database.rs` that the house style warns against; split the file
/// into child modules instead.
const MAX_SRC_LINES: usize = 450;

/// The lines of `text` a reader reads. Not counted:
/// - blank lines;
/// - comment-only lines: after leading white space, the line starts with `//` (so `//!` and
///   `///` docs too); a line with code before a comment counts;
/// - the file's trailing test modules: from a column-0 attribute run holding `#[cfg(test)]` over
///   a column-0 `mod NAME;` (or `mod NAME {` through the column-0 `}` that closes it), when only
///   blank and comment lines follow. Several such modules at the end are all left out; one
///   followed by code counts in full.
pub(super) fn reader_lines(text: &str) -> usize {
    let lines: Vec<&str> = text.lines().collect();
    let end = without_trailing_tests(&lines);
    lines[..end].iter().filter(|l| is_code(l)).count()
}

/// Neither blank nor comment-only.
fn is_code(line: &str) -> bool {
    let t = line.trim_start();
    !t.is_empty() && !t.starts_with("//")
}

/// How many of `lines` remain once the trailing `#[cfg(test)]` modules are cut off.
fn without_trailing_tests(lines: &[&str]) -> usize {
    let mut end = lines.len();
    loop {
        let Some(last) = (0..end).rev().find(|&i| is_code(lines[i])) else {
            return end;
        };
        let Some(opening) = module_opening(lines, last) else {
            return end;
        };
        let mut first = opening;
        while first > 0 && lines[first - 1].starts_with("#[") {
            first -= 1;
        }
        if !lines[first..opening]
            .iter()
            .any(|l| l.trim() == "#[cfg(test)]")
        {
            return end;
        }
        end = first;
    }
}

/// The line of the `mod` item that ends at line `last`: `last` itself for `mod NAME;`, or for a
/// closing column-0 `}` the nearest column-0 code line above it when that is `mod NAME {`.
fn module_opening(lines: &[&str], last: usize) -> Option<usize> {
    let is_mod = |l: &str| {
        let l = l
            .strip_prefix("pub(crate) ")
            .or(l.strip_prefix("pub "))
            .unwrap_or(l);
        l.starts_with("mod ")
    };
    let line = lines[last];
    if is_mod(line) && line.trim_end().ends_with(';') {
        return Some(last);
    }
    if line.trim_end() != "}" {
        return None;
    }
    let opening = (0..last)
        .rev()
        .find(|&i| is_code(lines[i]) && !lines[i].starts_with(char::is_whitespace))?;
    (is_mod(lines[opening]) && lines[opening].trim_end().ends_with('{')).then_some(opening)
}

#[test]
fn every_src_file_stays_small_for_a_reader() {
    let mut problems = Vec::new();
    for path in src_files() {
        let lines = reader_lines(&std::fs::read_to_string(&path).unwrap());
        if lines > MAX_SRC_LINES {
            problems.push(format!(
                "{}: {lines} lines of code (blank lines, comment lines and trailing test modules \
                 not counted), more than {MAX_SRC_LINES}: split it into child modules",
                rel(&path)
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The count leaves out exactly what `reader_lines` says: blank and comment lines, and trailing
/// test modules in either form, but not a test module that code follows.
#[test]
fn reader_lines_counts_what_a_reader_reads() {
    let file = "//! Header.\n\n/// Doc.\nfn a() {\n    // note\n    b(); // trailing\n}\n";
    assert_eq!(reader_lines(file), 3);
    let with_tests = format!(
        "{file}\n#[cfg(test)]\n#[path = \"a_tests.rs\"]\nmod tests;\n\n#[cfg(test)]\nmod more {{\n    \
         #[test]\n    fn t() {{}}\n}}\n// end\n"
    );
    assert_eq!(reader_lines(&with_tests), 3);
    let tests_then_code = format!("{file}#[cfg(test)]\nmod tests;\nfn c() {{}}\n");
    assert_eq!(reader_lines(&tests_then_code), 6);
    let not_tests = format!("{file}#[cfg(feature = \"x\")]\nmod extra;\n");
    assert_eq!(reader_lines(&not_tests), 5);
}
