//! The JSON side the readers share: parse a document (strict JSON or JSONC) into a value or a
//! `FileError` with line and column, and turn one `mcpServers`-style entry into a `Transport` and
//! flags, or a reason it was skipped. Pure: no file is opened here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{Client, FileError, Findings, Flag, Found, Origin, Scope, Skipped, Transport};
use crate::config::jsonc;

/// How a client's file is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// Strict JSON (Claude Code refuses comments in `.mcp.json`).
    Json,
    /// JSON with comments and trailing commas (VS Code, Cursor, Gemini CLI).
    Jsonc,
}

/// Parses `text`, or names the file, line and column where it is malformed.
pub fn parse_doc(
    text: &str,
    syntax: Syntax,
    client: Client,
    file: &std::path::Path,
) -> Result<Value, FileError> {
    let owned;
    let text = match syntax {
        Syntax::Json => text,
        Syntax::Jsonc => {
            owned = jsonc::strip(text);
            &owned
        }
    };
    serde_json::from_str(text).map_err(|e| FileError {
        client,
        file: file.to_path_buf(),
        line: Some(e.line()),
        // serde_json counts an error at the start of a line as column 0.
        column: Some(e.column().max(1)),
        message: format!("not valid JSON: {}", strip_position(&e.to_string())),
    })
}

/// serde_json appends " at line L column C"; the position is printed separately.
fn strip_position(msg: &str) -> &str {
    msg.find(" at line ").map_or(msg, |i| &msg[..i])
}

/// How a client's entries differ from the common `mcpServers` shape.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dialect {
    /// Keys that hold a Streamable HTTP URL besides `url` (Gemini CLI's `httpUrl`).
    pub http_url_keys: &'static [&'static str],
    /// The client writes `${env:NAME}` (Cursor, VS Code): rewritten to mws's `${NAME}`.
    pub env_colon_vars: bool,
    /// The client also expands `$NAME` without braces (Gemini CLI): rewritten to `${NAME}`.
    pub bare_dollar_vars: bool,
}

/// One JSON-with-comments file whose `key` holds a server map (Cursor's and VS Code's `mcp.json`,
/// Gemini CLI's `settings.json`); a project file's servers belong to the folder above its
/// dot-folder (`<project>/.cursor/mcp.json`).
pub fn read_project_file(
    text: &str,
    file: &Path,
    scope: Scope,
    (client, key, dialect): (Client, &str, Dialect),
    out: &mut Findings,
) {
    let doc = match parse_doc(text, Syntax::Jsonc, client, file) {
        Ok(doc) => doc,
        Err(e) => return out.errors.push(e),
    };
    if let Some(map) = doc.get(key) {
        let mut origin = Origin::new(client, file, scope);
        if scope == Scope::Project {
            origin.project = file.parent().and_then(Path::parent).map(Path::to_path_buf);
        }
        read_map(map, &origin, dialect, key, out);
    }
}

/// Reads every entry of a server map (`mcpServers`, VS Code's `servers`) into `out`.
pub fn read_map(map: &Value, origin: &Origin, dialect: Dialect, key: &str, out: &mut Findings) {
    let Some(map) = map.as_object() else {
        out.errors.push(FileError {
            client: origin.client,
            file: origin.file.clone(),
            line: None,
            column: None,
            message: format!("`{key}` is {}, not an object of servers", kind(map)),
        });
        return;
    };
    for (name, v) in map {
        match parse_entry(v, dialect) {
            Ok((transport, flags)) => out.found.push(Found {
                origin: origin.clone(),
                name: name.clone(),
                transport,
                flags,
            }),
            Err(reason) => out.skipped.push(Skipped {
                origin: origin.clone(),
                name: name.clone(),
                reason,
            }),
        }
    }
}

