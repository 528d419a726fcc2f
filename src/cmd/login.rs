//! `mws login <server>` and `mws logout <server>`: find the server's HTTP entry and state dir,
//! run the OAuth login (`auth::flow`) opening the browser (or printing the URL), asking again for
//! the scopes held and those the server demanded since (step-up), report the scopes granted and
//! the expiry; logout removes the token file. Must not print a token.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use super::{CmdResult, UsageError, load_config};
use crate::auth::{self, flow, store};
use crate::cli::{LoginArgs, LogoutArgs};
use crate::config::{Config, HttpUpstream, Upstream};

/// The HTTP entry and state dir of the server `name` (a `servers` name, or `upstream` for the
/// single upstream).
pub fn target(config: &Config, name: &str) -> anyhow::Result<(HttpUpstream, PathBuf)> {
    let env = |v: &str| std::env::var(v).ok();
    let (upstream, dir) = if config.servers.is_empty() {
        if name != crate::upstream::LOGIN_NAME {
            return Err(UsageError(format!(
                "no server \"{name}\": the config has a single `upstream`; run `mws login {}`",
                crate::upstream::LOGIN_NAME
            ))
            .into());
        }
        (config.upstream.clone(), config.state_dir.clone())
    } else {
        let Some(s) = config.servers.iter().find(|s| s.name == name) else {
            let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
            return Err(UsageError(format!(
                "no server \"{name}\" in the config (servers: {})",
                names.join(", ")
            ))
            .into());
        };
        let up = crate::config::servers::expand(s, &env).map_err(|e| anyhow::anyhow!("{e}"))?;
        (up, crate::upstream::fleet::server_dir(config, name))
    };
    match upstream {
        Upstream::Http(h) => Ok((h, dir)),
        Upstream::Stdio(_) => Err(UsageError(format!(
            "server \"{name}\" is a stdio child: it has no OAuth login (give it credentials in `env`)"
        ))
        .into()),
    }
}

/// Opens `url` in the desktop's browser if an opener is installed; says whether one ran.
fn open_browser(url: &str) -> bool {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_ok()
}

pub fn login(config: Option<&std::path::Path>, args: LoginArgs) -> CmdResult {
    let loaded = load_config(config)?;
    let (http, dir) = target(&loaded.config, &args.server)?;
    crate::private_file::create_dir(&dir)
        .with_context(|| format!("cannot create {}", dir.display()))?;
    let oauth = http.oauth.clone().unwrap_or_default();
    let stored = store::load(&dir, &http.url);
    if let Some(demanded) = stored.as_ref().and_then(|t| t.demanded_scope.as_deref()) {
        eprintln!(
            "server \"{}\" asked for more scope ({demanded}) since the last login: this login \
             asks for it too",
            args.server
        );
    }
    let no_browser = args.no_browser;
    let show = move |url: &str| {
        if no_browser || !open_browser(url) {
            eprintln!("open this URL in a browser to log in:\n\n  {url}\n");
        } else {
            eprintln!("opened the browser to log in; if it did not open, visit:\n\n  {url}\n");
        }
        eprintln!("waiting for the login (up to {}s)...", args.timeout);
    };
    let l = flow::Login {
        url: &http.url,
        oauth: &oauth,
        dir: &dir,
        challenge: None,
        previous_scope: stored.and_then(|t| t.wanted_scope()),
        wait: Duration::from_secs(args.timeout),
        headless: auth::headless(),
    };
    let rt = tokio::runtime::Runtime::new()?;
    let t = rt
        .block_on(flow::login(l, &show))
        .map_err(|why| auth::Failed {
            server: args.server.clone(),
            why,
        })?;
    let scopes = t.scope.as_deref().unwrap_or("(none named)");
    let expiry = match t.expires_at {
        Some(s) => format!(
            "; the token expires {}{}",
            time::OffsetDateTime::from_unix_timestamp(s)
                .map(crate::clock::fmt)
                .unwrap_or_default(),
            if t.refresh_token.is_some() {
                " and is refreshed as needed"
            } else {
                ""
            }
        ),
        None => String::new(),
    };
    eprintln!(
        "logged in to server \"{}\": scopes granted: {scopes}{expiry}; tokens in {}",
        args.server,
        store::path(&dir).display()
    );
    Ok(0)
}

pub fn logout(config: Option<&std::path::Path>, args: LogoutArgs) -> CmdResult {
    let loaded = load_config(config)?;
    let (_, dir) = target(&loaded.config, &args.server)?;
    let removed = store::remove(&dir)
        .with_context(|| format!("cannot remove {}", store::path(&dir).display()))?;
    if removed {
        eprintln!(
            "logged out of server \"{}\": its tokens are deleted",
            args.server
        );
    } else {
        eprintln!("server \"{}\": mws holds no tokens for it", args.server);
    }
    Ok(0)
}
