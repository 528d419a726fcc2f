//! Codex's registrations: the `[mcp_servers.<name>]` tables of `$CODEX_HOME/config.toml`. Codex
//! names secrets by variable (`bearer_token_env_var`, `env_http_headers`); they become mws's
//! `${VAR}` references, never values. Also lists the projects the user file trusts (a project's
//! `.codex/config.toml` counts only then). Pure parsing; must not read other tables.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::entry::{self, Dialect, opt_str, string_list, string_map};
use super::{Client, FileError, Findings, Flag, Found, Origin, Scope, Skipped, Transport};

/// The table holding the servers.
const SERVERS: &str = "mcp_servers";

/// `config.toml`: every `[mcp_servers.<name>]` table, in file order.
pub fn read_config(text: &str, file: &Path, scope: Scope, out: &mut Findings) {
    let doc: toml::Table = match toml::from_str(text) {
        Ok(doc) => doc,
        Err(e) => {
            let (line, column) = match e.span() {
                Some(span) => {
                    let (l, c) = super::line_column(text, span.start);
                    (Some(l), Some(c))
                }
                None => (None, None),
            };
            return out.errors.push(FileError {
                client: Client::Codex,
                file: file.to_path_buf(),
                line,
                column,
                message: format!("not valid TOML: {}", e.message()),
            });
        }
    };
    let Some(servers) = doc.get(SERVERS) else {
        return;
    };
    let origin = Origin::new(Client::Codex, file, scope);
    let Some(servers) = servers.as_table() else {
        return out.errors.push(FileError {
            client: Client::Codex,
            file: file.to_path_buf(),
            line: None,
            column: None,
            message: format!("`{SERVERS}` is not a table of servers"),
        });
    };
    for (name, v) in servers {
        // TOML values map onto JSON ones (dates become strings), so one set of helpers reads both.
        let v = serde_json::to_value(v).unwrap_or(Value::Null);
        match parse_entry(&v) {
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

/// The projects the user file trusts (`[projects."<path>"] trust_level = "trusted"`); Codex reads
/// a project's own `.codex/config.toml` only for these. A malformed file trusts none.
pub fn trusted_projects(text: &str) -> Vec<PathBuf> {
    let Ok(doc) = toml::from_str::<toml::Table>(text) else {
        return Vec::new();
    };
    let Some(projects) = doc.get("projects").and_then(|p| p.as_table()) else {
        return Vec::new();
    };
    projects
        .iter()
        .filter(|(_, v)| v.get("trust_level").and_then(|t| t.as_str()) == Some(TRUSTED))
        .map(|(path, _)| PathBuf::from(path))
        .collect()
}

/// The `trust_level` that lets Codex read a project's own config.
const TRUSTED: &str = "trusted";

/// One `[mcp_servers.<name>]` table: `command` (stdio) or `url` (Streamable HTTP; Codex has no SSE).
fn parse_entry(v: &Value) -> Result<(Transport, Vec<Flag>), String> {
    let Some(o) = v.as_object() else {
        return Err(format!("the entry is {}, not a table", entry::kind(v)));
    };
    let mut flags = Vec::new();
    let transport = match (opt_str(o, "command")?, opt_str(o, "url")?) {
        (Some(_), Some(_)) => return Err("has both `command` and `url`".into()),
        (None, None) => return Err("has neither `command` nor `url`".into()),
        (Some(command), None) => {
            if o.get("env_vars").is_some_and(|v| !v.is_null()) {
                flags.push(Flag::ForwardsEnv);
            }
            Transport::Stdio {
                command: command.to_string(),
                args: string_list(o, "args")?,
                env: string_map(o, "env")?,
                cwd: opt_str(o, "cwd")?.map(PathBuf::from),
            }
        }
        (None, Some(url)) => Transport::Http {
            url: url.to_string(),
            headers: headers(o)?,
        },
    };
    if o.get("enabled") == Some(&Value::Bool(false)) {
        flags.push(Flag::Disabled);
    }
    if o.contains_key("oauth") || o.contains_key("oauth_resource") || o.contains_key("scopes") {
        flags.push(Flag::Oauth);
    }
    if o.contains_key("http_headers_helper") {
        flags.push(Flag::HeadersHelper);
    }
    flags.extend(super::tool_policy::codex_flags(o)?);
    Ok((
        entry::finish(transport, Dialect::default(), &mut flags),
        flags,
    ))
}

/// `http_headers` (literal), `env_http_headers` (header → variable) and `bearer_token_env_var`,
/// as one header map with variables written `${VAR}`.
fn headers(o: &Map<String, Value>) -> Result<BTreeMap<String, String>, String> {
    let mut h = string_map(o, "http_headers")?;
    for (name, var) in string_map(o, "env_http_headers")? {
        h.insert(name, format!("${{{var}}}"));
    }
    if let Some(var) = opt_str(o, "bearer_token_env_var")? {
        h.insert("Authorization".into(), format!("Bearer ${{{var}}}"));
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Findings {
        let mut out = Findings::default();
        read_config(text, Path::new("/c/config.toml"), Scope::User, &mut out);
        out
    }

    #[test]
    fn what_codex_mcp_add_writes() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/client-configs/codex.toml");
        let out = read(&std::fs::read_to_string(p).unwrap());
        let names: Vec<_> = out.found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            ["stdio1", "http1", "http2", "bare", "bad.name", "off"]
        );
        let Transport::Stdio {
            command, args, env, ..
        } = &out.found[0].transport
        else {
            panic!("stdio1: {:?}", out.found[0]);
        };
        assert_eq!(command, "node");
        assert_eq!(args, &["./server.js", "--flag", "arg1"]);
        assert_eq!(env["OTHER"], "a b");
        let Transport::Http { url, headers } = &out.found[1].transport else {
            panic!("http1: {:?}", out.found[1]);
        };
        assert_eq!(url, "https://example.com/mcp");
        assert_eq!(headers["Authorization"], "Bearer ${MY_TOKEN}");
        assert_eq!(headers["X-Team"], "${TEAM_VAR}");
        assert_eq!(headers["X-Fixed"], "v");
        assert_eq!(out.found[5].flags, [Flag::Disabled]);
        assert_eq!(out.skipped.len(), 1);
        assert_eq!(out.skipped[0].name, "neither");
        assert!(out.errors.is_empty());
    }

    #[test]
    fn malformed_toml_is_named_with_line_and_column() {
        let out = read("model = \"x\"\n[mcp_servers.a]\ncommand = \n");
        let e = &out.errors[0];
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.column.is_some(), "{e}");
        assert!(e.to_string().starts_with("/c/config.toml:3:"), "{e}");
    }

    #[test]
    fn trusted_projects_are_listed() {
        let text = "[projects.\"/a\"]\ntrust_level = \"trusted\"\n[projects.\"/b\"]\ntrust_level = \"untrusted\"\n";
        assert_eq!(trusted_projects(text), [PathBuf::from("/a")]);
        assert!(trusted_projects("[projects").is_empty());
    }

    #[test]
    fn no_servers_table_is_fine() {
        let out = read("model = \"x\"\n");
        assert!(out.found.is_empty() && out.errors.is_empty() && out.skipped.is_empty());
    }
}
