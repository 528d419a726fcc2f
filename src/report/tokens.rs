//! Token accounting: what a client is sent, in bytes and in tokens of a real tokenizer (tiktoken's
//! o200k_base or cl100k_base, embedded in the crate, nothing fetched). o200k_base is counted by
//! the compact counter of `results::count` (its counts are tiktoken's, in about 4 MB instead of
//! tiktoken-rs's ~46 MB); cl100k_base by tiktoken-rs. Pure: no I/O, no clock.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use serde_json::Value;
use tiktoken_rs::CoreBPE;

/// Which encoding counts tokens. o200k_base is the default: it is the encoding of current OpenAI
/// models. Claude's tokenizer is not public, so for Claude either is an estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TokenizerKind {
    #[default]
    O200k,
    Cl100k,
}

impl TokenizerKind {
    /// The encoding's own name, as printed in the report.
    pub fn encoding(self) -> &'static str {
        match self {
            TokenizerKind::O200k => "o200k_base",
            TokenizerKind::Cl100k => "cl100k_base",
        }
    }
}

impl FromStr for TokenizerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "o200k" | "o200k_base" => Ok(TokenizerKind::O200k),
            "cl100k" | "cl100k_base" => Ok(TokenizerKind::Cl100k),
            other => Err(format!(
                "unknown tokenizer {other:?}: expected o200k (default) or cl100k"
            )),
        }
    }
}

impl fmt::Display for TokenizerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.encoding())
    }
}

/// A loaded encoding. Each kind is built once per process (both counters are statics) and shared.
#[derive(Clone, Copy)]
pub struct Tokenizer {
    kind: TokenizerKind,
    /// tiktoken-rs's encoder for cl100k_base; `None` for o200k_base (`results::count::o200k`).
    cl100k: Option<&'static CoreBPE>,
}

impl Tokenizer {
    pub fn load(kind: TokenizerKind) -> Tokenizer {
        let cl100k = match kind {
            TokenizerKind::O200k => {
                crate::results::count::o200k();
                None
            }
            TokenizerKind::Cl100k => Some(tiktoken_rs::cl100k_base_singleton()),
        };
        Tokenizer { kind, cl100k }
    }

    pub fn kind(&self) -> TokenizerKind {
        self.kind
    }

    /// Tokens in `text`, special-token text counted as ordinary text (tool descriptions may
    /// contain `<|endoftext|>` literally; a client sends it as text).
    pub fn count(&self, text: &str) -> usize {
        match self.cl100k {
            Some(bpe) => bpe.encode_ordinary(text).len(),
            None => crate::results::count::o200k().count(text),
        }
    }
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tokenizer({})", self.kind)
    }
}

/// A size in the three units a user cares about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Size {
    pub tools: usize,
    pub bytes: usize,
    pub tokens: usize,
}

impl Size {
    /// `self - other`, floored at zero in each unit.
    pub fn minus(self, other: Size) -> Size {
        Size {
            tools: self.tools.saturating_sub(other.tools),
            bytes: self.bytes.saturating_sub(other.bytes),
            tokens: self.tokens.saturating_sub(other.tokens),
        }
    }
}

/// The wire text of a JSON value: compact, key order kept. Whitespace is not what a client pays
/// for, so every size in the report is of this form, whatever spacing the upstream used.
pub fn wire_text(v: &Value) -> String {
    serde_json::to_string(v).expect("a serde_json::Value always serializes")
}

/// The size of a `tools/list` result `{"tools": [...]}` holding `tools`.
pub fn list_size(tok: &Tokenizer, tools: &[Value]) -> Size {
    let text = wire_text(&serde_json::json!({ "tools": tools }));
    Size {
        tools: tools.len(),
        bytes: text.len(),
        tokens: tok.count(&text),
    }
}

/// The size of one tool object as sent.
pub fn tool_size(tok: &Tokenizer, tool: &Value) -> Size {
    let text = wire_text(tool);
    Size {
        tools: 1,
        bytes: text.len(),
        tokens: tok.count(&text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_parse_and_name_themselves() {
        for (input, want) in [
            ("o200k", Ok(TokenizerKind::O200k)),
            ("o200k_base", Ok(TokenizerKind::O200k)),
            ("cl100k", Ok(TokenizerKind::Cl100k)),
            ("cl100k_base", Ok(TokenizerKind::Cl100k)),
            (
                "bytes4",
                Err("unknown tokenizer \"bytes4\": expected o200k (default) or cl100k".to_string()),
            ),
        ] {
            assert_eq!(input.parse::<TokenizerKind>(), want, "{input}");
        }
        assert_eq!(TokenizerKind::default().to_string(), "o200k_base");
    }

    #[test]
    fn counts_compact_json_with_the_named_encoding() {
        let tools = vec![
            json!({"name": "echo", "description": "Echoes back the input", "inputSchema": {"type": "object"}}),
        ];
        let text = r#"{"tools":[{"name":"echo","description":"Echoes back the input","inputSchema":{"type":"object"}}]}"#;
        for kind in [TokenizerKind::O200k, TokenizerKind::Cl100k] {
            let tok = Tokenizer::load(kind);
            let size = list_size(&tok, &tools);
            assert_eq!(size.bytes, text.len());
            assert_eq!(size.tools, 1);
            assert!(
                size.tokens > 10 && size.tokens < size.bytes,
                "{kind}: {size:?}"
            );
        }
        // The two encodings really differ on the same text (they are not one tokenizer twice).
        let long = "x".repeat(3) + " 上海 getIssueComments_by-id ".repeat(20).as_str();
        assert_ne!(
            Tokenizer::load(TokenizerKind::O200k).count(&long),
            Tokenizer::load(TokenizerKind::Cl100k).count(&long)
        );
        // Special-token text is counted as text, not refused.
        assert!(Tokenizer::load(TokenizerKind::O200k).count("<|endoftext|>") > 1);
    }

    #[test]
    fn minus_floors_at_zero() {
        let a = Size {
            tools: 3,
            bytes: 10,
            tokens: 5,
        };
        let b = Size {
            tools: 1,
            bytes: 20,
            tokens: 2,
        };
        assert_eq!(
            a.minus(b),
            Size {
                tools: 2,
                bytes: 0,
                tokens: 3
            }
        );
    }
}
