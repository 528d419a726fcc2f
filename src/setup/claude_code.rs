//! Claude Code's registrations: `~/.claude.json` (`mcpServers` = user scope,
//! `projects["<path>"].mcpServers` = local scope, `disabledMcpjsonServers`) and `.mcp.json`
//! (project scope). Pure parsing; must not read any other key of `~/.claude.json` (it is the
//! app's whole state file).

use std::path::{Path, PathBuf};

use super::entry::{self, Dialect, Syntax};
use super::{Client, Findings, Origin, Scope};

/// Claude Code's entries are the common shape; variables stay `${VAR}`, as mws writes them.
const DIALECT: Dialect = Dialect {
    http_url_keys: &[],
    env_colon_vars: false,
    bare_dollar_vars: false,
};

/// The key of a server map in both files.
const SERVERS: &str = "mcpServers";

/// `~/.claude.json`: user-scope servers, then every project's local-scope servers.
pub fn read_user_file(text: &str, file: &Path, out: &mut Findings) {
    let doc = match entry::parse_doc(text, Syntax::Json, Client::ClaudeCode, file) {
        Ok(doc) => doc,
        Err(e) => return out.errors.push(e),
    };
    if let Some(map) = doc.get(SERVERS) {
        let origin = Origin::new(Client::ClaudeCode, file, Scope::User);
        entry::read_map(map, &origin, DIALECT, SERVERS, out);
    }
    let Some(projects) = doc.get("projects").and_then(|p| p.as_object()) else {
        return;
    };
    for (path, project) in projects {
        if let Some(map) = project.get(SERVERS) {
            let mut origin = Origin::new(Client::ClaudeCode, file, Scope::Local);
            origin.project = Some(PathBuf::from(path));
            entry::read_map(map, &origin, DIALECT, SERVERS, out);
        }
    }
}

/// The `.mcp.json` servers the user switched off per project
/// (`projects["<path>"].disabledMcpjsonServers`), as (project, name). A malformed file lists none.
pub fn disabled_project_servers(text: &str) -> Vec<(PathBuf, String)> {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let Some(projects) = doc.get("projects").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (path, project) in projects {
        let names = project.get(DISABLED_MCPJSON).and_then(|d| d.as_array());
        for name in names.into_iter().flatten().filter_map(|n| n.as_str()) {
            out.push((PathBuf::from(path), name.to_string()));
        }
    }
    out
}

/// Where `~/.claude.json` lists a project's switched-off `.mcp.json` servers.
const DISABLED_MCPJSON: &str = "disabledMcpjsonServers";

/// A `.mcp.json`: project-scope servers of the directory it sits in.
pub fn read_mcp_json(text: &str, file: &Path, out: &mut Findings) {
    let doc = match entry::parse_doc(text, Syntax::Json, Client::ClaudeCode, file) {
        Ok(doc) => doc,
        Err(e) => return out.errors.push(e),
    };
    if let Some(map) = doc.get(SERVERS) {
        let mut origin = Origin::new(Client::ClaudeCode, file, Scope::Project);
        origin.project = file.parent().map(Path::to_path_buf);
        entry::read_map(map, &origin, DIALECT, SERVERS, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::{Flag, Transport};

    fn fixture(name: &str) -> String {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/client-configs")
            .join(name);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    #[test]
    fn user_and_local_scopes() {
        let mut out = Findings::default();
        read_user_file(
            &fixture("claude.json"),
            Path::new("/h/.claude.json"),
            &mut out,
        );
        let got: Vec<_> = out
            .found
            .iter()
            .map(|f| (f.origin.scope, f.name.as_str(), f.origin.project.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (Scope::User, "stdio-user", None),
                (Scope::User, "http-user", None),
                (Scope::User, "sse-user", None),
                (Scope::User, "loader", None),
                (
                    Scope::Local,
                    "http-local",
                    Some(PathBuf::from("/home/dev/src/proj"))
                ),
            ]
        );
        let Transport::Stdio {
            command, args, env, ..
        } = &out.found[0].transport
        else {
            panic!("stdio-user is stdio: {:?}", out.found[0]);
        };
        assert_eq!((command.as_str(), args.len()), ("npx", 2));
        assert_eq!(env["TOKEN"], "t");
        assert!(
            matches!(&out.found[1].transport, Transport::Http { headers, .. } if headers["Authorization"] == "Bearer u")
        );
        assert!(matches!(out.found[2].transport, Transport::Sse { .. }));
        assert_eq!(out.found[3].flags, [Flag::AlwaysLoad]);
        assert_eq!(out.skipped.len(), 1, "{:?}", out.skipped);
        assert_eq!(out.skipped[0].name, "no-transport");
        assert!(
            out.skipped[0].reason.contains("neither"),
            "{}",
            out.skipped[0].reason
        );
        assert!(out.errors.is_empty());
    }

    #[test]
    fn switched_off_project_servers() {
        let text = r#"{"projects": {"/p": {"disabledMcpjsonServers": ["time"]}, "/q": {}}}"#;
        assert_eq!(
            disabled_project_servers(text),
            [(PathBuf::from("/p"), "time".into())]
        );
        assert!(disabled_project_servers("{").is_empty());
    }

    #[test]
    fn project_scope_with_oauth() {
        let mut out = Findings::default();
        read_mcp_json(&fixture("mcp.json"), Path::new("/p/.mcp.json"), &mut out);
        assert_eq!(out.found.len(), 2);
        assert_eq!(out.found[0].origin.project, Some(PathBuf::from("/p")));
        assert_eq!(out.found[1].name, "hosted");
        assert_eq!(out.found[1].flags, [Flag::Oauth]);
    }

    #[test]
    fn malformed_file_is_named_with_line_and_column() {
        let mut out = Findings::default();
        read_mcp_json(
            "{\n  \"mcpServers\": {,}\n}",
            Path::new("/p/.mcp.json"),
            &mut out,
        );
        assert!(out.found.is_empty());
        let e = &out.errors[0];
        assert_eq!((e.line, e.column), (Some(2), Some(18)));
        assert!(
            e.to_string()
                .starts_with("/p/.mcp.json:2:18: not valid JSON"),
            "{e}"
        );
    }
}
