//! The import plan: which found servers go behind mws (the `servers` map mws's config will hold,
//! secrets included, for a 0600 file), which stay with their client and why, and how duplicate
//! and unusable names were resolved. Pure: takes findings, returns the plan; must not print.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

use serde::Serialize;

use super::sources::Programs;
use super::tool_policy::{self, ToolPolicy};
use super::{
    Client, FileError, FileStatus, Findings, Flag, Found, Origin, Scope, Skipped, Source,
    Transport, names,
};

/// One entry of the `servers` map, in the shape mws's config takes (values verbatim).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ServerConfig {
    Http {
        url: String,
        #[serde(skip_serializing_if = "BTreeMap::is_empty")]
        headers: BTreeMap<String, String>,
    },
    Stdio {
        command: String,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        args: Vec<String>,
        #[serde(skip_serializing_if = "BTreeMap::is_empty")]
        env: BTreeMap<String, String>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cwd: Option<PathBuf>,
    },
}

/// A server that goes behind mws, with every registration it merges.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Imported {
    /// Its name in mws's `servers` (tools are exposed as `<name>__<tool>`).
    pub name: String,
    /// Why it is not called what the client calls it, when it is not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed: Option<String>,
    pub sources: Vec<Source>,
    /// It signs in with OAuth (the client's entry says so, or its host is one of `OAUTH_HOSTS`):
    /// the user runs `mws login <name>`; the client's tokens are not copied.
    #[serde(rename = "needsLogin", skip_serializing_if = "std::ops::Not::not")]
    pub needs_login: bool,
    /// Its clients' per-tool settings as mws's `policy` takes them, and what it cannot take.
    #[serde(skip_serializing_if = "ToolPolicy::is_empty")]
    pub policy: ToolPolicy,
}

/// A server left with its client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Stay {
    #[serde(flatten)]
    pub found: Found,
    pub reason: String,
}

/// Everything `mws setup import` would do.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// What goes into mws's config. Holds secrets: never print it unmasked.
    pub servers: BTreeMap<String, ServerConfig>,
    pub imported: Vec<Imported>,
    pub stays: Vec<Stay>,
    pub found: Vec<Found>,
    pub skipped: Vec<Skipped>,
    pub errors: Vec<FileError>,
    pub files: Vec<FileStatus>,
}

/// Hosted servers that sign users in with OAuth: an entry for one of them with no headers relies
/// on a login, which mws makes itself (`mws login`; the client's tokens are not copied). Adding a
/// host marks its header-less entries as needing that login.
pub const OAUTH_HOSTS: &[&str] = &[
    "api.githubcopilot.com",
    "mcp.notion.com",
    "mcp.linear.app",
    "mcp.atlassian.com",
    "mcp.asana.com",
    "mcp.sentry.dev",
    "mcp.stripe.com",
    "mcp.vercel.com",
    "mcp.supabase.com",
];

/// The command file name that is mws itself: a registration of mws is not imported into mws.
const MWS_COMMAND: &str = "mws";

/// What the plan knows beyond the findings. The default moves no Cursor, VS Code or Gemini CLI
/// project file and no file git tracks, and does not check the client CLIs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options<'a> {
    /// mws's own endpoint: a registration of that URL is mws, not a server to put behind it.
    pub own_url: Option<&'a str>,
    /// The client CLIs found on PATH (`--apply` changes Claude Code and Codex only through
    /// them): without one, that client's registrations stay. `None`: not checked.
    pub programs: Option<&'a Programs>,
    /// Move the servers of Cursor, VS Code and Gemini CLI project files (`--include-project-files`).
    pub include_project_files: bool,
    /// Edit project files git tracks (`--edit-tracked`).
    pub edit_tracked: bool,
}

impl<'a> Options<'a> {
    /// What `mws setup import` was asked, with mws's endpoint and the CLIs found on PATH.
    pub fn of(
        args: &crate::cli::SetupImportArgs,
        own_url: &'a str,
        programs: &'a Programs,
    ) -> Options<'a> {
        Options {
            own_url: Some(own_url),
            programs: Some(programs),
            include_project_files: args.include_project_files,
            edit_tracked: args.edit_tracked,
        }
    }
}

/// Builds the plan from what the readers found, in their order (first registration wins a name;
/// a registration with the same transport as one already planned joins it, its name an alias).
pub fn plan(findings: Findings) -> Plan {
    plan_with(findings, &Options::default())
}

