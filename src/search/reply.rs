//! `search_tools`' reply (docs/search.md): compact JSON in rank order, full schemas, a `call_tool`
//! template (and, in code mode, the call's typed signature in a script) for the top results, kept under the byte budget by trimming descriptions, then
//! dropping schemas, then dropping the lowest entries — never by cutting JSON. Pure.

use std::borrow::Cow;

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value, json};

pub use crate::mcp::json_len;

/// Results that carry their full `inputSchema` (and a `call_tool` template). Raising it makes
/// replies bigger and lets the budget trim sooner.
pub const SCHEMA_RESULTS: usize = 3;

/// Description caps tried in turn, in characters, when a reply is over budget. Lowering the last
/// step lets more entries survive on catalogs with long descriptions, at the cost of meaning.
pub const DESCRIPTION_CAPS: [usize; 5] = [600, 300, 160, 80, 40];

/// One tool of a reply, before budgeting.
pub struct Entry<'a> {
    pub tool: &'a Value,
    pub listed: bool,
}

/// What the budget did, for tests and `--explain`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trimmed {
    /// The description cap finally applied, if any.
    pub description_cap: Option<usize>,
    /// Results whose schema was dropped.
    pub schemas_dropped: usize,
    /// Entries dropped from the end.
    pub entries_dropped: usize,
}

/// A reply's compact text and what the budget did.
pub struct Built {
    pub text: String,
    pub shown: usize,
    pub trimmed: Trimmed,
}

/// Builds a ranked, backend or exact reply. `more` counts matches not in `entries`; `budget` is
/// `None` for the uncapped exact mode.
///
/// Each entry is serialised once, straight from the upstream's tool object (no copy of its
/// schema), and again only when the budget trims it; the reply is the frame with the entries'
/// texts spliced in.
pub fn results(
    mode: &str,
    extra: &[(&str, Value)],
    entries: &[Entry],
    more: usize,
    hint: Option<&str>,
    budget: Option<usize>,
    script: bool,
) -> Built {
    let mut cap: Option<usize> = None;
    let mut schemas = SCHEMA_RESULTS.min(entries.len());
    let mut texts: Vec<String> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| entry_text(e, cap, i < schemas, script))
        .collect();
    let mut trimmed = Trimmed::default();
    let fits = |texts: &[String], dropped: usize| match budget {
        None => true,
        Some(b) => total(mode, extra, texts, more + dropped, hint) <= b,
    };
    let mut caps = DESCRIPTION_CAPS.iter();
    while !fits(&texts, 0) {
        let Some(&c) = caps.next() else { break };
        cap = Some(c);
        trimmed.description_cap = cap;
        for (i, e) in entries.iter().enumerate() {
            if description(e.tool).chars().count() > c {
                texts[i] = entry_text(e, cap, i < schemas, script);
            }
        }
    }
    while schemas > 0 && !fits(&texts, 0) {
        schemas -= 1;
        trimmed.schemas_dropped += 1;
        texts[schemas] = entry_text(&entries[schemas], cap, false, script);
    }
    while !texts.is_empty() && !fits(&texts, trimmed.entries_dropped) {
        texts.pop();
        trimmed.entries_dropped += 1;
    }
    let shown = texts.len();
    let more = more + trimmed.entries_dropped;
    let text = splice(&to_text(&wrap(mode, extra, Vec::new(), more, hint)), &texts);
    Built {
        text,
        shown,
        trimmed,
    }
}

/// Compact JSON text of `v`, written straight into bytes (`Value`'s `Display` goes through the
/// formatter, a call per fragment).
fn to_text(v: &impl Serialize) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// `frame` (a reply with `"results":[]`) with `entries` put in that array. The key can only be
/// found where it is a key: inside a JSON string every `"` is escaped.
fn splice(frame: &str, entries: &[String]) -> String {
    const KEY: &str = "\"results\":[";
    let at = frame.find(KEY).map_or(frame.len(), |i| i + KEY.len());
    let len = frame.len() + entries.iter().map(|e| e.len() + 1).sum::<usize>();
    let mut text = String::with_capacity(len);
    text.push_str(&frame[..at]);
    for (i, e) in entries.iter().enumerate() {
        if i > 0 {
            text.push(',');
        }
        text.push_str(e);
    }
    text.push_str(&frame[at..]);
    text
}

/// One result object as text: name, description (capped), listed, `readOnly` for a tool its
/// server marks `readOnlyHint: true`, and for schema results the upstream `inputSchema` as sent
/// plus a `call_tool` template, and in code mode (`script`) the call's signature in a script.
fn entry_text(e: &Entry, cap: Option<usize>, schema: bool, script: bool) -> String {
    to_text(&EntryView {
        tool: e.tool,
        listed: e.listed,
        cap,
        schema,
        script,
    })
}

/// A result object, serialised from the borrowed tool.
struct EntryView<'a> {
    tool: &'a Value,
    listed: bool,
    cap: Option<usize>,
    schema: bool,
    script: bool,
}

