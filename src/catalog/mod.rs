//! The upstream's tool catalog as data: tool objects exactly as the upstream sent them (unknown
//! fields and key order kept), plus lookups. Shared by the proxy, search, promote and report.
//! Must not do I/O except `load_file`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

pub mod check;
pub mod definitions;
pub mod exposed;

/// The full upstream catalog: `tools/list` results concatenated over pages.
#[derive(Debug, Clone, Default)]
pub struct Catalog {
    tools: Vec<Value>,
    /// Index into `tools`, and whether that tool's `inputSchema` names an `x-mcp-header`
    /// anywhere (most tools do not, and their calls then skip the `Mcp-Param-*` work).
    by_name: HashMap<String, (usize, bool)>,
    /// Tools left out because a client would reject them (`checked`): name (or `#position`) and
    /// why.
    rejected: Vec<(String, String)>,
    /// Names the list held more than once (the first definition is kept), once each.
    duplicates: Vec<String>,
    /// Tools the upstream lists that are held back until the user approves their definitions
    /// (`definitions`); not in `tools`.
    held: Vec<definitions::HeldTool>,
    /// The real name (`<server>__<tool>`, unshortened) of each tool exposed under a shorter
    /// one, by exposed name; and the way back. Empty for a single upstream.
    real: Arc<RealNames>,
}

/// Exposed name ↔ real name for the tools whose names differ (`Catalog::with_real_names`).
#[derive(Debug, Default)]
struct RealNames {
    by_exposed: HashMap<String, String>,
    by_real: HashMap<String, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("{path}: {message}")]
    File { path: String, message: String },
    #[error("not a tools/list result: {0}")]
    Shape(String),
}

