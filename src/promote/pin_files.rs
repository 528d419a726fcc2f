//! Front-matter pins: `working-set-pins: [a, b]` (or a `- a` block list) in the YAML front matter
//! of Markdown files matched by `pinFiles`. `parse` is pure; `scan` is the edge that reads files
//! and must not fail the run: an unreadable file is a warning.

use std::path::PathBuf;

/// The front-matter key that declares pins.
pub const KEY: &str = "working-set-pins";

/// Largest file read for front matter. Raising it lets bigger files declare pins at the cost of
/// reading them whole.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The tools a Markdown text pins in its front matter (empty when it has none).
pub fn parse(text: &str) -> Vec<String> {
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut in_block = false;
    for line in lines {
        let t = line.trim_end();
        if t == "---" || t == "..." {
            break;
        }
        if in_block {
            if let Some(item) = t.trim_start().strip_prefix("- ") {
                push(&mut out, item);
                continue;
            }
            if t.trim().is_empty() {
                continue;
            }
            in_block = false;
        }
        let Some(rest) = t
            .strip_prefix(KEY)
            .and_then(|r| r.trim_start().strip_prefix(':'))
        else {
            continue;
        };
        let rest = rest.trim();
        if rest.is_empty() {
            in_block = true;
        } else if let Some(inner) = rest.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            for item in inner.split(',') {
                push(&mut out, item);
            }
        } else {
            push(&mut out, rest);
        }
    }
    out
}

fn push(out: &mut Vec<String>, item: &str) {
    let item = item.split(" #").next().unwrap_or(item).trim();
    let item = item.trim_matches(|c| c == '"' || c == '\'').trim();
    if !item.is_empty() && !out.iter().any(|o| o == item) {
        out.push(item.to_string());
    }
}

/// Every `(tool, file)` declared by the files the globs match, in glob then path order, and the
/// warnings met on the way.
pub fn scan(globs: &[String]) -> (Vec<(String, String)>, Vec<String>) {
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    for g in globs {
        let paths: Vec<PathBuf> = match glob::glob(g) {
            Ok(p) => p
                .filter_map(|r| r.map_err(|e| warnings.push(format!("{e}"))).ok())
                .collect(),
            Err(e) => {
                warnings.push(format!("pinFiles: {g}: {e}"));
                continue;
            }
        };
        for path in paths {
            let shown = path.display().to_string();
            match std::fs::metadata(&path) {
                Ok(m) if !m.is_file() => continue,
                Ok(m) if m.len() > MAX_FILE_BYTES => {
                    warnings.push(format!(
                        "{shown}: larger than {MAX_FILE_BYTES} bytes, skipped"
                    ));
                    continue;
                }
                Err(e) => {
                    warnings.push(format!("{shown}: {e}"));
                    continue;
                }
                Ok(_) => {}
            }
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    for tool in parse(&text) {
                        found.push((tool, shown.clone()));
                    }
                }
                Err(e) => warnings.push(format!("{shown}: {e}")),
            }
        }
    }
    (found, warnings)
}

#[cfg(test)]
mod tests {
    use super::{parse, scan};

    #[test]
    fn scan_reads_matches_and_warns_on_bad_files() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("a")).unwrap();
        std::fs::create_dir_all(d.join("b")).unwrap();
        std::fs::create_dir_all(d.join("c/SKILL.md")).unwrap();
        std::fs::write(d.join("a/SKILL.md"), "---\nworking-set-pins: [x, y]\n---\n").unwrap();
        std::fs::write(d.join("b/SKILL.md"), [0xff, 0xfe, 0x00]).unwrap();
        let glob = format!("{}/*/SKILL.md", d.display());
        let (found, warnings) = scan(&[glob]);
        let a = d.join("a/SKILL.md").display().to_string();
        assert_eq!(found, [("x".to_string(), a.clone()), ("y".to_string(), a)]);
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(warnings[0].starts_with(&d.join("b/SKILL.md").display().to_string()));
    }

    #[test]
    fn front_matter() {
        let cases: [(&str, &[&str]); 7] = [
            (
                "---\nname: x\nworking-set-pins: [a, \"b\", 'c']\n---\nbody",
                &["a", "b", "c"],
            ),
            (
                "---\nworking-set-pins:\n  - mail_send\n  - drive_get # why\nother: 1\n---\n",
                &["mail_send", "drive_get"],
            ),
            ("---\nworking-set-pins: solo\n---\n", &["solo"]),
            ("no front matter\nworking-set-pins: [a]\n", &[]),
            ("---\ntitle: t\n---\nworking-set-pins: [a]\n", &[]),
            ("---\nworking-set-pins: []\n---\n", &[]),
            ("---\r\nworking-set-pins: [a, a]\r\n---\r\n", &["a"]),
        ];
        for (text, want) in cases {
            assert_eq!(parse(text), want, "{text:?}");
        }
    }
}