impl Serialize for EntryView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let name = self.tool.get("name").unwrap_or(&Value::Null);
        let desc = description(self.tool);
        let desc: Cow<str> = match self.cap {
            Some(c) => Cow::Owned(trim(desc, c)),
            None => Cow::Borrowed(desc),
        };
        let schema = self.tool.get("inputSchema").filter(|_| self.schema);
        let read_only = crate::policy::read_only(Some(self.tool));
        let script = schema.is_some() && self.script;
        let len =
            3 + usize::from(read_only) + if schema.is_some() { 2 } else { 0 } + usize::from(script);
        let mut m = s.serialize_map(Some(len))?;
        m.serialize_entry("name", name)?;
        m.serialize_entry("description", &desc)?;
        m.serialize_entry("listed", &self.listed)?;
        // `call_read_only_tool` runs exactly the tools marked so.
        if read_only {
            m.serialize_entry("readOnly", &true)?;
        }
        if let Some(schema) = schema {
            m.serialize_entry("inputSchema", schema)?;
            m.serialize_entry(
                "call_tool",
                &json!({"name": name, "arguments": placeholders(schema)}),
            )?;
            if script {
                let name = name.as_str().unwrap_or("");
                let sig = crate::script::signature::signature(name, self.tool);
                m.serialize_entry("script", &format!("await {sig}"))?;
            }
        }
        m.end()
    }
}

pub fn description(tool: &Value) -> &str {
    tool.get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `{required_arg: "<required_arg>"}`; non-string arguments name their type
/// (`"<duration_minutes: integer>"`) so that the model knows not to quote them.
pub fn placeholders(schema: &Value) -> Value {
    let props = schema.get("properties");
    let mut m = Map::new();
    for r in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        let ty = props
            .and_then(|p| p.get(r))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("string");
        let ph = if ty == "string" {
            format!("<{r}>")
        } else {
            format!("<{r}: {ty}>")
        };
        m.insert(r.to_string(), Value::String(ph));
    }
    Value::Object(m)
}

/// `s` cut to at most `cap` characters at a word boundary when one is near, with `…`.
pub fn trim(s: &str, cap: usize) -> String {
    if s.chars().count() <= cap {
        return s.to_string();
    }
    let end = s.char_indices().nth(cap).map(|(i, _)| i).unwrap_or(s.len());
    let cut = &s[..end];
    let cut = match cut.rfind(char::is_whitespace) {
        Some(i) if i > end / 2 => &cut[..i],
        _ => cut,
    };
    format!("{}…", cut.trim_end())
}

fn wrap(
    mode: &str,
    extra: &[(&str, Value)],
    results: Vec<Value>,
    more: usize,
    hint: Option<&str>,
) -> Value {
    let mut m = Map::new();
    m.insert("mode".into(), Value::String(mode.into()));
    for (k, v) in extra {
        m.insert((*k).into(), v.clone());
    }
    m.insert("results".into(), Value::Array(results));
    if more > 0 {
        m.insert("more".into(), json!(more));
    }
    if let Some(h) = hint {
        m.insert("hint".into(), Value::String(h.into()));
    }
    Value::Object(m)
}

/// Bytes of the whole reply given the entries' texts, without building it.
fn total(
    mode: &str,
    extra: &[(&str, Value)],
    texts: &[String],
    more: usize,
    hint: Option<&str>,
) -> usize {
    let frame = json_len(&wrap(mode, extra, Vec::new(), more, hint));
    frame + texts.iter().map(String::len).sum::<usize>() + texts.len().saturating_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_at_words_and_placeholders_name_types() {
        assert_eq!(trim("short", 10), "short");
        assert_eq!(trim("one two three four", 12), "one two…");
        assert_eq!(trim("ééééé", 2), "éé…");
        let s = json!({"properties": {"a": {"type": "integer"}, "b": {}}, "required": ["a", "b"]});
        assert_eq!(placeholders(&s), json!({"a": "<a: integer>", "b": "<b>"}));
    }

    /// `readOnly` marks a tool its server marks `readOnlyHint: true` (what `call_read_only_tool`
    /// runs), with or without its schema; other tools have no such key.
    #[test]
    fn a_read_only_tool_is_marked() {
        let text = |tool: Value, schema: bool| {
            let e = Entry {
                tool: &tool,
                listed: false,
            };
            entry_text(&e, None, schema, false)
        };
        let ro = json!({"name": "r", "inputSchema": {}, "annotations": {"readOnlyHint": true}});
        assert_eq!(
            text(ro.clone(), false),
            r#"{"name":"r","description":"","listed":false,"readOnly":true}"#
        );
        let with_schema: Value = serde_json::from_str(&text(ro.clone(), true)).unwrap();
        assert_eq!(with_schema["readOnly"], true);
        assert_eq!(with_schema["call_tool"]["name"], "r");
        assert_eq!(with_schema.get("script"), None);
        let e = Entry {
            tool: &ro,
            listed: false,
        };
        let scripted: Value = serde_json::from_str(&entry_text(&e, None, true, true)).unwrap();
        assert_eq!(scripted["script"], "await tools.r(args: any): Promise<any>");
        for rw in [
            json!({"name": "w", "annotations": {"readOnlyHint": false}}),
            json!({"name": "w"}),
        ] {
            assert_eq!(
                text(rw, false),
                r#"{"name":"w","description":"","listed":false}"#
            );
        }
    }
}
