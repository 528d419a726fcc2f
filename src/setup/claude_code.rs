//! Claude Code's registrations: `~/.claude.json` (`mcpServers` = user scope,
//! `projects["<path>"].mcpServers` = local scope) and `.mcp.json` (project scope), and what Claude
//! Code decided about a project's `.mcp.json` servers (folder trust, enabled and disabled
//! servers). Pure parsing; must not read any other key of `~/.claude.json` (it is the app's whole
//! state file).

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

/// What Claude Code decided about a project's `.mcp.json` servers: the folder's trust and the
/// per-server choices, from `~/.claude.json` `projects["<dir>"]` and that folder's
/// `.claude/settings.local.json`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choices {
    /// `hasTrustDialogAccepted`: without it Claude Code starts none of the folder's servers.
    pub trusted: bool,
    /// `enableAllProjectMcpServers`.
    pub enable_all: bool,
    /// `enabledMcpjsonServers`.
    pub enabled: Vec<String>,
    /// `disabledMcpjsonServers`.
    pub disabled: Vec<String>,
}

impl Choices {
    /// Adds what one object (a `projects` entry, a `settings.local.json`) says.
    fn add(&mut self, o: &serde_json::Value) {
        let names = |k: &str| {
            o.get(k)
                .and_then(|d| d.as_array())
                .into_iter()
                .flatten()
                .filter_map(|n| n.as_str().map(str::to_string))
                .collect::<Vec<_>>()
        };
        self.trusted |= o.get(TRUST) == Some(&serde_json::Value::Bool(true));
        self.enable_all |= o.get(ENABLE_ALL) == Some(&serde_json::Value::Bool(true));
        self.enabled.extend(names(ENABLED_MCPJSON));
        self.disabled.extend(names(DISABLED_MCPJSON));
    }
}

/// Every project's choices in `~/.claude.json`, by project directory. A malformed file has none.
pub fn project_choices(text: &str) -> Vec<(PathBuf, Choices)> {
    let Ok(doc) = serde_json::from_str::<serde_json::Value>(text) else {
        return Vec::new();
    };
    let Some(projects) = doc.get("projects").and_then(|p| p.as_object()) else {
        return Vec::new();
    };
    projects
        .iter()
        .map(|(path, project)| {
            let mut c = Choices::default();
            c.add(project);
            (PathBuf::from(path), c)
        })
        .collect()
}

/// Adds a project's `.claude/settings.local.json` (the approvals Claude Code writes today) to its
/// choices; a malformed file adds nothing.
pub fn add_local_settings(choices: &mut Choices, text: &str) {
    if let Ok(doc) = serde_json::from_str::<serde_json::Value>(&crate::config::jsonc::strip(text)) {
        choices.add(&doc);
    }
}

/// Where a project keeps the approvals Claude Code writes, under the project directory.
pub const LOCAL_SETTINGS: &str = ".claude/settings.local.json";

/// Whether Claude Code runs the `.mcp.json` server `name` of directory `dir`: it does for a
/// session in `dir` or below it (the file is read from every parent directory) whose folder is
/// trusted and which enables the server. `projects` holds each project directory's choices.
pub fn verdict(projects: &[(PathBuf, Choices)], dir: &Path, name: &str) -> Verdict {
    let sessions: Vec<&(PathBuf, Choices)> = projects
        .iter()
        .filter(|(p, _)| p.starts_with(dir))
        .collect();
    if sessions
        .iter()
        .any(|(_, c)| c.disabled.iter().any(|n| n == name))
    {
        return Verdict::Disabled;
    }
    // A folder is trusted when it or a parent folder was.
    let trusted = |p: &Path| projects.iter().any(|(q, c)| c.trusted && p.starts_with(q));
    let mut any_trusted = false;
    for (p, c) in &sessions {
        if !trusted(p) {
            continue;
        }
        any_trusted = true;
        if c.enable_all || c.enabled.iter().any(|n| n == name) {
            return Verdict::Approved;
        }
    }
    Verdict::NotApproved(if any_trusted {
        format!("`{name}` is not in `{ENABLED_MCPJSON}` and `{ENABLE_ALL}` is not set")
    } else {
        format!("the folder's trust dialog was never accepted (`{TRUST}`)")
    })
}

/// What Claude Code does with one `.mcp.json` server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Approved,
    /// The user switched it off.
    Disabled,
    /// Claude Code would not start it, and why.
    NotApproved(String),
}

/// The keys of a project's choices.
const TRUST: &str = "hasTrustDialogAccepted";
const ENABLE_ALL: &str = "enableAllProjectMcpServers";
const ENABLED_MCPJSON: &str = "enabledMcpjsonServers";
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
    fn a_project_server_runs_only_when_trusted_and_enabled() {
        let text = r#"{"projects": {
            "/p": {"hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["on"],
                   "disabledMcpjsonServers": ["off"]},
            "/p/sub": {"enableAllProjectMcpServers": true},
            "/q": {"enabledMcpjsonServers": ["on"]},
            "/r": {"hasTrustDialogAccepted": true}
        }}"#;
        let projects = project_choices(text);
        let not = |why: &str| Verdict::NotApproved(why.into());
        let cases = [
            ("/p", "on", Verdict::Approved),
            ("/p", "off", Verdict::Disabled),
            // A session in /p/sub reads /p/.mcp.json too, and /p's trust covers it.
            ("/p", "any", Verdict::Approved),
            (
                "/q",
                "on",
                not("the folder's trust dialog was never accepted (`hasTrustDialogAccepted`)"),
            ),
            (
                "/r",
                "x",
                not(
                    "`x` is not in `enabledMcpjsonServers` and `enableAllProjectMcpServers` is not set",
                ),
            ),
            (
                "/elsewhere",
                "on",
                not("the folder's trust dialog was never accepted (`hasTrustDialogAccepted`)"),
            ),
        ];
        for (dir, name, want) in cases {
            assert_eq!(
                verdict(&projects, Path::new(dir), name),
                want,
                "{dir} {name}"
            );
        }
        assert!(project_choices("{").is_empty());
    }

    #[test]
    fn local_settings_add_approvals() {
        let mut projects =
            project_choices(r#"{"projects": {"/r": {"hasTrustDialogAccepted": true}}}"#);
        add_local_settings(&mut projects[0].1, r#"{"enabledMcpjsonServers": ["x"]}"#);
        assert_eq!(verdict(&projects, Path::new("/r"), "x"), Verdict::Approved);
        add_local_settings(&mut projects[0].1, "{");
        assert_eq!(projects[0].1.enabled, ["x"]);
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
