//! Where each client keeps its registrations, from a HOME, a working directory and a few
//! variables, and the one pass that reads those files and hands their text to the readers. A
//! missing file is a client not installed, not an error. Must only read, never write.

use std::path::{Path, PathBuf};

use super::{Client, FileError, FileStatus, Findings, Scope};

/// What decides where the files are: given, never read from the process here.
#[derive(Debug, Clone, Default)]
pub struct Env {
    pub home: PathBuf,
    /// Where `mws setup import` runs: project files are looked for here and upward.
    pub cwd: PathBuf,
    /// `$CODEX_HOME` (default `~/.codex`).
    pub codex_home: Option<PathBuf>,
    /// `$CLAUDE_CONFIG_DIR` (default: `~/.claude.json` in HOME).
    pub claude_config_dir: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME` (default `~/.config`).
    pub xdg_config_home: Option<PathBuf>,
}

impl Env {
    /// The variables above, from the process environment.
    pub fn from_process(home: PathBuf, cwd: PathBuf) -> Env {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        Env {
            home,
            cwd,
            codex_home: var("CODEX_HOME"),
            claude_config_dir: var("CLAUDE_CONFIG_DIR"),
            xdg_config_home: var("XDG_CONFIG_HOME"),
        }
    }

    fn config_home(&self) -> PathBuf {
        self.xdg_config_home
            .clone()
            .unwrap_or_else(|| self.home.join(".config"))
    }
}

/// Which reader a file goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ClaudeUser,
    ClaudeMcpJson,
    Codex(Scope),
    ClaudeDesktop,
    Cursor(Scope),
    VsCode(Scope),
    Gemini(Scope),
}

impl Kind {
    fn client(self) -> Client {
        match self {
            Kind::ClaudeUser | Kind::ClaudeMcpJson => Client::ClaudeCode,
            Kind::Codex(_) => Client::Codex,
            Kind::ClaudeDesktop => Client::ClaudeDesktop,
            Kind::Cursor(_) => Client::Cursor,
            Kind::VsCode(_) => Client::VsCode,
            Kind::Gemini(_) => Client::GeminiCli,
        }
    }
}

/// VS Code's product directories under the config dir (stable and Insiders, plus macOS's).
const VS_CODE_DIRS: [&str; 2] = ["Code", "Code - Insiders"];

/// Every file that may hold registrations, in the order they are reported. Reads directories only
/// to list VS Code's profiles.
pub fn locate(env: &Env) -> Vec<(Kind, PathBuf)> {
    let home = &env.home;
    let mut files = vec![(
        Kind::ClaudeUser,
        match &env.claude_config_dir {
            Some(dir) => dir.join(".claude.json"),
            None => home.join(".claude.json"),
        },
    )];
    for dir in env.cwd.ancestors() {
        files.push((Kind::ClaudeMcpJson, dir.join(".mcp.json")));
    }
    let codex_home = env
        .codex_home
        .clone()
        .unwrap_or_else(|| home.join(".codex"));
    files.push((Kind::Codex(Scope::User), codex_home.join("config.toml")));
    files.extend(project_files(
        env,
        ".codex/config.toml",
        Kind::Codex(Scope::Project),
    ));
    let desktop = "Claude/claude_desktop_config.json";
    files.push((Kind::ClaudeDesktop, env.config_home().join(desktop)));
    files.push((Kind::ClaudeDesktop, mac_support(home).join(desktop)));
    files.push((Kind::Cursor(Scope::User), home.join(".cursor/mcp.json")));
    files.extend(project_files(
        env,
        ".cursor/mcp.json",
        Kind::Cursor(Scope::Project),
    ));
    for base in [env.config_home(), mac_support(home)] {
        for product in VS_CODE_DIRS {
            let user = base.join(product).join("User");
            files.push((Kind::VsCode(Scope::User), user.join("mcp.json")));
            files.extend(profiles(&user.join("profiles")));
        }
    }
    files.extend(project_files(
        env,
        ".vscode/mcp.json",
        Kind::VsCode(Scope::Project),
    ));
    files.push((
        Kind::Gemini(Scope::User),
        home.join(".gemini/settings.json"),
    ));
    files.extend(project_files(
        env,
        ".gemini/settings.json",
        Kind::Gemini(Scope::Project),
    ));
    files.dedup_by(|a, b| a.1 == b.1);
    files
}

fn mac_support(home: &Path) -> PathBuf {
    home.join("Library/Application Support")
}

/// `rel` in the cwd and each parent, except HOME itself (there it is the user file).
fn project_files(env: &Env, rel: &str, kind: Kind) -> Vec<(Kind, PathBuf)> {
    env.cwd
        .ancestors()
        .filter(|d| *d != env.home)
        .map(|d| (kind, d.join(rel)))
        .collect()
}

/// `profiles/<id>/mcp.json` of one VS Code user dir, sorted.
fn profiles(dir: &Path) -> Vec<(Kind, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join("mcp.json"))
        .collect();
    found.sort();
    found
        .into_iter()
        .map(|p| (Kind::VsCode(Scope::User), p))
        .collect()
}

/// Reads every located file that exists and runs its reader.
pub fn scan(env: &Env) -> Findings {
    let mut out = Findings::default();
    // Codex reads a project's `.codex/config.toml` only when the user file trusts that project.
    let mut codex_trusted = Vec::new();
    // Claude Code keeps the `.mcp.json` servers a user switched off in `~/.claude.json`.
    let mut claude_off = Vec::new();
    for (kind, path) in locate(env) {
        let client = kind.client();
        if kind == Kind::Codex(Scope::Project) {
            let project = path.parent().and_then(Path::parent);
            if !project.is_some_and(|p| codex_trusted.iter().any(|t: &PathBuf| t == p)) {
                if path.is_file() {
                    out.files.push(status(client, &path, "untrusted"));
                }
                continue;
            }
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            // A directory or an unreadable file: say so; the other files are still read.
            Err(e) => {
                out.files.push(status(client, &path, "error"));
                out.errors.push(FileError {
                    client,
                    file: path,
                    line: None,
                    column: None,
                    message: format!("cannot read: {e}"),
                });
                continue;
            }
        };
        match kind {
            Kind::Codex(Scope::User) => codex_trusted = super::codex::trusted_projects(&text),
            Kind::ClaudeUser => claude_off = super::claude_code::disabled_project_servers(&text),
            _ => {}
        }
        let errors_before = out.errors.len();
        read(kind, &text, &path, &mut out);
        let ok = out.errors.len() == errors_before;
        let mut st = status(client, &path, if ok { "read" } else { "error" });
        st.digest = Some(super::backup::digest(text.as_bytes()));
        out.files.push(st);
    }
    for f in &mut out.found {
        let o = &f.origin;
        let off = |(p, n): &(PathBuf, String)| Some(p) == o.project.as_ref() && *n == f.name;
        if (o.client, o.scope) == (Client::ClaudeCode, Scope::Project) && claude_off.iter().any(off)
        {
            f.flags.push(super::Flag::Disabled);
        }
    }
    out
}

/// Claude Code's user file (`~/.claude.json`), where `claude mcp add -s user` writes.
pub fn claude_user_file(env: &Env) -> PathBuf {
    locate(env)[0].1.clone()
}

/// Hands one file's text to its reader.
pub fn read(kind: Kind, text: &str, path: &Path, out: &mut Findings) {
    match kind {
        Kind::ClaudeUser => super::claude_code::read_user_file(text, path, out),
        Kind::ClaudeMcpJson => super::claude_code::read_mcp_json(text, path, out),
        Kind::Codex(scope) => super::codex::read_config(text, path, scope, out),
        Kind::ClaudeDesktop => super::claude_desktop::read_config(text, path, out),
        Kind::Cursor(scope) => super::cursor::read_config(text, path, scope, out),
        Kind::VsCode(scope) => super::vscode::read_config(text, path, scope, out),
        Kind::Gemini(scope) => super::gemini::read_settings(text, path, scope, out),
    }
}

fn status(client: Client, path: &Path, status: &'static str) -> FileStatus {
    FileStatus {
        client,
        file: path.to_path_buf(),
        status,
        digest: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(home: &Path, cwd: &Path) -> Env {
        Env {
            home: home.into(),
            cwd: cwd.into(),
            ..Env::default()
        }
    }

    #[test]
    fn project_files_stop_short_of_home() {
        let files = locate(&env(Path::new("/h"), Path::new("/h/src/p")));
        let cursor: Vec<_> = files
            .iter()
            .filter(|(k, _)| matches!(k, Kind::Cursor(_)))
            .map(|(_, p)| p.to_str().unwrap())
            .collect();
        assert_eq!(
            cursor,
            [
                "/h/.cursor/mcp.json",
                "/h/src/p/.cursor/mcp.json",
                "/h/src/.cursor/mcp.json",
                "/.cursor/mcp.json"
            ]
        );
        assert!(files.contains(&(Kind::ClaudeMcpJson, "/h/.mcp.json".into())));
        assert!(files.contains(&(Kind::Codex(Scope::User), "/h/.codex/config.toml".into())));
    }

    #[test]
    fn a_codex_project_file_counts_only_when_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("h");
        let (trusted, other) = (dir.path().join("t"), dir.path().join("o"));
        for d in [
            home.join(".codex"),
            trusted.join(".codex"),
            other.join(".codex"),
        ] {
            std::fs::create_dir_all(d).unwrap();
        }
        let user = format!(
            "[projects.{:?}]\ntrust_level = \"trusted\"\n",
            trusted.to_str().unwrap()
        );
        std::fs::write(home.join(".codex/config.toml"), user).unwrap();
        for d in [&trusted, &other] {
            std::fs::write(
                d.join(".codex/config.toml"),
                "[mcp_servers.p]\ncommand = \"x\"\n",
            )
            .unwrap();
        }
        let found = |cwd: &Path| scan(&env(&home, cwd)).found;
        assert_eq!(found(&trusted).len(), 1);
        assert_eq!(found(&trusted)[0].origin.scope, Scope::Project);
        let untrusted = scan(&env(&home, &other));
        assert!(untrusted.found.is_empty());
        assert!(untrusted.files.iter().any(|f| f.status == "untrusted"));
    }

    #[test]
    fn a_claude_project_server_switched_off_in_claude_json_is_flagged() {
        let dir = tempfile::tempdir().unwrap();
        let (home, proj) = (dir.path().join("h"), dir.path().join("p"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&proj).unwrap();
        let user = serde_json::json!({"projects": {proj.to_str().unwrap(): {"disabledMcpjsonServers": ["a"]}}});
        std::fs::write(home.join(".claude.json"), user.to_string()).unwrap();
        let mcp = r#"{"mcpServers": {"a": {"command": "x"}, "b": {"command": "y"}}}"#;
        std::fs::write(proj.join(".mcp.json"), mcp).unwrap();
        let out = scan(&env(&home, &proj));
        let flags: Vec<_> = out
            .found
            .iter()
            .map(|f| (f.name.as_str(), f.flags.clone()))
            .collect();
        assert_eq!(
            flags,
            [("a", vec![crate::setup::Flag::Disabled]), ("b", vec![])]
        );
    }

    #[test]
    fn variables_move_the_user_files() {
        let mut e = env(Path::new("/h"), Path::new("/w"));
        e.codex_home = Some("/ch".into());
        e.claude_config_dir = Some("/cc".into());
        let files = locate(&e);
        assert_eq!(files[0], (Kind::ClaudeUser, "/cc/.claude.json".into()));
        assert!(files.contains(&(Kind::Codex(Scope::User), "/ch/config.toml".into())));
    }

    #[test]
    fn missing_files_are_fine_and_bad_ones_do_not_stop_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path();
        std::fs::write(
            home.join(".claude.json"),
            "{\"mcpServers\": {\"a\": {\"command\": \"x\"}}}",
        )
        .unwrap();
        std::fs::create_dir_all(home.join(".codex")).unwrap();
        std::fs::write(home.join(".codex/config.toml"), "[mcp_servers.b\n").unwrap();
        let out = scan(&env(home, home));
        assert_eq!(out.found.len(), 1);
        assert_eq!(out.errors.len(), 1);
        assert_eq!(out.errors[0].line, Some(1));
        let statuses: Vec<_> = out.files.iter().map(|f| f.status).collect();
        assert_eq!(statuses, ["read", "error"]);
    }
}