/// `plan`, knowing mws's own endpoint.
pub fn plan_for(findings: Findings, own_url: Option<&str>) -> Plan {
    plan_with(
        findings,
        &Options {
            own_url,
            ..Options::default()
        },
    )
}

/// `plan` with everything `--apply` would check.
pub fn plan_with(findings: Findings, options: &Options) -> Plan {
    let mut p = Plan {
        found: findings.found.clone(),
        skipped: findings.skipped,
        errors: findings.errors,
        files: findings.files,
        ..Plan::default()
    };
    for f in findings.found {
        let config = match (
            stays_reason(&f, options),
            config_of(&f.transport, project_dir(&f.origin)),
        ) {
            (Some(reason), _) | (None, Err(reason)) => {
                p.stays.push(Stay { found: f, reason });
                continue;
            }
            (None, Ok(config)) => config,
        };
        let login = needs_login(&f);
        let source = Source {
            origin: f.origin.clone(),
            name: f.name.clone(),
            flags: f.flags.clone(),
        };
        // The same server under another name in some client: one server, that name an alias.
        if let Some(i) = p
            .imported
            .iter()
            .position(|i| p.servers.get(&i.name) == Some(&config))
        {
            p.imported[i].sources.push(source);
            p.imported[i].needs_login |= login;
            continue;
        }
        let (clean, why) = names::clean(&f.name);
        let mut renamed = why.clone();
        let mut name = clean.clone();
        let mut n = 1;
        loop {
            match p.servers.get(&name) {
                None => break,
                Some(same) if *same == config => break,
                Some(_) => {
                    n += 1;
                    name = names::with_suffix(&clean, n);
                    let taken =
                        format!("another registration has a different server named `{clean}`");
                    renamed = Some(match &why {
                        Some(why) => format!("{why}; {taken}"),
                        None => taken,
                    });
                }
            }
        }
        if let Some(i) = p.imported.iter().position(|i| i.name == name) {
            p.imported[i].sources.push(source);
            p.imported[i].needs_login |= login;
            continue;
        }
        p.servers.insert(name.clone(), config);
        p.imported.push(Imported {
            name,
            renamed,
            sources: vec![source],
            needs_login: login,
            policy: ToolPolicy::default(),
        });
    }
    for i in &mut p.imported {
        i.policy = tool_policy::of(&i.name, &i.sources);
    }
    p
}

/// Why a registration cannot move behind mws, if it cannot.
fn stays_reason(f: &Found, options: &Options) -> Option<String> {
    let client = f.origin.client.as_str();
    let project = f.origin.project.as_deref().unwrap_or(Path::new("?"));
    for flag in &f.flags {
        match flag {
            Flag::Disabled => return Some(format!("switched off in {client}")),
            Flag::Unapproved(why) => {
                return Some(format!(
                    "not approved in Claude Code for {}: {why}",
                    project.display()
                ));
            }
            Flag::Tracked(repo) if !options.edit_tracked => {
                return Some(format!(
                    "tracked by git in {}: every teammate would lose it (`--edit-tracked` moves \
                     it anyway)",
                    repo.display()
                ));
            }
            Flag::ClientVariable(var) => {
                return Some(format!(
                    "uses the {client} variable `${{{var}}}`, which mws cannot express"
                ));
            }
            Flag::Input(id) => {
                return Some(format!(
                    "uses the VS Code input `{id}`: VS Code prompts for it and keeps the value, \
                     not in the file"
                ));
            }
            Flag::HeadersHelper => {
                return Some(format!(
                    "its headers come from a command {client} runs at connect time"
                ));
            }
            Flag::Oauth if !matches!(f.transport, Transport::Http { .. }) => {
                return Some(format!(
                    "signs in with OAuth through {client} over a transport mws cannot log in on"
                ));
            }
            _ => {}
        }
    }
    if f.origin.scope == Scope::Project
        && matches!(
            f.origin.client,
            Client::Cursor | Client::VsCode | Client::GeminiCli
        )
        && !options.include_project_files
    {
        return Some(format!(
            "in the {client} project file of {}: project files move only with \
             `--include-project-files`",
            project.display()
        ));
    }
    if let Some(programs) = options.programs {
        let missing = match f.origin.client {
            Client::ClaudeCode => programs.claude.is_none().then_some("claude"),
            Client::Codex => programs.codex.is_none().then_some("codex"),
            _ => None,
        };
        if let Some(cli) = missing {
            return Some(format!(
                "`{cli}` is not on PATH, and mws changes {client}'s registrations only through it"
            ));
        }
    }
    if let Some(why) = super::vars::unexpandable(&f.transport) {
        return Some(why);
    }
    let own_url = options.own_url;
    match &f.transport {
        Transport::Stdio { command, .. }
            if std::path::Path::new(command)
                .file_name()
                .is_some_and(|n| n == MWS_COMMAND) =>
        {
            Some("this is mws itself".into())
        }
        Transport::Http { url, .. } if own_url.is_some_and(|own| same_endpoint(url, own)) => {
            Some("this is mws itself".into())
        }
        _ => None,
    }
}

