//! One client file as a document of named entries, for undo's entry-by-entry path: JSON or
//! JSON-with-comments (edited with `jsonc_edit`, every other byte kept) or TOML (`toml_edit`,
//! formatting kept). An entry is found by the keys of the map that holds it and its name, and
//! read as a JSON value whatever the file's syntax. Pure: bytes in, text out; must not touch a
//! file.

use serde_json::Value;

use super::jsonc_edit;

/// A parsed client file.
pub enum Doc {
    Json(String),
    Toml(toml_edit::DocumentMut),
}

impl Doc {
    /// `bytes` read as TOML when `toml` is set (a `.toml` file), as JSON(C) otherwise.
    pub fn parse(bytes: &[u8], toml: bool) -> Result<Doc, String> {
        let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
        if toml {
            return text
                .parse::<toml_edit::DocumentMut>()
                .map(Doc::Toml)
                .map_err(|e| format!("not valid TOML: {e}"));
        }
        serde_json::from_str::<Value>(&crate::config::jsonc::strip(text))
            .map_err(|e| format!("not valid JSON: {e}"))?;
        Ok(Doc::Json(text.to_string()))
    }

    /// The entry `name` of the map at `at`, as JSON.
    pub fn get(&self, at: &[String], name: &str) -> Option<Value> {
        match self {
            Doc::Json(text) => {
                let mut v: Value = serde_json::from_str(&crate::config::jsonc::strip(text)).ok()?;
                for k in at {
                    v = v.get_mut(k)?.take();
                }
                v.get_mut(name).map(Value::take)
            }
            Doc::Toml(doc) => {
                let mut item = doc.as_item();
                for k in at {
                    item = item.get(k)?;
                }
                toml_json(item.get(name)?)
            }
        }
    }

    /// Takes the entry `name` out of the map at `at` (nothing when it is not there).
    pub fn remove(&mut self, at: &[String], name: &str) -> Result<(), String> {
        match self {
            Doc::Json(text) => {
                let keys: Vec<&str> = at.iter().map(String::as_str).collect();
                *text = jsonc_edit::remove(text, &keys, name)?;
            }
            Doc::Toml(doc) => {
                let mut item = doc.as_item_mut();
                for k in at {
                    match item.get_mut(k) {
                        Some(i) => item = i,
                        None => return Ok(()),
                    }
                }
                if let Some(t) = item.as_table_like_mut() {
                    t.remove(name);
                }
            }
        }
        Ok(())
    }

    /// Puts the entry `name` of `from`'s map at `at` into this document's map at `at` (created
    /// when missing), as `from` had it.
    pub fn put_from(&mut self, from: &Doc, at: &[String], name: &str) -> Result<(), String> {
        match (self, from) {
            (Doc::Json(text), Doc::Json(_)) => {
                let value = from.get(at, name).ok_or("the backup has no such entry")?;
                let keys: Vec<&str> = at.iter().map(String::as_str).collect();
                *text = jsonc_edit::set(text, &keys, name, &value)?;
            }
            (Doc::Toml(doc), Doc::Toml(old)) => {
                let mut src = old.as_item();
                for k in at {
                    src = src.get(k).ok_or("the backup has no such entry")?;
                }
                let entry = src.get(name).ok_or("the backup has no such entry")?.clone();
                let mut table = doc.as_table_mut() as &mut dyn toml_edit::TableLike;
                for k in at {
                    if table.get(k).is_none() {
                        let mut t = toml_edit::Table::new();
                        t.set_implicit(true);
                        table.insert(k, toml_edit::Item::Table(t));
                    }
                    table = table
                        .get_mut(k)
                        .and_then(toml_edit::Item::as_table_like_mut)
                        .ok_or_else(|| format!("`{k}` is not a table"))?;
                }
                table.insert(name, entry);
            }
            _ => return Err("the backup is not of the same syntax".into()),
        }
        Ok(())
    }

