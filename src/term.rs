//! Text that came from outside (client and tool names, catalog descriptions, upstream replies,
//! config values, paths) made safe to print on a terminal: every character a terminal would act
//! on instead of showing (C0 and C1 controls, DEL, bidi overrides and isolates, line separators)
//! is written as a visible escape (`\x1b`, `\n`, `\u{202e}`). Every text renderer passes such
//! strings through `safe`; JSON output goes through `json_pretty` instead (same data, escaped
//! the JSON way); the log through `LogWriter`. Must not be applied to our own formatting (table
//! borders, colours).

use std::borrow::Cow;
use std::fmt::{self, Write as _};

/// True for a character a terminal may act on instead of showing: a control character (C0, DEL,
/// C1), a bidi embedding, override, isolate or mark, or a line or paragraph separator.
pub fn is_unsafe(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{61c}'
                | '\u{200e}'
                | '\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2066}'..='\u{2069}'
                | '\u{2028}'
                | '\u{2029}'
        )
}

/// `s` with every `is_unsafe` character escaped visibly: `\n`, `\r`, `\t`, `\x1b` for the other
/// ASCII controls, `\u{202e}` for the rest. Borrowed when there is nothing to escape.
pub fn safe(s: &str) -> Cow<'_, str> {
    escape_except(s, |_| false)
}

/// `safe`, keeping the characters `keep` says are ours.
fn escape_except(s: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(|c| is_unsafe(c) && !keep(c)) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            c if keep(c) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_unsafe(c) && c.is_ascii() => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if is_unsafe(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// `safe` applied line by line: the line breaks stay, for a message of several lines.
pub fn safe_lines(s: &str) -> String {
    s.split('\n').map(safe).collect::<Vec<_>>().join("\n")
}

/// Standard error for the log: each event's text with terminal controls escaped, except its line
/// breaks and, when the log is coloured, the formatter's own ESC (tracing escapes ESC and C1
/// inside logged values itself, not bidi controls or CR).
pub struct LogWriter {
    /// True when the log is coloured: ESC is then the formatter's.
    pub colour: bool,
}

impl std::io::Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut err = std::io::stderr().lock();
        match std::str::from_utf8(buf) {
            Ok(s) => {
                let colour = self.colour;
                let text = escape_except(s, |c| c == '\n' || (colour && c == '\u{1b}'));
                err.write_all(text.as_bytes())?;
            }
            // tracing writes whole events, so this is not a split character: pass it on.
            Err(_) => err.write_all(buf)?,
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

/// `safe` for `format!` arguments: `format!("{}", Safe(name))`.
pub struct Safe<'a>(pub &'a str);

impl fmt::Display for Safe<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&safe(self.0))
    }
}

/// A path as `safe` text (lossy for bytes that are not UTF-8).
pub fn path(p: &std::path::Path) -> String {
    safe(&p.to_string_lossy()).into_owned()
}

/// `value` as pretty JSON in which the characters that JSON leaves raw but a terminal acts on
/// (C1 controls, bidi controls, line separators) are written as `\uXXXX` too: the same data for
/// a parser, inert on a terminal. serde_json already escapes C0 controls.
pub fn json_pretty<T: serde::Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let mut out = Vec::new();
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Inert::default());
    value.serialize(&mut ser)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// serde_json's pretty formatter, with `is_unsafe` characters in strings escaped.
#[derive(Default)]
struct Inert(serde_json::ser::PrettyFormatter<'static>);

impl serde_json::ser::Formatter for Inert {
    fn write_string_fragment<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> std::io::Result<()> {
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            if is_unsafe(c) {
                w.write_all(&fragment.as_bytes()[start..i])?;
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    write!(w, "\\u{u:04x}")?;
                }
                start = i + c.len_utf8();
            }
        }
        w.write_all(&fragment.as_bytes()[start..])
    }
    fn begin_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + std::io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn begin_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + std::io::Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.0.end_object_value(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes() {
        let cases = [
            ("get_weather", "get_weather"),
            ("héllo wörld ✓ 日本", "héllo wörld ✓ 日本"),
            ("a\u{1b}[2Jb", "a\\x1b[2Jb"),
            ("\u{1b}]0;title\u{7}", "\\x1b]0;title\\x07"),
            ("x\u{9b}31m", "x\\u{9b}31m"),
            ("\u{202e}desrever", "\\u{202e}desrever"),
            ("\u{2066}i\u{2069}", "\\u{2066}i\\u{2069}"),
            ("l1\nl2\r\tz\u{7f}", "l1\\nl2\\r\\tz\\x7f"),
            ("nul\0", "nul\\x00"),
            ("sep\u{2028}", "sep\\u{2028}"),
        ];
        for (raw, shown) in cases {
            assert_eq!(safe(raw), shown, "{raw:?}");
            assert_eq!(Safe(raw).to_string(), shown);
            assert!(!safe(raw).chars().any(is_unsafe));
        }
        assert!(matches!(safe("plain"), Cow::Borrowed(_)));
        assert_eq!(safe_lines("a\u{1b}\nb\r"), "a\\x1b\nb\\r");
    }

    #[test]
    fn json_is_the_same_data_and_inert() {
        let v = serde_json::json!({"name": "a\u{1b}[2J\u{9b}\u{202e}b ✓", "n": [1, "\u{2028}"]});
        let text = json_pretty(&v).unwrap();
        assert!(!text.chars().any(|c| is_unsafe(c) && c != '\n'), "{text}");
        assert!(text.contains(r"a\u001b[2J\u009b\u202eb ✓"), "{text}");
        assert_eq!(text, {
            let plain = serde_json::to_string_pretty(&v).unwrap();
            plain
                .replace('\u{9b}', r"\u009b")
                .replace('\u{202e}', r"\u202e")
                .replace('\u{2028}', r"\u2028")
        });
        assert_eq!(serde_json::from_str::<serde_json::Value>(&text).unwrap(), v);
    }
}
