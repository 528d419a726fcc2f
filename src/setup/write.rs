//! Writes a client's file the way its user keeps it: through a symbolic link to the file it
//! points at (a dotfiles link stays a link), replaced whole (temp file and rename), with its
//! mode kept; a file its user made read-only is refused, not overwritten. Must not write any
//! other file than the one named (or its link's target).

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The file `path` names: itself, or the file at the end of its links.
pub fn target_of(path: &Path) -> Result<PathBuf, String> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => std::fs::canonicalize(path)
            .map_err(|e| format!("it is a link to a file that cannot be reached: {e}")),
        _ => Ok(path.to_path_buf()),
    }
}

/// Refuses a file whose owner has no write bit: the user made it read-only on purpose.
pub fn check_writable(path: &Path) -> Result<(), String> {
    match std::fs::metadata(path) {
        Ok(m) if m.permissions().mode() & 0o200 == 0 => Err(format!(
            "it is read-only (mode {:o}): mws does not change a file you made read-only; run \
             `chmod u+w {}` to let it",
            m.permissions().mode() & 0o7777,
            path.display()
        )),
        _ => Ok(()),
    }
}

/// Replaces the file `path` names (see the module doc), giving it back its mode.
pub fn keeping_mode(path: &Path, body: &[u8]) -> Result<(), String> {
    let mode = std::fs::metadata(path)
        .ok()
        .map(|m| m.permissions().mode() & 0o7777);
    with_mode(path, body, mode)
}

/// Replaces the file `path` names with `body` and sets `mode` on it (0600 when `None`).
pub fn with_mode(path: &Path, body: &[u8], mode: Option<u32>) -> Result<(), String> {
    let io = |e: std::io::Error| format!("cannot write: {e}");
    let target = target_of(path)?;
    crate::private_file::prepare(&target, body)
        .map_err(io)?
        .commit()
        .map_err(io)?;
    if let Some(mode) = mode {
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(mode)).map_err(io)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_stays_a_link_and_its_target_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/claude.json");
        std::fs::create_dir(dir.path().join("dotfiles")).unwrap();
        std::fs::write(&real, "{}").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join(".claude.json");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        keeping_mode(&link, b"{\"a\": 1}").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "{\"a\": 1}");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
    }

    #[test]
    fn a_read_only_file_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("mcp.json");
        std::fs::write(&f, "{}").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o444)).unwrap();
        let err = check_writable(&f).unwrap_err();
        assert_eq!(
            err,
            format!(
                "it is read-only (mode 444): mws does not change a file you made read-only; run \
                 `chmod u+w {}` to let it",
                f.display()
            )
        );
        check_writable(&dir.path().join("missing.json")).unwrap();
    }
}
