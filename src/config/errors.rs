//! Turns serde's errors on a config file into messages for people: the field path, what was
//! expected in plain words, a did-you-mean for unknown names. Must not read files.

use serde_json::error::Category;

/// Most edit distance (relative to the longer name) for a did-you-mean suggestion. Raising it
/// suggests more distant names, which turns helpful hints into noise.
const SUGGEST_MAX_RATIO: f64 = 0.4;

/// A config problem: where it is (`line`/`column` when known, 1-based) and what it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// Describes a serde_json error met while reading a config. `path` is the field path serde was
/// in (`promote.minSessions`, `transcripts[0].type`); `.` or empty means the top level.
pub fn describe(path: &str, err: &serde_json::Error) -> Problem {
    let raw = err.to_string();
    let suffix = format!(" at line {} column {}", err.line(), err.column());
    let text = raw.strip_suffix(&suffix).unwrap_or(&raw);
    let message = match err.classify() {
        Category::Syntax | Category::Eof => format!("invalid JSON: {text}"),
        Category::Io => text.to_string(),
        Category::Data => data_message(path, text),
    };
    Problem {
        line: err.line(),
        // serde_json says column 0 before the first character of a line; editors count from 1.
        column: if err.line() > 0 {
            err.column().max(1)
        } else {
            0
        },
        message,
    }
}

fn data_message(path: &str, text: &str) -> String {
    if let Some((name, expected)) = unknown(text, "unknown field `") {
        // serde_path_to_error already ends the path with the unknown key.
        let field = if path.ends_with(name.as_str()) {
            path.to_string()
        } else {
            join(path, &name)
        };
        return match suggest(&name, &expected) {
            Some(s) => format!("`{field}`: unknown field, did you mean `{s}`?"),
            None => format!(
                "`{field}`: unknown field, expected one of {}",
                list(&expected)
            ),
        };
    }
    if let Some((name, expected)) = unknown(text, "unknown variant `") {
        return match suggest(&name, &expected) {
            Some(s) => format!("`{path}`: unknown value \"{name}\", did you mean \"{s}\"?"),
            None => format!(
                "`{path}`: unknown value \"{name}\", expected one of {}",
                list(&expected)
            ),
        };
    }
    if let Some(rest) = text.strip_prefix("missing field `") {
        let name = rest.split('`').next().unwrap_or(rest);
        return format!("`{}`: missing field", join(path, name));
    }
    if let Some(rest) = text
        .strip_prefix("invalid type: ")
        .or_else(|| text.strip_prefix("invalid value: "))
        && let Some((found, expected)) = rest.split_once(", expected ")
    {
        let found = match found {
            "map" => "an object",
            "sequence" => "an array",
            f => f,
        };
        if path.is_empty() || path == "." {
            return format!("the config must be a JSON object, found {found}");
        }
        return format!("`{path}`: expected {}, found {found}", plain(expected));
    }
    if path.is_empty() || path == "." {
        text.to_string()
    } else {
        format!("`{path}`: {text}")
    }
}

/// Splits serde's "unknown field `x`, expected one of `a`, `b`" into `x` and `[a, b]`.
fn unknown(text: &str, prefix: &str) -> Option<(String, Vec<String>)> {
    let rest = text.strip_prefix(prefix)?;
    let (name, tail) = rest.split_once('`')?;
    let expected = tail
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((name.to_string(), expected))
}

/// The closest expected name, if it is close enough to be what the user meant.
pub fn suggest(name: &str, expected: &[String]) -> Option<String> {
    let lower = name.to_lowercase();
    if lower.len() >= 3
        && let Some(e) = expected
            .iter()
            .find(|e| e.to_lowercase().starts_with(&lower))
    {
        return Some(e.clone());
    }
    expected
        .iter()
        .map(|e| {
            let d = strsim::levenshtein(&lower, &e.to_lowercase());
            (d, e)
        })
        .filter(|(d, e)| {
            let longest = name.chars().count().max(e.chars().count()).max(1);
            (*d as f64) / (longest as f64) <= SUGGEST_MAX_RATIO
        })
        .min_by_key(|(d, _)| *d)
        .map(|(_, e)| e.clone())
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() || path == "." {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

fn list(names: &[String]) -> String {
    if names.is_empty() {
        return "nothing (this object takes no fields)".into();
    }
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// serde's names for what it wanted, in the words of a JSON file.
fn plain(expected: &str) -> String {
    match expected {
        "u16" => "a whole number from 0 to 65535".into(),
        "u32" => "a whole number from 0 to 4294967295".into(),
        "u64" => "a whole number from 0 to 18446744073709551615".into(),
        "a sequence" => "an array".into(),
        "a map" => "an object".into(),
        "a boolean" | "a string" => expected.into(),
        e if e.starts_with("struct ") => "an object".into(),
        e => e.into(),
    }
}
