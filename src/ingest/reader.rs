//! Reading a transcript file from where the last run stopped: complete lines only (a final
//! fragment without `\n` is left for next time), in large chunks, with a cap on line length; and
//! the head hash that tells a grown file from a replaced one.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

/// Bytes read per `read` call. Raising it means fewer system calls and more memory per file.
pub const CHUNK: usize = 1 << 20;

/// Longest line kept (real lines reach several MB with images or file copies). A longer line is
/// skipped and counted as malformed. Raising it raises peak memory per file.
pub const MAX_LINE: usize = 64 << 20;

/// Bytes of the file's head hashed to notice a file replaced by another (truncated, rewritten).
/// Raising it makes the check stricter and each changed file's open a little slower.
pub const HEAD_BYTES: u64 = 4096;

/// One complete line, or the mark of a line longer than `MAX_LINE` that was skipped.
pub enum Line<'a> {
    Bytes(&'a [u8]),
    TooLong,
}

/// Hash of the first `len` bytes (FNV-1a, 64 bit; stable across builds), with the length.
pub fn head_hash(file: &mut File, len: u64) -> io::Result<String> {
    file.seek(SeekFrom::Start(0))?;
    let mut head = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut head)?;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in &head {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    Ok(format!("fnv1a64:{}:{h:016x}", head.len()))
}

/// Reads `end - start` bytes from `file`, which is positioned at offset `start` of the transcript
/// (a seeked file, or a decompressing stream at 0 with `end` = `u64::MAX`), and calls `each` for
/// every complete line (lines over `max_line` bytes come as `TooLong`, their bytes dropped as they
/// arrive). Returns the offset just after the last `\n` consumed (equal to `start` when no line
/// was complete). `progress` is told how many bytes each chunk had.
pub fn read_lines(
    file: &mut dyn Read,
    start: u64,
    end: u64,
    max_line: usize,
    each: &mut dyn FnMut(Line<'_>),
    progress: &mut dyn FnMut(u64),
) -> io::Result<u64> {
    let mut remaining = end.saturating_sub(start);
    let mut buf: Vec<u8> = Vec::with_capacity(CHUNK * 2);
    // File offset of buf[0].
    let mut base = start;
    // Inside a line longer than MAX_LINE whose bytes were dropped.
    let mut skipping = false;
    while remaining > 0 {
        let old = buf.len();
        let want = CHUNK.min(usize::try_from(remaining).unwrap_or(usize::MAX));
        buf.resize(old + want, 0);
        let n = file.read(&mut buf[old..])?;
        buf.truncate(old + n);
        if n == 0 {
            break; // the file shrank while we read it; the next run notices
        }
        remaining -= n as u64;
        progress(n as u64);
        // Lines before `old` had no newline: search only the new bytes for the first one.
        let mut line_start = 0;
        let mut search = old;
        while let Some(i) = memchr::memchr(b'\n', &buf[search..]) {
            let nl = search + i;
            if skipping {
                each(Line::TooLong);
                skipping = false;
            } else {
                each(Line::Bytes(&buf[line_start..nl]));
            }
            line_start = nl + 1;
            search = line_start;
        }
        base += line_start as u64;
        buf.drain(..line_start);
        if buf.len() > max_line {
            base += buf.len() as u64;
            buf.clear();
            skipping = true;
        }
    }
    Ok(base)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(content: &[u8], start: u64) -> (Vec<String>, u64) {
        lines_max(content, start, MAX_LINE)
    }

    fn lines_max(content: &[u8], start: u64, max: usize) -> (Vec<String>, u64) {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(content).unwrap();
        let mut got = Vec::new();
        let end = content.len() as u64;
        f.seek(SeekFrom::Start(start)).unwrap();
        let off = read_lines(
            &mut f,
            start,
            end,
            max,
            &mut |l| match l {
                Line::Bytes(b) => got.push(String::from_utf8_lossy(b).into_owned()),
                Line::TooLong => got.push("<too long>".into()),
            },
            &mut |_| {},
        )
        .unwrap();
        (got, off)
    }

    #[test]
    fn complete_lines_only() {
        assert_eq!(
            lines_of(b"a\nbb\ncc", 0),
            (vec!["a".into(), "bb".into()], 5)
        );
        assert_eq!(lines_of(b"a\nbb\ncc", 2), (vec!["bb".into()], 5));
        assert_eq!(lines_of(b"partial", 0), (vec![], 0));
        assert_eq!(
            lines_of(b"a\n\nb\n", 0),
            (vec!["a".into(), "".into(), "b".into()], 5)
        );
    }

    #[test]
    fn lines_across_chunks_and_too_long() {
        let long = vec![b'x'; CHUNK * 3 + 7];
        let mut content = b"first\n".to_vec();
        content.extend_from_slice(&long);
        content.extend_from_slice(b"\nlast\n");
        let (got, off) = lines_of(&content, 0);
        assert_eq!(got.len(), 3);
        assert_eq!(got[1].len(), long.len());
        assert_eq!((got[2].as_str(), off), ("last", content.len() as u64));
        let (got, off) = lines_max(&content, 0, CHUNK);
        assert_eq!(got, ["first", "<too long>", "last"]);
        assert_eq!(off, content.len() as u64);
    }

    #[test]
    fn head_hash_depends_on_len_and_bytes() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"hello world").unwrap();
        let a = head_hash(&mut f, 5).unwrap();
        assert_eq!(a, head_hash(&mut f, 5).unwrap());
        assert_ne!(a, head_hash(&mut f, 6).unwrap());
        assert!(a.starts_with("fnv1a64:5:"));
    }
}
