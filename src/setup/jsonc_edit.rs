//! Edits a JSON or JSON-with-comments document in place: set or remove one member of an object
//! found by a key path, keeping every other byte (comments, key order, indentation, the final
//! newline or its absence). Each edit is checked by parsing the result and comparing it with the
//! same edit made on the parsed value. Pure: text in, text out; must not touch a file.

use serde_json::{Map, Value};

use crate::config::jsonc;

/// One `"key": value` of an object, as byte offsets into the text.
#[derive(Debug)]
struct Member {
    key: String,
    key_start: usize,
    value: (usize, usize),
    /// The comma after the value, if any.
    comma: Option<usize>,
}

#[derive(Debug)]
struct Object {
    open: usize,
    close: usize,
    members: Vec<Member>,
}

struct Scanner<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Scanner<'_> {
    /// Skips whitespace and `//` and `/* */` comments.
    fn skip(&mut self) -> Result<(), String> {
        loop {
            match self.b.get(self.pos..self.pos + 2) {
                Some(b"//") => {
                    while self.pos < self.b.len() && self.b[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                Some(b"/*") => {
                    let rest = &self.b[self.pos + 2..];
                    let end = rest.windows(2).position(|w| w == b"*/");
                    self.pos += 2 + end.ok_or("unclosed comment")? + 2;
                }
                _ if self.b.get(self.pos).is_some_and(u8::is_ascii_whitespace) => self.pos += 1,
                _ => return Ok(()),
            }
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    /// A string starting at `pos`, decoded.
    fn string(&mut self) -> Result<String, String> {
        let start = self.pos;
        self.pos += 1;
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                b'\\' => self.pos += 1,
                b'"' => {
                    let raw =
                        std::str::from_utf8(&self.b[start..self.pos]).map_err(|e| e.to_string())?;
                    return serde_json::from_str(raw).map_err(|e| e.to_string());
                }
                _ => {}
            }
        }
        Err("unclosed string".into())
    }

    /// The span of the value at `pos`.
    fn value(&mut self) -> Result<(usize, usize), String> {
        let start = self.pos;
        match self.peek() {
            Some(b'{') => {
                self.object()?;
            }
            Some(b'[') => {
                self.pos += 1;
                loop {
                    self.skip()?;
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        break;
                    }
                    self.value()?;
                    self.skip()?;
                    match self.peek() {
                        Some(b',') => self.pos += 1,
                        Some(b']') => {}
                        _ => return Err("expected `,` or `]`".into()),
                    }
                }
            }
            Some(b'"') => {
                self.string()?;
            }
            Some(_) => {
                while self.peek().is_some_and(|c| {
                    !matches!(c, b',' | b']' | b'}' | b'/') && !c.is_ascii_whitespace()
                }) {
                    self.pos += 1;
                }
                if self.pos == start {
                    return Err("expected a value".into());
                }
            }
            None => return Err("unexpected end".into()),
        }
        Ok((start, self.pos))
    }

    /// The object at `pos` (`{`) with its members.
    fn object(&mut self) -> Result<Object, String> {
        let open = self.pos;
        self.pos += 1;
        let mut members = Vec::new();
        loop {
            self.skip()?;
            match self.peek() {
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Object {
                        open,
                        close: self.pos - 1,
                        members,
                    });
                }
                Some(b'"') => {}
                _ => return Err("expected a key or `}`".into()),
            }
            let key_start = self.pos;
            let key = self.string()?;
            self.skip()?;
            if self.peek() != Some(b':') {
                return Err("expected `:`".into());
            }
            self.pos += 1;
            self.skip()?;
            let value = self.value()?;
            self.skip()?;
            let comma = (self.peek() == Some(b',')).then_some(self.pos);
            if comma.is_some() {
                self.pos += 1;
            } else if self.peek() != Some(b'}') {
                return Err("expected `,` or `}`".into());
            }
            members.push(Member {
                key,
                key_start,
                value,
                comma,
            });
        }
    }
}

