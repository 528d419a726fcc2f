//! The top-level run (`main`: parse, logging to stderr, dispatch, exit codes and broken pipes
//! handled in one place) and one thin file per command: load the config, call into the library,
//! print. Exit codes: 0 ok, 1 runtime failure, 2 usage or config error.

pub mod completions;
pub mod demo_upstream;
pub mod doctor;
pub mod ingest;
pub mod init;
pub mod login;
pub mod promote;
pub mod report;
pub mod search;
pub mod serve;
pub mod setup;
pub mod tools;
pub mod whatif;

use std::path::Path;

use clap::Parser;

use crate::cli::{Cli, Command, SetupCommand};
use crate::config::{self, ConfigError, Loaded};

/// Parses the command line, runs the command and returns the process exit code.
pub fn main() -> i32 {
    let cli = Cli::parse();
    init_logging();
    if matches!(
        cli.command,
        Command::Ingest(_)
            | Command::Promote(_)
            | Command::Report(_)
            | Command::Search(_)
            | Command::WhatIf(_)
    ) {
        warn_unstartable(cli.config.as_deref());
    }
    let result = match cli.command {
        Command::Init(a) => init::run(cli.config.as_deref(), a),
        Command::Serve(a) => serve::run(cli.config.as_deref(), a),
        Command::Ingest(a) => ingest::run(cli.config.as_deref(), a),
        Command::Promote(a) => promote::run(cli.config.as_deref(), a),
        Command::Report(a) => report::run(cli.config.as_deref(), a),
        Command::Search(a) => search::run(cli.config.as_deref(), a),
        Command::Doctor(a) => doctor::run(cli.config.as_deref(), a),
        Command::Login(a) => login::login(cli.config.as_deref(), a),
        Command::Logout(a) => login::logout(cli.config.as_deref(), a),
        Command::Setup(SetupCommand::Import(a)) => setup::import(cli.config.as_deref(), a),
        Command::Setup(SetupCommand::Undo(a)) => setup::undo(cli.config.as_deref(), a),
        Command::Tools(c) => tools::run(cli.config.as_deref(), c),
        Command::WhatIf(a) => whatif::run(cli.config.as_deref(), a),
        Command::Completions(a) => completions::run(a),
        Command::DemoUpstream => demo_upstream::run(),
    };
    match result {
        Ok(code) => code,
        Err(e) => exit_code_for(&e),
    }
}

/// Says on stderr when a `--since` window reaches further back than `historyDays` keeps.
pub(crate) fn say_if_past_horizon(
    who: &str,
    config: &config::Config,
    window: &crate::report::Window,
) {
    let days = config.history_days();
    if days > 0 && window.duration > time::Duration::days(i64::from(days)) {
        eprintln!(
            "{who}: --since {} reaches past historyDays ({days}): the figures cover the last \
             {days} days",
            window.label
        );
    }
}

fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("MWS_LOG").unwrap_or_else(|_| EnvFilter::new("warn"));
    let colour = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(move || crate::term::LogWriter { colour })
        .with_ansi(colour)
        .with_target(false)
        .try_init();
}

/// Says on stderr when a client registration `mws setup import --apply` made starts an mws (or a
/// config) that is not there any more: those clients have no mws tools and hardly say why. A
/// config that does not load is left to the command to report.
fn warn_unstartable(flag: Option<&Path>) {
    if let Ok(l) = config::load(flag) {
        for w in crate::doctor::registration::warnings(&l.config, &l.path) {
            eprintln!("mws: {}", crate::term::safe_lines(&w));
        }
    }
}

/// A usage error: bad flags or arguments. Exits 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// What a command returns: an exit code, or an error that `exit_code_for` prints and maps.
pub type CmdResult = anyhow::Result<i32>;

/// Loads the config; its errors exit 2.
pub fn load_config(flag: Option<&Path>) -> anyhow::Result<Loaded> {
    Ok(config::load(flag)?)
}

/// Prints an error on stderr and picks the exit code: 2 for config and usage errors, 0 for a
/// closed stdout (`mws report | head`), 1 for everything else.
pub fn exit_code_for(e: &anyhow::Error) -> i32 {
    if let Some(io) = e.downcast_ref::<std::io::Error>()
        && io.kind() == std::io::ErrorKind::BrokenPipe
    {
        return 0;
    }
    // The message may quote a config key, a path or an upstream answer.
    eprintln!("mws: {}", crate::term::safe_lines(&format!("{e:#}")));
    if e.downcast_ref::<ConfigError>().is_some() || e.downcast_ref::<UsageError>().is_some() {
        2
    } else {
        1
    }
}

/// For commands another issue builds: says so and exits 2.
pub fn not_built(command: &str) -> CmdResult {
    eprintln!("mws {command}: not built yet");
    Ok(2)
}

/// With a server marked `adoptsUpstreamHistory`: the former single upstream's history, stored
/// without a server prefix, is renamed to that server's `<server>__<tool>` names
/// (`store::adopt`); said on stderr as `<who>: ...` when any row moved.
pub fn adopt_history(
    config: &crate::config::Config,
    store: &mut crate::store::Store,
    who: &str,
) -> anyhow::Result<()> {
    let Some(heir) = config.servers.iter().find(|s| s.adopts_upstream_history) else {
        return Ok(());
    };
    let names: Vec<&str> = config.servers.iter().map(|s| s.name.as_str()).collect();
    let n = store.adopt_unprefixed(&heir.name, &names)?;
    if n > 0 {
        eprintln!(
            "{who}: {n} history row(s) without a server prefix now count for server \"{}\" \
             ({}__<tool>)",
            heir.name, heir.name
        );
    }
    Ok(())
}
