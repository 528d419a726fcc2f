//! `mws report`: read the clock once, ask the upstream (short budget, else `catalog.json`), read
//! the figures from the store, print tables or JSON. Glue: the figures are `report::compute`.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::Path;

use time::OffsetDateTime;

use super::{CmdResult, UsageError, load_config};
use crate::catalog::Catalog;
use crate::cli::ReportArgs;
use crate::config::Config;
use crate::report::render::{self, Style};
use crate::report::{self, Inputs, Report, Tokenizer, TokenizerKind, UpstreamInfo, Window};
use crate::server::tools_list::choose;
use crate::store::Store;
use crate::{clock, probe};

pub fn run(config: Option<&Path>, args: ReportArgs) -> CmdResult {
    let window = Window::parse(&args.since).map_err(UsageError)?;
    let kind: TokenizerKind = args.tokenizer.parse().map_err(UsageError)?;
    let loaded = load_config(config)?;
    let config = &loaded.config;
    super::say_if_past_horizon("mws report", config, &window);
    let now = clock::now();
    // `{e}`, not a context chain: StoreError's message already holds its source's text.
    let store = Store::open(&config.db_path()).map_err(|e| {
        anyhow::anyhow!("cannot open the database (`mws doctor` says how to fix it): {e}")
    })?;
    let p = probe::for_command(config)?;
    if let Some(e) = &p.catalog_file_error {
        tracing::warn!("{e}");
    }
    let upstream = upstream_info(config, &p);
    let report = gather(
        &store,
        config,
        &p.catalog,
        &upstream,
        now,
        &window,
        &Tokenizer::load(kind),
    )?;
    let out = if args.team {
        let team = team_report(config, &store, &report, &p.catalog, now, &window)?;
        if args.json {
            let mut s = crate::term::json_pretty(&team)?;
            s.push('\n');
            s
        } else {
            crate::team::report::text(&team)
        }
    } else if args.json {
        json(&report)
    } else {
        let tty = std::io::stdout().is_terminal();
        let color = tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
        render::text(&report, Style { width: None, color })
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(0)
}

/// `mws report --team`: ships what waits, then reads the team's rows for the window.
fn team_report(
    config: &Config,
    store: &Store,
    personal: &Report,
    catalog: &Catalog,
    now: OffsetDateTime,
    window: &Window,
) -> anyhow::Result<crate::team::report::TeamReport> {
    use crate::team::pg_text;
    let Some((shipper, mut client)) = crate::team::ship::read_after_shipping(config, store)? else {
        return Err(UsageError(
            "--team reads the team database: set store.postgres in the config (docs/teams.md)"
                .into(),
        )
        .into());
    };
    let span = window.span(now);
    let label = &shipper.target.label;
    let rows = crate::team::queries::team_rows(&mut client, &span.since, &span.until)
        .map_err(|e| anyhow::anyhow!("team database {label}: {}", pg_text(&e)))?;
    Ok(crate::team::report::compute(
        rows,
        crate::team::report::Inputs {
            database: label,
            window: &window.label,
            since: &span.since,
            until: &span.until,
            catalog: catalog.names().map(str::to_string).collect(),
            catalog_tokens: personal.sizes.upstream.tokens as u64,
            listed_tokens: personal.sizes.listed.tokens as u64,
        },
    ))
}

/// The report as pretty JSON with a trailing newline; names stay inert on a terminal.
pub fn json(report: &Report) -> String {
    let mut s = crate::term::json_pretty(report).expect("the report always serializes");
    s.push('\n');
    s
}

/// What the probe found, in the report's terms.
pub fn upstream_info(config: &Config, p: &probe::Probe) -> UpstreamInfo {
    UpstreamInfo::of(probe::target(config), &p.status, p.catalog_source)
}

/// Reads every figure from `store` for the window ending at `now` and computes the report.
pub fn gather(
    store: &Store,
    config: &Config,
    catalog: &Catalog,
    upstream: &UpstreamInfo,
    now: OffsetDateTime,
    window: &Window,
    tokenizer: &Tokenizer,
) -> anyhow::Result<Report> {
    let span = window.span(now);
    let working_set = store.report_working_set()?;
    let names: Vec<String> = working_set.iter().map(|w| w.tool.clone()).collect();
    let chosen = choose(catalog, &names, config);
    let intervals = report::hit_rate::listed_intervals(
        &store.report_transitions()?,
        &working_set,
        &config.pins,
        &span,
    );
    let mut agg = report::aggregate::Aggregate::new(&intervals);
    // With a team database, this user's calls on every machine (what promotion learns from).
    let team = crate::team::ship::scan_for_report(config, store, &span, |c| agg.add(c));
    let from_team = team.unwrap_or_else(|e| {
        eprintln!(
            "mws report: warning: {}; reporting this machine's calls only",
            crate::term::Safe(&e.0)
        );
        false
    });
    if !from_team {
        // Whatever a failed read of the team database added is dropped.
        agg = report::aggregate::Aggregate::new(&intervals);
        store.report_scan_calls(&span, |c| agg.add(c))?;
    }
    let scan = agg.finish();
    let mut wanted: HashSet<&str> = scan.tools.iter().map(|u| u.tool.as_str()).collect();
    wanted.extend(names.iter().map(String::as_str));
    let wanted: Vec<&str> = wanted.into_iter().collect();
    let last_success = store.report_last_success(&wanted)?;
    let semantic_ranking = crate::doctor::semantic::check(config).map(|c| match c.status {
        crate::doctor::Status::Ok => c.summary,
        _ => format!("{}; search ranks by keywords only", c.summary),
    });
    let report = report::compute(&Inputs {
        now,
        window,
        tokenizer,
        catalog,
        listed: &chosen.tools,
        mode: &chosen.mode,
        pins: &config.pins,
        working_set: &working_set,
        usage: &scan.tools,
        last_success: &last_success,
        clients: &scan.clients,
        sessions: scan.sessions,
        searches: &store.report_searches(&span)?,
        hits: scan.hits,
        refused: &store.report_refused(&span)?,
        policy_hidden: crate::listed::hidden_by_policy(catalog, config),
        upstream,
        semantic_ranking,
        projects: &store.report_projects(&span)?,
        per_project: config.promote.per_project,
    });
    Ok(report)
}