    pub fn text(&self) -> String {
        match self {
            Doc::Json(text) => text.clone(),
            Doc::Toml(doc) => doc.to_string(),
        }
    }
}

/// A TOML item (a table, an inline table or a value) as JSON.
fn toml_json(item: &toml_edit::Item) -> Option<Value> {
    let mut d = toml_edit::DocumentMut::new();
    d.insert("x", item.clone());
    let mut t: toml::Table = toml::from_str(&d.to_string()).ok()?;
    serde_json::to_value(t.remove("x")?).ok()
}

/// A stable digest of file contents (FNV-1a, 64 bits): tells a changed file from an unchanged
/// one; not a security check.
pub fn digest(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{h:016x}")
}

/// A digest of an entry that does not depend on key order or formatting: tells an entry changed
/// since from one left as it was, without keeping its values (they may hold secrets).
pub fn entry_digest(v: &Value) -> String {
    let mut text: Vec<u8> = Vec::new();
    write_sorted(v, &mut text);
    digest(&text)
}

/// `v` as JSON text with every object's keys in sorted order.
fn write_sorted(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            out.push(b'{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend(serde_json::to_vec(k).expect("a key serializes"));
                out.push(b':');
                write_sorted(&m[k], out);
            }
            out.push(b'}');
        }
        Value::Array(a) => {
            out.push(b'[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_sorted(x, out);
            }
            out.push(b']');
        }
        v => out.extend(serde_json::to_vec(v).expect("a value serializes")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(keys: &[&str]) -> Vec<String> {
        keys.iter().map(|k| k.to_string()).collect()
    }

    #[test]
    fn json_entry_taken_out_and_put_back_keeps_the_rest() {
        let old = Doc::parse(
            br#"{"mcpServers": {"a": {"command": "x"}, "b": {"url": "u"}}, "other": 1}"#,
            false,
        )
        .unwrap();
        let mut now = Doc::parse(
            br#"{"mcpServers": {"b": {"url": "u"}, "new": {"command": "n"}}, "other": 2}"#,
            false,
        )
        .unwrap();
        now.put_from(&old, &at(&["mcpServers"]), "a").unwrap();
        now.remove(&at(&["mcpServers"]), "b").unwrap();
        let v: Value = serde_json::from_str(&now.text()).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"mcpServers": {"new": {"command": "n"}, "a": {"command": "x"}}, "other": 2})
        );
    }

    #[test]
    fn toml_entry_with_sub_tables_round_trips() {
        let old = Doc::parse(
            b"[mcp_servers.docs]\ncommand = \"d\"\n\n[mcp_servers.docs.env]\nK = \"v\"\n",
            true,
        )
        .unwrap();
        let mut now = Doc::parse(b"model = \"o3\"\n", true).unwrap();
        let servers = at(&["mcp_servers"]);
        assert_eq!(now.get(&servers, "docs"), None);
        now.put_from(&old, &servers, "docs").unwrap();
        assert_eq!(now.get(&servers, "docs"), old.get(&servers, "docs"));
        assert_eq!(
            now.get(&servers, "docs").unwrap(),
            serde_json::json!({"command": "d", "env": {"K": "v"}})
        );
        now.remove(&servers, "docs").unwrap();
        assert_eq!(now.get(&servers, "docs"), None);
        assert!(now.text().starts_with("model = \"o3\"\n"), "{}", now.text());
    }

    #[test]
    fn digest_ignores_key_order_and_tells_values_apart() {
        let a = serde_json::json!({"command": "x", "args": ["1"], "env": {"A": "1", "B": "2"}});
        let b: Value =
            serde_json::from_str(r#"{"env": {"B": "2", "A": "1"}, "args": ["1"], "command": "x"}"#)
                .unwrap();
        assert_eq!(entry_digest(&a), entry_digest(&b));
        let c = serde_json::json!({"command": "x", "args": ["2"], "env": {"A": "1", "B": "2"}});
        assert_ne!(entry_digest(&a), entry_digest(&c));
    }
}
