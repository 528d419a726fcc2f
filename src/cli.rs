//! Command-line types (clap): the commands, their flags and help. Must not run anything: the
//! dispatch is `cmd::main`.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "mws",
    version,
    about = "An MCP proxy that lists only the tools you actually use",
    long_about = "mws (mcp-working-set) sits in front of an MCP server and lists only the tools \
                  this user actually uses, plus search_tools and call_tool for all the others."
)]
pub struct Cli {
    /// Config file (default: $MWS_CONFIG, else ~/.config/mcp-working-set/config.json).
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a commented default config, create the state dir and database, print the paths.
    #[command(after_help = "Examples:\n  mws init\n  mws init --force")]
    Init(InitArgs),
    /// Run the proxy (Streamable HTTP on 127.0.0.1:4484/mcp, or --stdio).
    #[command(
        after_help = "Examples:\n  mws serve\n  mws serve --demo --port 0\n  mws serve --stdio"
    )]
    Serve(ServeArgs),
    /// Read client transcripts into the database, incrementally.
    #[command(after_help = "Examples:\n  mws ingest\n  mws ingest --json")]
    Ingest(IngestArgs),
    /// Ingest, then recompute the working set and print the decision table.
    #[command(after_help = "Examples:\n  mws promote --dry-run\n  mws promote --no-ingest --json")]
    Promote(PromoteArgs),
    /// What is listed and what it saves, usage and search statistics, hit rate.
    #[command(
        after_help = "Examples:\n  mws report\n  mws report --since 7d --json\n  mws report --tokenizer cl100k"
    )]
    Report(ReportArgs),
    /// Run search_tools against the live catalog (or --catalog FILE) and print the reply.
    #[command(
        after_help = "Examples:\n  mws search create issue\n  mws search --explain --limit 5 list files\n  mws search --catalog tools.json --json calendar"
    )]
    Search(SearchArgs),
    /// Check config, database, upstream, transcript roots and port; say how to fix each problem.
    #[command(after_help = "Examples:\n  mws doctor\n  mws doctor --json")]
    Doctor(DoctorArgs),
    /// Log in to a server that needs OAuth: opens the browser, waits for the redirect, keeps the tokens.
    #[command(after_help = "Examples:\n  mws login github\n  mws login upstream --no-browser")]
    Login(LoginArgs),
    /// Delete the tokens `mws login` keeps for a server.
    #[command(after_help = "Examples:\n  mws logout github")]
    Logout(LogoutArgs),
    /// Find the MCP servers other clients have registered and plan putting them behind mws.
    #[command(
        subcommand,
        after_help = "Examples:\n  mws setup import\n  mws setup import --apply\n  mws setup undo"
    )]
    Setup(SetupCommand),
    /// Tools held because their definitions changed since you approved them: show, approve, reject.
    #[command(
        subcommand,
        after_help = "Examples:\n  mws tools held\n  mws tools approve github__create_issue\n  mws tools reject --all"
    )]
    Tools(ToolsCommand),
    /// Replay the recorded calls under other promotion settings: hit rate, tokens, churn.
    #[command(
        name = "what-if",
        after_help = "Examples:\n  mws what-if\n  mws what-if --min-sessions 1,2 --keep-days 7,30,90\n  mws what-if --since 90d --json\n  mws what-if --svg what-if.svg"
    )]
    WhatIf(WhatIfArgs),
    /// Print a shell completion script (bash, zsh or fish) on stdout.
    #[command(
        after_help = "Examples:\n  mws completions bash > ~/.local/share/bash-completion/completions/mws\n  mws completions zsh > ~/.zfunc/_mws\n  mws completions fish > ~/.config/fish/completions/mws.fish"
    )]
    Completions(CompletionsArgs),
    /// The built-in demo upstream, speaking MCP over stdio (used by `serve --demo`).
    #[command(hide = true)]
    DemoUpstream,
}

#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The server's name in `servers` (`upstream` for the single upstream).
    pub server: String,
    /// Print the URL to open instead of opening a browser.
    #[arg(long)]
    pub no_browser: bool,
    /// Seconds to wait for the login to complete in the browser.
    #[arg(long, default_value_t = 300, value_name = "SECS")]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The server's name in `servers` (`upstream` for the single upstream).
    pub server: String,
}

#[derive(Debug, Args)]
pub struct WhatIfArgs {
    /// Print every setting's figures and the recommendation as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also draw hit rate against listed tokens, one point per setting, into this SVG file.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// The measured window: 24h, 7d, 30d, ... (earlier calls still feed the decisions).
    #[arg(long, default_value = "30d")]
    pub since: String,
    /// Tokenizer for token counts: o200k (default) or cl100k.
    #[arg(long, default_value = "o200k")]
    pub tokenizer: String,
    /// minSessions values to try, comma-separated (default 1,2,3).
    #[arg(long, value_name = "N,..", allow_hyphen_values = true)]
    pub min_sessions: Option<String>,
    /// minCalls values to try (default 1,3).
    #[arg(long, value_name = "N,..", allow_hyphen_values = true)]
    pub min_calls: Option<String>,
    /// windowDays values to try (default 14,30).
    #[arg(long, value_name = "DAYS,..", allow_hyphen_values = true)]
    pub window_days: Option<String>,
    /// keepDays values to try (default 14,30).
    #[arg(long, value_name = "DAYS,..", allow_hyphen_values = true)]
    pub keep_days: Option<String>,
}

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to write the script for.
    pub shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing config file.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve one client over stdin/stdout instead of HTTP.
    #[arg(long)]
    pub stdio: bool,
    /// Run in front of the built-in demo upstream (state in a temp dir unless --state-dir).
    #[arg(long)]
    pub demo: bool,
    /// Override the config's stateDir.
    #[arg(long, value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
    /// Override the config's listen.port (0 picks a free port).
    #[arg(long)]
    pub port: Option<u16>,
}