/// Whether the registration signs in with OAuth (mws then needs `mws login`).
fn needs_login(f: &Found) -> bool {
    f.flags.contains(&Flag::Oauth)
        || matches!(&f.transport, Transport::Http { url, headers } if headers.is_empty() && oauth_host(url).is_some())
}

/// The same loopback endpoint, `localhost` or `127.0.0.1`, with or without a trailing `/`.
pub fn same_endpoint(a: &str, b: &str) -> bool {
    let norm = |u: &str| {
        u.trim_end_matches('/')
            .replacen("//localhost", "//127.0.0.1", 1)
    };
    norm(a) == norm(b)
}

/// The host of `url` when it is one of `OAUTH_HOSTS`.
fn oauth_host(url: &str) -> Option<String> {
    let host = reqwest::Url::parse(url)
        .ok()?
        .host_str()?
        .to_ascii_lowercase();
    OAUTH_HOSTS.contains(&host.as_str()).then_some(host)
}

/// The directory a project's (or Claude Code local scope's) registration runs in, as its client
/// starts it there.
fn project_dir(o: &Origin) -> Option<&Path> {
    match o.scope {
        Scope::Project | Scope::Local => o.project.as_deref(),
        Scope::User => None,
    }
}

/// The `servers` entry for a transport mws speaks, or why it cannot speak it. A project's stdio
/// server runs in that project (mws does not run there): without a `cwd`, one whose command or an
/// argument starts with `./` or `../` gets the project as `cwd`, a relative `cwd` is made
/// absolute from the project, and a command given as `./x` or `../x` is made absolute from that
/// `cwd`.
fn config_of(t: &Transport, project: Option<&Path>) -> Result<ServerConfig, String> {
    match t {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let rel = |s: &str| s.starts_with("./") || s.starts_with("../");
            let cwd = match (cwd, project) {
                (Some(c), Some(p)) if c.is_relative() => Some(join(p, c)),
                (None, Some(p)) if rel(command) || args.iter().any(|a| rel(a)) => {
                    Some(p.to_path_buf())
                }
                _ => cwd.clone(),
            };
            let relative = rel(command);
            let command = match &cwd {
                Some(dir) if relative => join(dir, Path::new(command)).display().to_string(),
                _ => command.clone(),
            };
            Ok(ServerConfig::Stdio {
                command,
                args: args.clone(),
                env: env.clone(),
                cwd,
            })
        }
        // A URL mws's config would refuse keeps the server with its client (a `${VAR}` in it is
        // checked when mws starts the server).
        Transport::Http { url, .. }
            if !url.contains("${") && crate::config::checked::check_url(url).is_err() =>
        {
            let why = crate::config::checked::check_url(url).unwrap_err();
            Err(format!("its URL cannot be used by mws: {why}"))
        }
        Transport::Http { url, headers } => Ok(ServerConfig::Http {
            url: url.clone(),
            headers: headers.clone(),
        }),
        Transport::Sse { .. } => Err("legacy HTTP+SSE transport: mws speaks Streamable HTTP \
                                      and stdio only"
            .into()),
        Transport::Ws { .. } => {
            Err("WebSocket transport: mws speaks Streamable HTTP and stdio only".into())
        }
    }
}

/// `rel` under `dir`, without its `.` parts.
fn join(dir: &Path, rel: &Path) -> PathBuf {
    rel.components()
        .filter(|c| *c != Component::CurDir)
        .fold(dir.to_path_buf(), |acc, c| acc.join(c))
}

#[cfg(test)]
#[path = "plan_tests.rs"]
mod tests;