/// The object at `path` (keys from the top), `None` when a key on the way is missing.
fn find(text: &str, path: &[&str]) -> Result<Option<Object>, String> {
    let mut s = Scanner {
        b: text.as_bytes(),
        pos: 0,
    };
    s.skip()?;
    if s.peek() != Some(b'{') {
        return Err("the document is not a JSON object".into());
    }
    let mut obj = s.object()?;
    for key in path {
        let Some(m) = obj.members.iter().rev().find(|m| m.key == *key) else {
            return Ok(None);
        };
        s.pos = m.value.0;
        if s.peek() != Some(b'{') {
            return Err(format!("`{key}` is not an object"));
        }
        obj = s.object()?;
    }
    Ok(Some(obj))
}

/// The whitespace a line starts with, for the line holding `pos`.
fn indent_at(text: &str, pos: usize) -> &str {
    let line = text[..pos].rfind('\n').map_or(0, |i| i + 1);
    let rest = &text[line..];
    &rest[..rest.len() - rest.trim_start_matches([' ', '\t']).len()]
}

fn pretty(value: &Value, indent: &str) -> String {
    let s = serde_json::to_string_pretty(value).expect("a value always serializes");
    s.replace('\n', &format!("\n{indent}"))
}

/// `text` with `key` of the object at `path` set to `value` (replaced in place, or added as the
/// last member); missing objects on the way are created.
pub fn set(text: &str, path: &[&str], key: &str, value: &Value) -> Result<String, String> {
    let text = if text.trim().is_empty() { "{}\n" } else { text };
    let obj = match find(text, path)? {
        Some(o) => o,
        None => {
            let (last, parent) = path.split_last().expect("the top level always exists");
            let made = set(text, parent, last, &Value::Object(Map::new()))?;
            return set(&made, path, key, value);
        }
    };
    let quoted = serde_json::to_string(key).expect("a key always serializes");
    let out = if let Some(m) = obj.members.iter().rev().find(|m| m.key == key) {
        let indent = indent_at(text, m.key_start);
        format!(
            "{}{}{}",
            &text[..m.value.0],
            pretty(value, indent),
            &text[m.value.1..]
        )
    } else if let Some(last) = obj.members.last() {
        let indent = indent_at(text, last.key_start).to_string();
        let indent = if text[obj.open..last.key_start].contains('\n') {
            indent
        } else {
            format!("{}  ", indent_at(text, obj.open))
        };
        let member = format!("\n{indent}{quoted}: {}", pretty(value, &indent));
        match last.comma {
            Some(c) => format!("{}{member},{}", &text[..=c], &text[c + 1..]),
            None => format!(
                "{},{member}{}",
                &text[..last.value.1],
                &text[last.value.1..]
            ),
        }
    } else {
        let outer = indent_at(text, obj.open);
        let indent = format!("{outer}  ");
        let member = format!("{quoted}: {}", pretty(value, &indent));
        let inner = &text[obj.open + 1..obj.close];
        if inner.trim().is_empty() {
            format!(
                "{}\n{indent}{member}\n{outer}{}",
                &text[..=obj.open],
                &text[obj.close..]
            )
        } else {
            format!(
                "{}\n{indent}{member},{}",
                &text[..=obj.open],
                &text[obj.open + 1..]
            )
        }
    };
    check(text, &out, path, |o| {
        o.insert(key.to_string(), value.clone());
    })?;
    Ok(out)
}

/// `text` without `key` in the object at `path` (unchanged when it is not there).
pub fn remove(text: &str, path: &[&str], key: &str) -> Result<String, String> {
    let Some(obj) = find(text, path)? else {
        return Ok(text.to_string());
    };
    let Some(i) = obj.members.iter().rposition(|m| m.key == key) else {
        return Ok(text.to_string());
    };
    let m = &obj.members[i];
    let (mut start, mut end) = match (m.comma, i.checked_sub(1).map(|p| &obj.members[p])) {
        (Some(c), _) => (m.key_start, c + 1),
        (None, Some(prev)) => (prev.comma.unwrap_or(prev.value.1), m.value.1),
        (None, None) => (m.key_start, m.value.1),
    };
    // Take the member's whole line when nothing else is on it.
    let line_start = text[..start].rfind('\n').map_or(0, |n| n + 1);
    if text[line_start..start].trim().is_empty() && m.comma.is_some() {
        let rest = &text[end..];
        let trailing = rest.len() - rest.trim_start_matches([' ', '\t']).len();
        if rest[trailing..].starts_with('\n') {
            start = line_start;
            end += trailing + 1;
        }
    }
    let out = format!("{}{}", &text[..start], &text[end..]);
    check(text, &out, path, |o| {
        o.shift_remove(key);
    })?;
    Ok(out)
}

