//! What a client or a transcript names is stored bounded and printable: every writer of `calls`,
//! `sessions` and `searches` (the proxy's call log, ingest, the seeded history) passes its names
//! and ids through `text` first. Control characters and bidirectional overrides become U+FFFD; a
//! value over its cap is cut at a character boundary and ends in `…`. Must not touch source keys
//! (their uniqueness is what keeps a call from being recorded twice).

use std::borrow::Cow;

use super::log::{ScriptRecord, SearchRecord};
use crate::call::Call;

/// Longest tool name stored, in bytes. Real tool names are under 64 bytes (MCP clients cap them
/// there); raising it stores more of a runaway name.
pub const MAX_TOOL_NAME: usize = 256;

/// Longest client name (`clientInfo.name`) stored, in bytes.
pub const MAX_CLIENT_NAME: usize = 256;

/// Longest client call id stored, in bytes. A call id longer than this is cut, so two ids that
/// differ only after it match each other when a transcript is merged with the proxy's row.
pub const MAX_CALL_ID: usize = 256;

/// Longest session id stored, in bytes (the proxy's own are under 64).
pub const MAX_SESSION_ID: usize = 256;

/// What ends a value that was cut.
const CUT: char = '…';

/// Characters that make stored text lie when printed: control characters (newline, NUL, ESC…)
/// and the bidirectional marks, embeddings, overrides and isolates.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}'
        )
}

/// `s` with unsafe characters replaced by U+FFFD and cut to at most `max` bytes (ending in `…`
/// when cut). Borrowed when nothing changes.
pub fn text(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max && !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let room = max.saturating_sub(CUT.len_utf8());
    let mut out = String::with_capacity(max.min(s.len() + 3));
    let mut cut = false;
    for c in s.chars() {
        let c = if unsafe_char(c) { '\u{FFFD}' } else { c };
        if out.len() + c.len_utf8() > room {
            cut = true;
            break;
        }
        out.push(c);
    }
    if cut {
        // A value that fits only lost room to the marker: it may fit whole (a replacement is
        // never shorter than what it replaces, so a longer value cannot).
        if s.len() <= max {
            let whole: String = s
                .chars()
                .map(|c| if unsafe_char(c) { '\u{FFFD}' } else { c })
                .collect();
            if whole.len() <= max {
                return Cow::Owned(whole);
            }
        }
        out.push(CUT);
    }
    Cow::Owned(out)
}

/// `text` over an optional value.
pub fn opt(s: Option<&str>, max: usize) -> Option<Cow<'_, str>> {
    s.map(|s| text(s, max))
}

impl Call {
    /// This call with its names and ids bounded and printable (`super::clean`).
    pub(super) fn cleaned(&self) -> Cow<'_, Call> {
        let tool = text(&self.tool, MAX_TOOL_NAME);
        let session = text(&self.session_id, MAX_SESSION_ID);
        let client = opt(self.client.as_deref(), MAX_CLIENT_NAME);
        let id = opt(self.client_call_id.as_deref(), MAX_CALL_ID);
        if borrowed(&tool)
            && borrowed(&session)
            && client.as_ref().is_none_or(borrowed)
            && id.as_ref().is_none_or(borrowed)
        {
            return Cow::Borrowed(self);
        }
        Cow::Owned(Call {
            tool: tool.into_owned(),
            session_id: session.into_owned(),
            client: client.map(Cow::into_owned),
            client_call_id: id.map(Cow::into_owned),
            ..self.clone()
        })
    }
}

impl SearchRecord {
    /// This record with its session id and client name bounded and printable.
    pub(super) fn cleaned(&self) -> Cow<'_, SearchRecord> {
        let session = opt(self.session_id.as_deref(), MAX_SESSION_ID);
        let client = opt(self.client.as_deref(), MAX_CLIENT_NAME);
        if session.as_ref().is_none_or(borrowed) && client.as_ref().is_none_or(borrowed) {
            return Cow::Borrowed(self);
        }
        Cow::Owned(SearchRecord {
            session_id: session.map(Cow::into_owned),
            client: client.map(Cow::into_owned),
            ..self.clone()
        })
    }
}

impl ScriptRecord {
    /// This record with its session id and client name bounded and printable.
    pub(super) fn cleaned(&self) -> Cow<'_, ScriptRecord> {
        let session = opt(self.session_id.as_deref(), MAX_SESSION_ID);
        let client = opt(self.client.as_deref(), MAX_CLIENT_NAME);
        if session.as_ref().is_none_or(borrowed) && client.as_ref().is_none_or(borrowed) {
            return Cow::Borrowed(self);
        }
        Cow::Owned(ScriptRecord {
            session_id: session.map(Cow::into_owned),
            client: client.map(Cow::into_owned),
            ..self.clone()
        })
    }
}

/// Was this value stored as it came (nothing replaced or cut)?
#[allow(clippy::ptr_arg)] // the variant is what is asked, not the text
pub(super) fn borrowed(t: &Cow<'_, str>) -> bool {
    matches!(t, Cow::Borrowed(_))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check() {
        let cases: &[(&str, usize, &str)] = &[
            ("mail_send", 256, "mail_send"),
            ("a\nb\0c\u{1b}[2J", 256, "a\u{FFFD}b\u{FFFD}c\u{FFFD}[2J"),
            ("evil\u{202E}gnp.exe", 256, "evil\u{FFFD}gnp.exe"),
            ("abcdefgh", 8, "abcdefgh"),
            ("abcdefghi", 8, "abcde…"),
            ("ééééé", 8, "éé…"),
            ("", 8, ""),
        ];
        for (input, max, want) in cases {
            let got = text(input, *max);
            assert_eq!(got, *want, "{input:?} at {max}");
            assert!(got.len() <= *max);
        }
        assert!(matches!(text("plain", 8), Cow::Borrowed(_)));
        let long = "x".repeat(100_000);
        assert_eq!(text(&long, MAX_TOOL_NAME).len(), MAX_TOOL_NAME);
    }
}