/// One entry: `{command, args, env, cwd}` or `{url, headers}` with an optional `type`.
pub fn parse_entry(v: &Value, dialect: Dialect) -> Result<(Transport, Vec<Flag>), String> {
    let Some(o) = v.as_object() else {
        return Err(format!("the entry is {}, not an object", kind(v)));
    };
    let ty = opt_str(o, "type")?;
    let command = opt_str(o, "command")?;
    let mut url = opt_str(o, "url")?;
    let mut http_url = false;
    for k in dialect.http_url_keys {
        if let Some(u) = opt_str(o, k)? {
            url.get_or_insert(u);
            http_url = true;
        }
    }
    let transport = match (command, url) {
        (Some(_), Some(_)) => return Err("has both `command` and `url`".into()),
        (None, None) => return Err("has neither `command` nor `url`".into()),
        (Some(command), None) => {
            if let Some(t) = ty.filter(|t| *t != "stdio") {
                return Err(format!("has `command` but `type` is `{t}`"));
            }
            Transport::Stdio {
                command: command.to_string(),
                args: string_list(o, "args")?,
                env: string_map(o, "env")?,
                cwd: opt_str(o, "cwd")?.map(PathBuf::from),
            }
        }
        (None, Some(url)) => {
            let url = url.to_string();
            let headers = string_map(o, "headers")?;
            match ty {
                _ if http_url => Transport::Http { url, headers },
                None | Some("http" | "streamable-http" | "streamableHttp") => {
                    Transport::Http { url, headers }
                }
                Some("sse") => Transport::Sse { url, headers },
                Some("ws") => Transport::Ws { url, headers },
                Some(t) => return Err(format!("unknown transport type `{t}`")),
            }
        }
    };
    let mut flags = entry_flags(o);
    Ok((finish(transport, dialect, &mut flags), flags))
}

/// Flags read from the keys every JSON client may use.
fn entry_flags(o: &Map<String, Value>) -> Vec<Flag> {
    let set = |k: &str| {
        o.get(k)
            .is_some_and(|v| !v.is_null() && *v != Value::Bool(false))
    };
    let mut flags = Vec::new();
    if set("oauth") || set("auth") || set("authProviderType") {
        flags.push(Flag::Oauth);
    }
    if set("disabled") || o.get("enabled") == Some(&Value::Bool(false)) {
        flags.push(Flag::Disabled);
    }
    if set("alwaysLoad") {
        flags.push(Flag::AlwaysLoad);
    }
    if set("headersHelper") {
        flags.push(Flag::HeadersHelper);
    }
    if set("envFile") {
        flags.push(Flag::EnvFile);
    }
    flags
}

/// Rewrites client variables into mws's form and notes `${input:id}` references.
pub fn finish(mut t: Transport, dialect: Dialect, flags: &mut Vec<Flag>) -> Transport {
    let mut rewritten = false;
    let mut inputs = Vec::new();
    let mut client_vars = Vec::new();
    let mut visit = |s: &mut String| {
        if dialect.env_colon_vars {
            if s.contains(USER_HOME) {
                *s = s.replace(USER_HOME, "${HOME}");
                rewritten = true;
            }
            for var in EDITOR_VARS {
                if s.contains(&format!("${{{var}}}")) && !client_vars.contains(&var) {
                    client_vars.push(var);
                }
            }
        }
        if dialect.env_colon_vars && s.contains(ENV_COLON) {
            *s = s.replace(ENV_COLON, "${");
            rewritten = true;
        }
        if dialect.bare_dollar_vars
            && let Some(braced) = brace_bare_vars(s)
        {
            *s = braced;
            rewritten = true;
        }
        let mut rest = s.as_str();
        while let Some(i) = rest.find(INPUT_VAR) {
            rest = &rest[i + INPUT_VAR.len()..];
            let id = rest.split('}').next().unwrap_or_default().to_string();
            if !inputs.contains(&id) {
                inputs.push(id);
            }
        }
    };
    match &mut t {
        Transport::Stdio {
            command, args, env, ..
        } => {
            visit(command);
            args.iter_mut().for_each(&mut visit);
            env.values_mut().for_each(&mut visit);
        }
        Transport::Http { url, headers }
        | Transport::Sse { url, headers }
        | Transport::Ws { url, headers } => {
            visit(url);
            headers.values_mut().for_each(&mut visit);
        }
    }
    if rewritten {
        flags.push(Flag::VariablesRewritten);
    }
    flags.extend(inputs.into_iter().map(Flag::Input));
    flags.extend(
        client_vars
            .into_iter()
            .map(|v| Flag::ClientVariable(v.to_string())),
    );
    t
}

