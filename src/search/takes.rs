//! What a tool takes: the kinds of value (`entities::Kind`) its required parameters take, by
//! their names, their `format`, and the ends (`source`, `destination`) of a tool about files; and
//! the factor a tool's score gets when the request holds a value of a kind it takes, with its
//! part for `--explain`. Pure.

use serde::Serialize;
use serde_json::Value;

use super::entities::Kind;
use super::tokenize::for_each_word;

/// Most a tool's score is multiplied by when it takes a kind of value the request holds (a
/// required parameter of that kind): `1 + VALUE_BOOST`. Raising it lets what a tool takes
/// outweigh what its text says.
pub const VALUE_BOOST: f32 = 0.5;

/// The kinds of value `tool` takes, as a set of bits: those of its required parameters, by
/// their names and a `format` of `uri` or `email`.
pub fn takes(tool: &Value) -> u8 {
    let Some(schema) = tool.get("inputSchema") else {
        return 0;
    };
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return 0;
    };
    let required = schema.get("required").and_then(Value::as_array);
    let mut out = 0;
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        let Some(p) = props.get(name) else { continue };
        for_each_word(name, |w| {
            for k in Kind::ALL {
                if k.names().iter().any(|n| n.eq_ignore_ascii_case(w)) {
                    out |= k.bit();
                }
            }
        });
        let format = match p.get("format").and_then(Value::as_str) {
            Some("uri" | "url" | "iri") => Kind::Url.bit(),
            Some("email") => Kind::Email.bit(),
            _ => 0,
        };
        out |= format;
        // `move_file(source, destination)`: the ends of a tool about files are paths, unless
        // their `format` says what they are (`email_file(to: email)` sends to an address).
        if format == 0 && ENDS.iter().any(|e| e.eq_ignore_ascii_case(name)) && about_files(tool) {
            out |= Kind::Path.bit();
        }
    }
    out
}

/// Parameter names for where something comes from or goes to.
const ENDS: &[&str] = &[
    "source",
    "destination",
    "src",
    "dest",
    "from",
    "to",
    "target",
];

/// Whether a tool's name holds a word for files (`move_file`, `copyDirectory`).
fn about_files(tool: &Value) -> bool {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let mut found = false;
    for_each_word(name, |w| {
        found |= Kind::Path
            .names()
            .iter()
            .chain(&["files", "folder"])
            .any(|n| n.eq_ignore_ascii_case(w));
    });
    found
}

/// The factor for a tool that takes `takes` (`takes`) under a query holding `kinds` (`kinds`).
pub fn factor(takes: u8, kinds: u8) -> f32 {
    if takes & kinds != 0 {
        1.0 + VALUE_BOOST
    } else {
        1.0
    }
}

/// What a tool takes of the values in the request, for `--explain`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ValuePart {
    /// The factor the tool's score was multiplied by.
    pub factor: f32,
    /// The kinds of value the request holds and the tool takes ("a URL").
    pub kinds: Vec<&'static str>,
}

/// `factor` with the kinds it came from; `None` when the tool takes none of them.
pub fn part(takes: u8, kinds: u8) -> Option<ValuePart> {
    (takes & kinds != 0).then(|| ValuePart {
        factor: factor(takes, kinds),
        kinds: Kind::ALL
            .into_iter()
            .filter(|k| takes & kinds & k.bit() != 0)
            .map(Kind::label)
            .collect(),
    })
}