/// Both sides parsed: the edited text must equal the original value with `edit` made at `path`.
fn check(
    before: &str,
    after: &str,
    path: &[&str],
    edit: impl FnOnce(&mut Map<String, Value>),
) -> Result<(), String> {
    let parse =
        |t: &str| serde_json::from_str::<Value>(&jsonc::strip(t)).map_err(|e| e.to_string());
    let mut want = parse(before)?;
    let mut at = &mut want;
    for k in path {
        at = at.get_mut(*k).ok_or("the path went missing")?;
    }
    edit(at.as_object_mut().ok_or("not an object")?);
    let got = parse(after).map_err(|e| format!("the edit would make the file invalid: {e}"))?;
    if got != want {
        return Err("the edit would change more than the one member".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeps_comments_and_layout() {
        let text = "// top\n{\n  \"a\": 1, // one\n  \"mcpServers\": {\n    \"x\": {\"command\": \"x\"},\n    \"y\": {\"url\": \"u\"}\n  }\n}";
        let out = remove(text, &["mcpServers"], "x").unwrap();
        assert_eq!(
            out,
            "// top\n{\n  \"a\": 1, // one\n  \"mcpServers\": {\n    \"y\": {\"url\": \"u\"}\n  }\n}"
        );
        let out = set(
            &out,
            &["mcpServers"],
            "toolbox",
            &json!({"url": "http://h/mcp"}),
        )
        .unwrap();
        assert_eq!(
            out,
            "// top\n{\n  \"a\": 1, // one\n  \"mcpServers\": {\n    \"y\": {\"url\": \"u\"},\n    \"toolbox\": {\n      \"url\": \"http://h/mcp\"\n    }\n  }\n}"
        );
        let out = remove(&out, &["mcpServers"], "toolbox").unwrap();
        assert_eq!(
            out,
            "// top\n{\n  \"a\": 1, // one\n  \"mcpServers\": {\n    \"y\": {\"url\": \"u\"}\n  }\n}"
        );
    }

    #[test]
    fn creates_what_is_missing_and_replaces_in_place() {
        let out = set("", &["servers"], "t", &json!({"command": "uvx"})).unwrap();
        assert_eq!(
            out,
            "{\n  \"servers\": {\n    \"t\": {\n      \"command\": \"uvx\"\n    }\n  }\n}\n"
        );
        let out = set(&out, &["servers"], "t", &json!(1)).unwrap();
        assert_eq!(out, "{\n  \"servers\": {\n    \"t\": 1\n  }\n}\n");
        let trailing = "{\n  \"a\": [1, 2,],\n}\n";
        let out = set(trailing, &[], "b", &json!(true)).unwrap();
        assert_eq!(out, "{\n  \"a\": [1, 2,],\n  \"b\": true,\n}\n");
    }

    #[test]
    fn the_last_and_only_members_go_cleanly() {
        let text = "{\"a\": 1, \"b\": 2}";
        assert_eq!(remove(text, &[], "b").unwrap(), "{\"a\": 1}");
        assert_eq!(remove("{\"a\": 1}", &[], "a").unwrap(), "{}");
        assert_eq!(remove(text, &[], "zz").unwrap(), text);
        assert_eq!(remove(text, &["nope"], "a").unwrap(), text);
    }

    #[test]
    fn malformed_input_is_refused() {
        for bad in ["[1]", "{\"a\" 1}", "{\"a\": 1", "{\"a\": \"x}"] {
            assert!(set(bad, &[], "k", &json!(1)).is_err(), "{bad}");
        }
        assert!(set("{\"s\": 1}", &["s"], "k", &json!(1)).is_err());
    }
}