impl Catalog {
    /// Builds a catalog from tool objects. A tool without a string `name` is skipped; a repeated
    /// name keeps the first.
    pub fn new(tools: Vec<Value>) -> Catalog {
        let mut kept = Vec::with_capacity(tools.len());
        let mut by_name = HashMap::with_capacity(tools.len());
        let mut duplicates: Vec<String> = Vec::new();
        for t in tools {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                continue;
            };
            if by_name.contains_key(name) {
                if !duplicates.iter().any(|d| d == name) {
                    duplicates.push(name.to_string());
                }
                continue;
            }
            let headers = t.get("inputSchema").is_some_and(names_a_param_header);
            by_name.insert(name.to_string(), (kept.len(), headers));
            kept.push(t);
        }
        Catalog {
            tools: kept,
            by_name,
            rejected: Vec::new(),
            duplicates,
            held: Vec::new(),
            real: Arc::default(),
        }
    }

    /// This catalog knowing the real name of each tool exposed under another (exposed, real):
    /// the `<server>__<tool>` a shortened name stands for (`exposed::Naming`). Name rules (the
    /// policy, pins) match both.
    pub fn with_real_names(mut self, pairs: impl IntoIterator<Item = (String, String)>) -> Catalog {
        let mut real = RealNames::default();
        for (exposed, full) in pairs {
            if exposed != full {
                real.by_real.insert(full.clone(), exposed.clone());
                real.by_exposed.insert(exposed, full);
            }
        }
        self.real = Arc::new(real);
        self
    }

    /// The real name of the tool this catalog holds as `name`: the unshortened `<server>__<tool>`
    /// when mws shortened it, else `name`.
    pub fn real_name<'a>(&'a self, name: &'a str) -> &'a str {
        self.real.by_exposed.get(name).map_or(name, String::as_str)
    }

    /// The name this catalog holds a tool under, given its real (unshortened) name; `None` when
    /// `real` is no shortened tool's real name.
    pub fn by_real_name(&self, real: &str) -> Option<&str> {
        self.real.by_real.get(real).map(String::as_str)
    }

    /// The tools `keep` accepts, in order, with their real names.
    pub fn subset(&self, keep: impl Fn(&Value) -> bool) -> Catalog {
        let tools = self.tools.iter().filter(|t| keep(t)).cloned().collect();
        Catalog {
            real: self.real.clone(),
            ..Catalog::new(tools)
        }
    }

    /// Builds the catalog the proxy serves: as `new`, but a tool a client would reject
    /// (`check::unusable`) is left out and kept in `rejected` with the reason, so that listing,
    /// search and `call_tool` never offer it and one bad tool cannot make a client refuse them all.
    pub fn checked(tools: Vec<Value>) -> Catalog {
        let mut rejected = Vec::new();
        let mut good = Vec::with_capacity(tools.len());
        for (i, t) in tools.into_iter().enumerate() {
            match check::unusable(&t) {
                None => good.push(t),
                Some(why) => {
                    let name = match t.get("name").and_then(Value::as_str) {
                        Some(n) => format!("{n:?}"),
                        None => format!("#{}", i + 1),
                    };
                    rejected.push((name, why));
                }
            }
        }
        Catalog {
            rejected,
            ..Catalog::new(good)
        }
    }

    /// The tool objects, in order.
    pub fn into_tools(self) -> Vec<Value> {
        self.tools
    }

    /// This catalog passed through `checked`.
    pub fn into_checked(self) -> Catalog {
        Catalog::checked(self.tools)
    }

    /// The tools `checked` left out: the name as quoted JSON (or `#position` when it has none),
    /// and why a client would reject it.
    pub fn rejected(&self) -> &[(String, String)] {
        &self.rejected
    }

    /// This catalog knowing which tools its upstream lists but mws holds back.
    pub fn with_held(mut self, held: Vec<definitions::HeldTool>) -> Catalog {
        self.held = held;
        self
    }

    /// The tools held back until the user approves their definitions, in upstream order.
    pub fn held(&self) -> &[definitions::HeldTool] {
        &self.held
    }

    /// The held tool called `name` (with or without a client's `mcp__<serverName>__` prefix is the
    /// caller's business), if one is.
    pub fn held_tool(&self, name: &str) -> Option<&definitions::HeldTool> {
        self.held.iter().find(|h| h.name == name)
    }

    /// Names the list held more than once; the first definition of each is the one kept.
    pub fn duplicates(&self) -> &[String] {
        &self.duplicates
    }

    /// Accepts a tools/list result (`{"tools": [...]}`), a JSON-RPC response holding one, or a bare
    /// array of tools.
    pub fn from_value(v: Value) -> Result<Catalog, CatalogError> {
        match v {
            Value::Array(tools) => Ok(Catalog::new(tools)),
            Value::Object(mut m) => {
                if let Some(Value::Array(tools)) = m.remove("tools") {
                    return Ok(Catalog::new(tools));
                }
                if let Some(result) = m.remove("result") {
                    return Catalog::from_value(result);
                }
                Err(CatalogError::Shape("expected a \"tools\" array".into()))
            }
            _ => Err(CatalogError::Shape("expected an object or an array".into())),
        }
    }

    /// Reads a catalog file (see `from_value` for the accepted shapes).
    pub fn load_file(path: &Path) -> Result<Catalog, CatalogError> {
        let err = |message: String| CatalogError::File {
            path: path.display().to_string(),
            message,
        };
        let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| err(e.to_string()))?;
        Catalog::from_value(v).map_err(|e| err(e.to_string()))
    }

    pub fn tools(&self) -> &[Value] {
        &self.tools
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    pub fn get(&self, name: &str) -> Option<&Value> {
        self.by_name.get(name).map(|&(i, _)| &self.tools[i])
    }

    /// The tool's schema, if it is in the catalog and names an `x-mcp-header` (SEP-2243): the
    /// only tools whose calls carry or check `Mcp-Param-*` headers.
    pub fn with_param_headers(&self, name: &str) -> Option<&Value> {
        match self.by_name.get(name) {
            Some(&(i, true)) => Some(&self.tools[i]),
            _ => None,
        }
    }

    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Tool names in upstream order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
    }

    /// The catalog as a tools/list result.
    pub fn to_value(&self) -> Value {
        serde_json::json!({ "tools": self.tools })
    }
}

/// True when a schema has an `x-mcp-header` key at any depth.
fn names_a_param_header(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key("x-mcp-header") || m.values().any(names_a_param_header),
        Value::Array(a) => a.iter().any(names_a_param_header),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shapes_and_lookup() {
        let c = Catalog::from_value(json!({"tools": [{"name": "a", "x-vendor": 1}, {"name": "a"}, {"nope": 1}, {"name": "b"}]})).unwrap();
        assert_eq!(c.names().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(c.get("a").unwrap()["x-vendor"], 1);
        assert!(c.with_param_headers("a").is_none());
        let c = Catalog::from_value(
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [{"name": "z"}]}}),
        )
        .unwrap();
        assert!(c.contains("z"));
        assert!(Catalog::from_value(json!("no")).is_err());
    }

    #[test]
    fn tools_naming_a_param_header_at_any_depth() {
        let c = Catalog::new(vec![
            json!({"name": "flat", "inputSchema": {"properties": {"region": {"type": "string", "x-mcp-header": "Region"}}}}),
            json!({"name": "nested", "inputSchema": {"properties": {"where": {"properties": {"r": {"x-mcp-header": "R"}}}}}}),
            json!({"name": "plain", "inputSchema": {"properties": {"q": {"type": "string"}}}}),
            json!({"name": "bare"}),
        ]);
        assert!(c.with_param_headers("flat").is_some());
        assert!(c.with_param_headers("nested").is_some());
        assert!(c.with_param_headers("plain").is_none());
        assert!(c.with_param_headers("bare").is_none());
        assert!(c.with_param_headers("absent").is_none());
    }
}
