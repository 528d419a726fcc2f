//! The `registration` check: when `mws setup import --apply` registered mws with the clients (a
//! backup set not undone), each registration it put in is read back from its client file, and
//! the program it starts (and the config file it passes) must still be there; otherwise that
//! client starts nothing and has no mws tools, which the client itself hardly says. Also the
//! warning other commands print for the same cause. Reads only; must not run the registration.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Check;
use crate::config::Config;
use crate::setup::backup::{self, Action};
use crate::setup::doc::Doc;

/// One registration of mws that cannot start, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// The client file holding it.
    pub file: PathBuf,
    pub why: String,
}

/// A registration of mws found in a client file: the program and its arguments.
struct Registered {
    file: PathBuf,
    command: String,
    args: Vec<String>,
}

/// Every stdio registration of mws the newest `--apply` put in, as the client files hold it now
/// (one the user took out or changed to a URL is not mws's to check).
fn registered(config: &Config, config_path: &Path) -> Option<Vec<Registered>> {
    let set = backup::latest(&config.state_dir)?;
    let manifest = backup::read_manifest(&set).ok()?;
    let ours = std::path::absolute(config_path).unwrap_or_else(|_| config_path.to_path_buf());
    let mut out = Vec::new();
    for c in &manifest.changes {
        if c.action != Action::Added || c.name != config.server_name || c.file == ours {
            continue;
        }
        let Some(entry) = std::fs::read(&c.file)
            .ok()
            .and_then(|b| Doc::parse(&b, backup::is_toml(&c.file)).ok())
            .and_then(|d| d.get(&c.at, &c.name))
        else {
            continue;
        };
        let Some(command) = entry.get("command").and_then(Value::as_str) else {
            continue;
        };
        let args = entry
            .get("args")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default();
        out.push(Registered {
            file: c.file.clone(),
            command: command.to_string(),
            args,
        });
    }
    Some(out)
}

/// Why `path` cannot be started as a program, if it cannot.
fn not_runnable(path: &Path) -> Option<String> {
    match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("does not exist".into()),
        Err(e) => Some(format!("cannot be read ({e})")),
        Ok(m) if !m.is_file() => Some("is not a file".into()),
        Ok(m) if m.permissions().mode() & 0o111 == 0 => Some("is not executable".into()),
        Ok(_) => None,
    }
}

/// The registrations of mws that cannot start: the program gone (mws moved or was removed), or
/// the config file it is given gone. Relative commands are found on the client's PATH, which mws
/// does not know: they are not checked.
pub fn broken(config: &Config, config_path: &Path) -> Vec<Broken> {
    let mut out = Vec::new();
    for r in registered(config, config_path).unwrap_or_default() {
        let command = Path::new(&r.command);
        let program = command
            .is_absolute()
            .then(|| not_runnable(command))
            .flatten();
        if let Some(why) = program {
            out.push(Broken {
                file: r.file.clone(),
                why: format!(
                    "`{}` there starts {}, which {why}",
                    config.server_name, r.command
                ),
            });
            continue;
        }
        let given = r
            .args
            .iter()
            .position(|a| a == "--config")
            .and_then(|i| r.args.get(i + 1));
        if let Some(cfg) = given
            && !Path::new(cfg).exists()
        {
            out.push(Broken {
                file: r.file,
                why: format!(
                    "`{}` there starts mws with the config {cfg}, which does not exist",
                    config.server_name
                ),
            });
        }
    }
    out
}

/// The check for the config at `config_path`; `None` when mws was not registered by `mws setup import --apply` (or only over
/// HTTP, which the `port` check covers).
pub fn check(config: &Config, config_path: &Path) -> Option<Check> {
    let found = registered(config, config_path)?;
    if found.is_empty() {
        return None;
    }
    let bad = broken(config, config_path);
    if bad.is_empty() {
        let files: Vec<String> = found.iter().map(|r| r.file.display().to_string()).collect();
        return Some(Check::ok(
            "registration",
            format!(
                "the clients start mws as {} ({})",
                found[0].command,
                files.join(", ")
            ),
        ));
    }
    let lines = bad
        .iter()
        .map(|b| format!("{}: {}", b.file.display(), b.why))
        .collect();
    Some(
        Check::fail(
            "registration",
            format!(
                "{} client registration(s) of mws cannot start: those clients have no mws tools",
                bad.len()
            ),
            "put mws back where the registration says, or register the mws you have now: `mws \
             setup undo`, then `mws setup import --apply` with it",
        )
        .details(lines),
    )
}

/// The warning lines other commands print on stderr (one per broken registration).
pub fn warnings(config: &Config, config_path: &Path) -> Vec<String> {
    broken(config, config_path)
        .into_iter()
        .map(|b| {
            format!(
                "warning: {}: {}: that client cannot start mws and has no mws tools (`mws doctor` \
                 says how to fix it)",
                b.file.display(),
                b.why
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A state dir whose backup set says `--apply` put `toolbox` into `client` with `entry`.
    fn registered_in(dir: &Path, client: &Path, entry: &Value) -> Config {
        let config = Config {
            state_dir: dir.join("state"),
            ..Config::default()
        };
        let mut set = backup::Set::create(&config.state_dir, "20261201T000000Z").unwrap();
        set.save(client, None).unwrap();
        std::fs::write(
            client,
            serde_json::json!({"mcpServers": {"toolbox": entry}}).to_string(),
        )
        .unwrap();
        set.record(client, &["mcpServers"], "toolbox", Action::Added);
        set.finish().unwrap();
        config
    }

    #[test]
    fn a_missing_config_is_named_and_an_http_registration_is_not_checked() {
        let dir = tempfile::tempdir().unwrap();
        let client = dir.path().join("claude.json");
        let exe = std::env::current_exe().unwrap();
        let gone = dir.path().join("gone.json");
        let entry =
            serde_json::json!({"command": exe, "args": ["--config", gone, "serve", "--stdio"]});
        let config = registered_in(dir.path(), &client, &entry);
        let ours = dir.path().join("c.json");
        assert_eq!(
            broken(&config, &ours),
            [Broken {
                file: client.clone(),
                why: format!(
                    "`toolbox` there starts mws with the config {}, which does not exist",
                    gone.display()
                ),
            }]
        );
        let failed = check(&config, &ours).unwrap();
        assert_eq!(failed.status, super::super::Status::Fail, "{failed:?}");

        let dir = tempfile::tempdir().unwrap();
        let client = dir.path().join("claude.json");
        let entry = serde_json::json!({"type": "http", "url": "http://127.0.0.1:4484/mcp"});
        let config = registered_in(dir.path(), &client, &entry);
        assert_eq!(check(&config, &ours), None);
    }

    #[test]
    fn a_missing_or_unexecutable_program_is_named() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            not_runnable(&dir.path().join("gone")).as_deref(),
            Some("does not exist")
        );
        let f = dir.path().join("mws");
        std::fs::write(&f, "").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(not_runnable(&f).as_deref(), Some("is not executable"));
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(not_runnable(&f), None);
        assert_eq!(not_runnable(dir.path()).as_deref(), Some("is not a file"));
    }
}
