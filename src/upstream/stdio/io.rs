//! A stdio child's pipes read within bounds: lines capped in length (stdout at
//! `MAX_MESSAGE_BYTES`, stderr at `STDERR_LINE_MAX`), and its stderr copied to our log at most
//! `STDERR_LINES_PER_SEC` a second while the last `STDERR_TAIL_LINES` are kept to show when it
//! dies. Must not parse what the child writes.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Stderr lines of a child kept to show when it dies. Raising it shows more of what led up to
/// the exit, at that many lines in the warning and the error.
pub const STDERR_TAIL_LINES: usize = 20;
/// The longest stderr line kept or copied, in bytes; the rest of a longer line is dropped.
/// Raising it keeps more of a long line at that much memory per kept line.
pub const STDERR_LINE_MAX: usize = 4096;
/// Stderr lines copied to our log per second (at `MWS_LOG=info`); the rest are counted and
/// summed up once a second. Raising it lets a chatty child fill the log faster.
pub const STDERR_LINES_PER_SEC: u64 = 50;
/// How long a child's stderr may still be read after its stdout closed, so that its last lines
/// are known before it is reported gone. Raising it waits longer on a child whose descendants
/// keep stderr open.
pub const STDERR_DRAIN: Duration = Duration::from_millis(300);

/// Reads one line (without its `\n`) into `buf`, keeping at most `cap` bytes of it; the rest of a
/// longer line is read and dropped. `None` at end of input; `Some(true)` when the line was cut.
pub async fn read_line<R: AsyncBufRead + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut cut = false;
    let mut any = false;
    loop {
        let avail = r.fill_buf().await?;
        if avail.is_empty() {
            return Ok(any.then_some(cut));
        }
        any = true;
        let (take, used, done) = match memchr::memchr(b'\n', avail) {
            Some(i) => (i, i + 1, true),
            None => (avail.len(), avail.len(), false),
        };
        let room = cap.saturating_sub(buf.len());
        if take > room {
            cut = true;
        }
        buf.extend_from_slice(&avail[..take.min(room)]);
        r.consume(used);
        if done {
            return Ok(Some(cut));
        }
    }
}

/// The last stderr lines of one child.
#[derive(Debug, Default)]
pub struct Tail {
    lines: VecDeque<String>,
}

impl Tail {
    fn push(&mut self, line: String) {
        if self.lines.len() == STDERR_TAIL_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }

    /// The kept lines joined by `sep`; empty when there are none.
    pub fn joined(&self, sep: &str) -> String {
        self.lines
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(sep)
    }
}

pub type SharedTail = Arc<Mutex<Tail>>;

/// A line from outside made safe to print: control characters (terminal escapes) become U+FFFD.
fn printable(raw: &[u8], cut: bool) -> String {
    let mut s: String = String::from_utf8_lossy(raw)
        .chars()
        .map(|c| {
            if c.is_control() && c != '\t' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect();
    if cut {
        s.push_str(" [...]");
    }
    s
}

/// Copies the child's stderr into the tail and, rate-limited, into our log at info level, until
/// it closes. `name` is how the log names the child.
pub async fn copy_stderr<R: AsyncBufRead + Unpin + Send + 'static>(
    mut r: R,
    name: String,
    tail: SharedTail,
) {
    let suppressed = Arc::new(AtomicU64::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let summary = {
        let (suppressed, done, name) = (suppressed.clone(), done.clone(), name.clone());
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(1)).await;
                let n = suppressed.swap(0, Ordering::Relaxed);
                if n > 0 {
                    tracing::info!(target: "mws::upstream", upstream = %name,
                        "{n} stderr lines suppressed (more than {STDERR_LINES_PER_SEC} a second)");
                }
                if done.load(Ordering::Relaxed) {
                    return;
                }
            }
        })
    };
    let mut buf = Vec::new();
    let (mut window, mut copied) = (Instant::now(), 0u64);
    while let Ok(Some(cut)) = read_line(&mut r, &mut buf, STDERR_LINE_MAX).await {
        let line = printable(&buf, cut);
        if window.elapsed() >= Duration::from_secs(1) {
            (window, copied) = (Instant::now(), 0);
        }
        if copied < STDERR_LINES_PER_SEC {
            copied += 1;
            tracing::info!(target: "mws::upstream", upstream = %name, "{line}");
        } else {
            suppressed.fetch_add(1, Ordering::Relaxed);
        }
        tail.lock().unwrap().push(line);
    }
    done.store(true, Ordering::Relaxed);
    // The last summary is due within a second; the task ends by itself after it.
    drop(summary);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_are_capped_and_the_rest_dropped() {
        let input: &[u8] = b"short\nabcdefghij\nlast-no-newline";
        let mut r = tokio::io::BufReader::with_capacity(4, input);
        let mut buf = Vec::new();
        let mut got = Vec::new();
        while let Some(cut) = read_line(&mut r, &mut buf, 6).await.unwrap() {
            got.push((String::from_utf8(buf.clone()).unwrap(), cut));
        }
        assert_eq!(
            got,
            [
                ("short".to_string(), false),
                ("abcdef".to_string(), true),
                ("last-n".to_string(), true)
            ]
        );
    }

    #[test]
    fn the_tail_keeps_the_last_lines_and_escapes_are_neutralised() {
        let mut t = Tail::default();
        for i in 0..STDERR_TAIL_LINES + 5 {
            t.push(i.to_string());
        }
        assert!(t.joined(",").starts_with("5,6,"));
        assert_eq!(printable(b"a\x1b[2Jb", false), "a\u{FFFD}[2Jb");
        assert_eq!(printable(b"long", true), "long [...]");
    }
}
