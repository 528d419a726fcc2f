//! Byte-level pre-filters that let the adapters skip most lines without parsing JSON: substring
//! search with memchr and a peek at a line's type. They may let a line through that turns out to be
//! irrelevant (the parser decides), but must never hide a relevant one.

use memchr::memmem::Finder;

/// Finds a byte string. A thin wrapper so that adapters can keep static finders.
pub struct Needle(Finder<'static>);

impl Needle {
    pub fn new(needle: &str) -> Needle {
        Needle(Finder::new(needle.as_bytes()).into_owned())
    }

    pub fn is_in(&self, hay: &[u8]) -> bool {
        self.0.find(hay).is_some()
    }

    pub fn find(&self, hay: &[u8]) -> Option<usize> {
        self.0.find(hay)
    }

    pub fn len(&self) -> usize {
        self.0.needle().len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.needle().is_empty()
    }
}

const TYPE_KEY: &[u8] = b"{\"type\":\"";

/// The value of a leading `{"type":"…"` (compact JSON whose first key is `type`), else `None`.
/// Claude Code writes its metadata lines (`api-request-blob`, `progress`, …) this way.
pub fn leading_type(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(TYPE_KEY)?;
    let end = memchr::memchr(b'"', rest)?;
    Some(&rest[..end])
}

/// The value of the first `"type":"…"` in the line. In a Codex rollout line the envelope's keys
/// (`timestamp`, `ordinal`, `type`) come before `payload`, so this is the line's kind.
pub fn first_type<'a>(line: &'a [u8], key: &Needle) -> Option<&'a [u8]> {
    let start = key.find(line)? + key.len();
    let end = memchr::memchr(b'"', &line[start..])?;
    Some(&line[start..start + end])
}

/// Every string value that follows `key` (which ends with the opening quote, as in
/// `"tool_use_id":"`). Values with escapes are returned raw; call ids never hold any.
pub fn values_after<'a>(line: &'a [u8], key: &'a Needle) -> impl Iterator<Item = &'a str> + 'a {
    let mut pos = 0;
    std::iter::from_fn(move || {
        loop {
            let at = key.find(&line[pos..])? + pos + key.len();
            let end = memchr::memchr(b'"', &line[at..])? + at;
            pos = end;
            if let Ok(s) = std::str::from_utf8(&line[at..end]) {
                return Some(s);
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leading_and_first_types() {
        assert_eq!(
            leading_type(br#"{"type":"api-request-blob","x":1}"#),
            Some(&b"api-request-blob"[..])
        );
        assert_eq!(leading_type(br#"{"parentUuid":null,"type":"user"}"#), None);
        let key = Needle::new("\"type\":\"");
        assert_eq!(
            first_type(
                br#"{"timestamp":"t","ordinal":3,"type":"event_msg","payload":{"type":"x"}}"#,
                &key
            ),
            Some(&b"event_msg"[..])
        );
        assert_eq!(first_type(br#"{"id":"a"}"#, &key), None);
    }

    #[test]
    fn values() {
        let key = Needle::new("\"tool_use_id\":\"");
        let line = br#"[{"tool_use_id":"toolu_1","x":2},{"tool_use_id":"toolu_2"}]"#;
        assert_eq!(
            values_after(line, &key).collect::<Vec<_>>(),
            ["toolu_1", "toolu_2"]
        );
        assert_eq!(values_after(br#"{"tool_use_id":"cut"#, &key).count(), 0);
    }
}
