//! Where each client keeps its registrations, from a HOME, a working directory and a few
//! variables, and the one pass that reads those files and hands their text to the readers. A
//! missing file is a client not installed, not an error; also what Claude Code decided about a
//! project's servers and which project files git tracks (`git ls-files`). Must only read, never
//! write, and must run no program but git.

use std::path::{Path, PathBuf};

use super::claude_code::Choices as ClaudeChoices;
use super::{Client, FileError, FileStatus, Findings, Flag, Scope};

/// The client CLIs found on PATH (`None`: not installed).
#[derive(Debug, Clone, Default)]
pub struct Programs {
    pub claude: Option<PathBuf>,
    pub codex: Option<PathBuf>,
}

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
    // Claude Code keeps its choices about `.mcp.json` servers in `~/.claude.json`.
    let mut claude_choices = Vec::new();
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
            Kind::ClaudeUser => claude_choices = super::claude_code::project_choices(&text),
            _ => {}
        }
        let errors_before = out.errors.len();
        read(kind, &text, &path, &mut out);
        let ok = out.errors.len() == errors_before;
        let mut st = status(client, &path, if ok { "read" } else { "error" });
        st.digest = Some(super::doc::digest(text.as_bytes()));
        out.files.push(st);
    }
    mark_claude_choices(&mut out, claude_choices);
    mark_tracked(&mut out);
    out
}

/// Flags each Claude Code `.mcp.json` server the user switched off or never approved, adding
/// every project's `.claude/settings.local.json` to what `~/.claude.json` says.
fn mark_claude_choices(out: &mut Findings, mut choices: Vec<(PathBuf, ClaudeChoices)>) {
    use super::claude_code::{LOCAL_SETTINGS, Verdict, add_local_settings, verdict};
    let dirs: Vec<PathBuf> = out
        .found
        .iter()
        .filter(|f| (f.origin.client, f.origin.scope) == (Client::ClaudeCode, Scope::Project))
        .filter_map(|f| f.origin.project.clone())
        .collect();
    for d in &dirs {
        if !choices.iter().any(|(p, _)| p == d) {
            choices.push((d.clone(), ClaudeChoices::default()));
        }
    }
    for (p, c) in &mut choices {
        if dirs.iter().any(|d| p.starts_with(d))
            && let Ok(text) = std::fs::read_to_string(p.join(LOCAL_SETTINGS))
        {
            add_local_settings(c, &text);
        }
    }
    for f in &mut out.found {
        let o = &f.origin;
        let Some(dir) = o.project.as_deref() else {
            continue;
        };
        if (o.client, o.scope) != (Client::ClaudeCode, Scope::Project) {
            continue;
        }
        match verdict(&choices, dir, &f.name) {
            Verdict::Approved => {}
            Verdict::Disabled => f.flags.push(Flag::Disabled),
            Verdict::NotApproved(why) => f.flags.push(Flag::Unapproved(why)),
        }
    }
}

/// Flags each project-scope registration whose file git tracks, with the repository.
fn mark_tracked(out: &mut Findings) {
    let mut seen: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
    for f in &mut out.found {
        if f.origin.scope != Scope::Project {
            continue;
        }
        let file = &f.origin.file;
        let repo = match seen.iter().find(|(p, _)| p == file) {
            Some((_, r)) => r.clone(),
            None => {
                let r = tracked_in(file);
                seen.push((file.clone(), r.clone()));
                r
            }
        };
        if let Some(repo) = repo {
            f.flags.push(Flag::Tracked(repo));
        }
    }
}

/// The top of the git repository that tracks `file`, if one does (`git ls-files
/// --error-unmatch`). Without git, or outside a repository, none.
pub fn tracked_in(file: &Path) -> Option<PathBuf> {
    let (dir, name) = (file.parent()?, file.file_name()?);
    let git = |args: &[&std::ffi::OsStr]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
    };
    let flag = |s: &'static str| std::ffi::OsStr::new(s);
    git(&[flag("ls-files"), flag("--error-unmatch"), flag("--"), name])?;
    let top = git(&[flag("rev-parse"), flag("--show-toplevel")])?;
    let top = String::from_utf8(top.stdout).ok()?;
    Some(PathBuf::from(top.trim_end_matches('\n')))
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
#[path = "sources_tests.rs"]
mod tests;