#[derive(Debug, Args)]
pub struct IngestArgs {
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct PromoteArgs {
    /// Print the decision table and write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print the decisions as JSON.
    #[arg(long)]
    pub json: bool,
    /// Skip the ingest that runs first.
    #[arg(long)]
    pub no_ingest: bool,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Print every figure as one JSON object.
    #[arg(long)]
    pub json: bool,
    /// The window: 24h, 7d, 30d, ...
    #[arg(long, default_value = "30d")]
    pub since: String,
    /// Tokenizer for token counts: o200k (default) or cl100k.
    #[arg(long, default_value = "o200k")]
    pub tokenizer: String,
    /// The team's figures from the team database (`store.postgres`): per member, the tools the
    /// team uses and nobody uses, and what the team's listings cost.
    #[arg(long)]
    pub team: bool,
}

#[derive(Debug, Args)]
pub struct SearchArgs {
    /// Rank a tools/list result saved in this file, offline.
    #[arg(long, value_name = "FILE")]
    pub catalog: Option<PathBuf>,
    /// Print the reply exactly as search_tools returns it.
    #[arg(long)]
    pub json: bool,
    /// Most results to show.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Show the parts of each result's score.
    #[arg(long)]
    pub explain: bool,
    /// Also rank by meaning with this local sentence-embedding model directory (config.json,
    /// tokenizer.json, model.safetensors); overrides the config's search.semantic.
    #[arg(long, value_name = "DIR", conflicts_with = "keywords")]
    pub model: Option<PathBuf>,
    /// Rank by keywords only, whatever the config's search.semantic says.
    #[arg(long)]
    pub keywords: bool,
    /// How keyword and vector rankings are fused (for comparing; `sum` is the default).
    #[arg(long, value_name = "rrf|sum", hide = true)]
    pub fusion: Option<String>,
    /// Rank without the usage prior (tools called in recent sessions rank a little higher).
    #[arg(long)]
    pub no_prior: bool,
    /// Rank a weak best match like any other: a whole page, not marked weak, and never
    /// "nothing matches" (with --eval: what those rules cost the gold set).
    #[arg(long)]
    pub always_answer: bool,
    /// Score search on a gold file (JSON lines {"query", "expected": [names]}; an empty list
    /// means nothing should match): top-1, top-3, MRR@10, negatives, misses.
    #[arg(long, value_name = "GOLD.jsonl", conflicts_with_all = ["explain", "limit"])]
    pub eval: Option<PathBuf>,
    /// The query (words are joined with spaces; empty lists the whole catalog).
    pub query: Vec<String>,
}

#[derive(Debug, Subcommand)]
pub enum ToolsCommand {
    /// List the held tool definitions, each change shown field by field.
    Held(ToolsHeldArgs),
    /// Approve held definitions: mws lists and runs those tools as their servers define them now.
    Approve(ToolsArgs),
    /// Reject held definitions: those tools stay held until their servers list another one.
    Reject(ToolsArgs),
}

#[derive(Debug, Args)]
pub struct ToolsHeldArgs {
    /// Print the held definitions as JSON (approved and listed definitions whole).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The tools, as `mws tools held` names them (`<server>__<tool>`, `<server>/<tool>`, or the
    /// tool's own name where one server holds it).
    pub names: Vec<String>,
    /// Every held tool awaiting a decision.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Subcommand)]
pub enum SetupCommand {
    /// Read Claude Code, Codex, Claude Desktop, Cursor, VS Code and Gemini CLI configs and print
    /// which servers would go behind mws, which stay with their client and why (a dry run).
    Import(SetupImportArgs),
    /// Put back the files the last `mws setup import --apply` changed, byte for byte.
    Undo(SetupUndoArgs),
}

#[derive(Debug, Args)]
pub struct SetupUndoArgs {
    /// Put every file back whole, even one changed since `--apply` (what that discards is
    /// printed first); without it, a changed file is undone entry by entry.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct SetupImportArgs {
    /// Print the plan as JSON (secrets masked).
    #[arg(long)]
    pub json: bool,
    /// Carry the plan out: back up every file it changes, write `servers` into mws's config and
    /// register mws in each client instead of those servers.
    #[arg(long)]
    pub apply: bool,
    /// Register mws's HTTP endpoint instead of having each client start `mws serve --stdio`
    /// (then keep `mws serve` running yourself).
    #[arg(long)]
    pub http: bool,
    /// Also move the servers of Cursor, VS Code and Gemini CLI project files (`.cursor/mcp.json`,
    /// `.vscode/mcp.json`, `.gemini/settings.json`) found from here upward; they then serve every
    /// project.
    #[arg(long)]
    pub include_project_files: bool,
    /// Also edit project files that git tracks (every clone of the repository loses the servers
    /// moved out of them).
    #[arg(long)]
    pub edit_tracked: bool,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Print the checks as JSON.
    #[arg(long)]
    pub json: bool,
}