/// Cursor's and VS Code's home variable, which is `${HOME}` for mws.
const USER_HOME: &str = "${userHome}";
/// Cursor's and VS Code's editor variables: mws has no value for them (it runs in no workspace).
const EDITOR_VARS: [&str; 5] = [
    "workspaceFolder",
    "workspaceFolderBasename",
    "fileWorkspaceFolder",
    "pathSeparator",
    "cwd",
];

/// `$NAME` → `${NAME}` everywhere in `s`; `None` when there is none.
fn brace_bare_vars(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut changed = false;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let starts_name = |c: char| c.is_ascii_alphabetic() || c == '_';
        if c == '$' && chars.peek().is_some_and(|&(_, n)| starts_name(n)) {
            let start = i + 1;
            let mut end = start;
            while let Some(&(j, n)) = chars.peek() {
                if !(n.is_ascii_alphanumeric() || n == '_') {
                    break;
                }
                end = j + n.len_utf8();
                chars.next();
            }
            out += &format!("${{{}}}", &s[start..end]);
            changed = true;
        } else {
            out.push(c);
        }
    }
    changed.then_some(out)
}

/// Cursor's and VS Code's environment variable syntax, `${env:NAME}`.
const ENV_COLON: &str = "${env:";
/// VS Code's prompted input syntax, `${input:id}`.
const INPUT_VAR: &str = "${input:";

/// A string field, absent or null as `None`; any other type is a reason to skip the entry.
pub fn opt_str<'a>(o: &'a Map<String, Value>, key: &str) -> Result<Option<&'a str>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(v) => Err(format!("`{key}` is {}, not a string", kind(v))),
    }
}

/// An array of strings (absent = empty).
pub fn string_list(o: &Map<String, Value>, key: &str) -> Result<Vec<String>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::String(s) => Ok(s.clone()),
                v => Err(format!("`{key}` holds {}, not only strings", kind(v))),
            })
            .collect(),
        Some(v) => Err(format!("`{key}` is {}, not an array", kind(v))),
    }
}

/// An object of strings (absent = empty).
pub fn string_map(o: &Map<String, Value>, key: &str) -> Result<BTreeMap<String, String>, String> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                v => Err(format!("`{key}.{k}` is {}, not a string", kind(v))),
            })
            .collect(),
        Some(v) => Err(format!("`{key}` is {}, not an object", kind(v))),
    }
}

pub use crate::mcp::check::kind;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editor_variables_are_named_and_user_home_is_home() {
        let cursor = Dialect {
            env_colon_vars: true,
            ..Dialect::default()
        };
        let v = serde_json::json!({"command": "${userHome}/bin/srv",
            "args": ["${workspaceFolder}/a", "${env:TOKEN}"]});
        let (t, flags) = parse_entry(&v, cursor).unwrap();
        let Transport::Stdio { command, args, .. } = t else {
            panic!("{t:?}");
        };
        assert_eq!(command, "${HOME}/bin/srv");
        assert_eq!(args, ["${workspaceFolder}/a", "${TOKEN}"]);
        assert_eq!(
            flags,
            [
                Flag::VariablesRewritten,
                Flag::ClientVariable("workspaceFolder".into())
            ]
        );
    }

    #[test]
    fn bare_variables_get_braces() {
        let cases = [
            ("$HOME/x", Some("${HOME}/x")),
            ("a $B_1-c ${D}", Some("a ${B_1}-c ${D}")),
            ("${D} and $ 5 and $1", None),
            ("plain", None),
        ];
        for (input, want) in cases {
            assert_eq!(brace_bare_vars(input).as_deref(), want, "{input}");
        }
    }
}
