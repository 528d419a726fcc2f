//! Projects: the folder a call was made in, as one stored form. A project is the client's working
//! directory (a `--stdio` child's, a transcript line's `cwd`) or its first `file://` root, made
//! absolute and normal (`.`, `..`, repeated and trailing `/` folded; symlinks resolved where the
//! folder still exists). Only the path is ever kept, never anything read from the folder. Must not
//! decide what is listed for a project: that is `crate::promote` and `crate::listed`.

use std::path::{Component, Path, PathBuf};

/// The longest project path kept, in bytes: a longer one is taken as unknown rather than stored.
/// Real folder paths stay far below (Linux's `PATH_MAX` is 4,096).
pub const MAX_PATH_BYTES: usize = 4096;

/// The stored form of a folder path taken as a project, or `None` where it cannot be one: empty,
/// relative, over `MAX_PATH_BYTES`, holding a control or bidirectional-formatting character
/// (`term::is_unsafe`: it would reorder what a terminal or page shows), or not valid UTF-8.
/// Pure: folds the path's text only; `resolve` also follows symlinks.
pub fn normalise(raw: &str) -> Option<String> {
    if raw.is_empty() || raw.len() > MAX_PATH_BYTES || raw.chars().any(crate::term::is_unsafe) {
        return None;
    }
    let path = Path::new(raw);
    if !path.is_absolute() {
        return None;
    }
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::Prefix(p) => out.push(p.as_os_str()),
            Component::RootDir => out.push(Component::RootDir.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
        }
    }
    out.to_str().map(str::to_string)
}

/// `normalise`, then symlinks resolved when the folder exists (a link to a project and the
/// project itself are one project); a folder that no longer exists keeps its folded path, so its
/// history stays its own.
pub fn resolve(raw: &str) -> Option<String> {
    let folded = normalise(raw)?;
    match std::fs::canonicalize(&folded) {
        Ok(real) => real.to_str().and_then(normalise).or(Some(folded)),
        Err(_) => Some(folded),
    }
}

/// The project of a `file://` root URI (`roots/list`), percent-decoded; `None` for another scheme,
/// a remote host, or a path `normalise` refuses.
pub fn from_file_uri(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    let path = match rest.find('/') {
        Some(0) => rest,
        Some(n) if rest[..n].eq_ignore_ascii_case("localhost") => &rest[n..],
        _ => return None,
    };
    let decoded = percent_decode(path)?;
    resolve(&decoded)
}

/// `%XX` escapes decoded; `None` for a broken escape or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The project of this process: its working directory (a `--stdio` server is started by its
/// client in the client's project folder). `None` when it cannot be read.
pub fn of_this_process() -> Option<String> {
    let cwd = std::env::current_dir().ok()?;
    resolve(cwd.to_str()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_forms_as_data() {
        let cases: &[(&str, Option<&str>)] = &[
            ("/home/a/repo", Some("/home/a/repo")),
            ("/home/a/repo/", Some("/home/a/repo")),
            ("/home//a/./repo", Some("/home/a/repo")),
            ("/home/a/x/../repo", Some("/home/a/repo")),
            ("/../..", Some("/")),
            ("/", Some("/")),
            ("/tmp/a b/ü €/'\"$(x)", Some("/tmp/a b/ü €/'\"$(x)")),
            ("relative/path", None),
            ("", None),
            ("/a\u{0}b", None),
            ("/a\nb", None),
            ("/a\u{1b}[31mred", None),
            ("/home/u/\u{202e}gpj.exe", None),
            ("/home/u/\u{2066}x", None),
        ];
        for (raw, want) in cases {
            assert_eq!(normalise(raw).as_deref(), *want, "{raw:?}");
        }
        assert_eq!(normalise(&format!("/{}", "a".repeat(MAX_PATH_BYTES))), None);
    }

    #[test]
    fn symlinks_resolve_and_a_gone_folder_keeps_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let want = resolve(real.to_str().unwrap()).unwrap();
        assert_eq!(resolve(link.to_str().unwrap()).unwrap(), want);
        assert_eq!(
            resolve(&format!("{}/", link.to_str().unwrap())).unwrap(),
            want
        );
        let gone = dir.path().join("gone/../gone2");
        let folded = normalise(gone.to_str().unwrap()).unwrap();
        assert!(folded.ends_with("/gone2"), "{folded}");
        assert_eq!(resolve(gone.to_str().unwrap()).unwrap(), folded);
    }

    #[test]
    fn file_uris() {
        assert_eq!(
            from_file_uri("file:///nowhere/my%20repo").as_deref(),
            Some("/nowhere/my repo")
        );
        assert_eq!(
            from_file_uri("file://localhost/nowhere/x/").as_deref(),
            Some("/nowhere/x")
        );
        for bad in [
            "http://x/y",
            "file://host.example/x",
            "file:///bad%zz",
            "file:///nul%00x",
            "file:///%ff%fe",
            "file://",
        ] {
            assert_eq!(from_file_uri(bad), None, "{bad}");
        }
    }
}
