//! Notices a damaged `state.db` under the running proxy: SQLite's "corrupt" and "not a database"
//! errors from the call log's writes, and a file header that no longer reads as SQLite's (bytes
//! overwritten on disk that the WAL still hides from every connection). Says so once, loudly, on
//! stderr; calls go on. Must not close a descriptor of the database while connections live: the
//! header is read through one descriptor kept open for the life of the process.

use std::fs::File;
use std::mem::ManuallyDrop;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// The first bytes of every SQLite 3 database file.
const MAGIC: &[u8; 16] = b"SQLite format 3\0";

/// What is wrong with a database file's first 100 bytes (`None` when they read as a database
/// header; an empty file is one SQLite has not written yet).
pub fn header_problem(header: &[u8]) -> Option<String> {
    if header.is_empty() {
        return None;
    }
    if header.len() < 100 {
        return Some(format!(
            "the file is {} bytes, shorter than a database header",
            header.len()
        ));
    }
    if &header[..16] != MAGIC {
        return Some("its header does not start with \"SQLite format 3\"".into());
    }
    let page = u32::from(u16::from_be_bytes([header[16], header[17]]));
    let page = if page == 1 { 65536 } else { page };
    if !(512..=65536).contains(&page) || !page.is_power_of_two() || header[21..24] != [64, 32, 32] {
        return Some("its header is damaged (page size or payload fractions)".into());
    }
    None
}

/// The database file's header problem, read by path (`mws doctor`; not while this process has
/// SQLite connections to it, see the module doc).
pub fn file_header_problem(path: &Path) -> std::io::Result<Option<String>> {
    let mut header = [0u8; 100];
    let f = File::open(path)?;
    let n = f.read_at(&mut header, 0)?;
    Ok(header_problem(&header[..n]))
}

/// Is this SQLite error a damaged database?
pub fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase)
    )
}

/// The call log's watch over its database file.
pub struct Watch {
    path: PathBuf,
    /// Never closed (see the module doc); one per file the writer opened.
    file: Option<ManuallyDrop<File>>,
    id: Option<(u64, u64)>,
    reported: bool,
}

impl Watch {
    pub fn new(path: &Path) -> Watch {
        Watch {
            path: path.to_path_buf(),
            file: None,
            id: None,
            reported: false,
        }
    }

    /// After the writer (re)opened the database whose identity is `id`: reads its header from
    /// now on. Opened once per file: a descriptor is never closed while connections live.
    pub fn opened(&mut self, id: Option<(u64, u64)>) {
        if id == self.id && self.file.is_some() {
            return;
        }
        self.id = id;
        // A replaced file's descriptor is left open, not closed (ManuallyDrop).
        self.file = File::open(&self.path).ok().map(ManuallyDrop::new);
    }

    /// Checks the header after a batch; reports a problem once.
    pub fn check_header(&mut self) {
        let Some(f) = &self.file else { return };
        let mut header = [0u8; 100];
        let Ok(n) = f.read_at(&mut header, 0) else {
            return;
        };
        if let Some(problem) = header_problem(&header[..n]) {
            self.report(&problem);
        }
    }

    /// A write failed with `e`: reported when it is corruption. True when it was.
    pub fn write_failed(&mut self, e: &rusqlite::Error) -> bool {
        if is_corruption(e) {
            self.report(&e.to_string());
            return true;
        }
        false
    }

    fn report(&mut self, problem: &str) {
        if self.reported {
            return;
        }
        self.reported = true;
        let p = self.path.display();
        tracing::error!(
            "call log: {p} is corrupt ({problem}): call rows logged from now on may be lost, and \
             some already there may be too; calls keep working. Stop mws, copy {p}* aside, then \
             run `mws doctor` for what to do"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.db");
        drop(crate::store::Store::open(&path).unwrap());
        assert_eq!(file_header_problem(&path).unwrap(), None);
        let mut bytes = std::fs::read(&path).unwrap();
        assert_eq!(header_problem(&bytes[..100]), None);
        assert_eq!(header_problem(&[]), None);
        assert_eq!(
            header_problem(&bytes[..10]).unwrap(),
            "the file is 10 bytes, shorter than a database header"
        );
        bytes[21] = 0;
        assert!(header_problem(&bytes[..100]).unwrap().contains("damaged"));
        bytes[0] = b'X';
        assert!(
            header_problem(&bytes[..100])
                .unwrap()
                .contains("SQLite format 3")
        );
    }
}
