//! `mws what-if`: load the recorded calls once, build the grid (`whatif::grid`), replay every
//! setting (`whatif::replay`), print the table, `--json` or write `--svg`. Glue: the replay,
//! the grid and the rendering are in `crate::whatif`.

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;

use anyhow::Context;
use time::OffsetDateTime;

use super::{CmdResult, UsageError, load_config};
use crate::catalog::Catalog;
use crate::cli::WhatIfArgs;
use crate::config::Config;
use crate::report::{Tokenizer, TokenizerKind, Window, tokens};
use crate::server::tools_list::listed_tools;
use crate::store::Store;
use crate::whatif::grid::{self, Axes};
use crate::whatif::render::{self, WhatIf};
use crate::whatif::{
    self, Figures, HistoryBuilder, ProjectFigures, ProjectHistoryBuilder, Setting, World,
};
use crate::{clock, probe};

pub fn run(flag: Option<&Path>, args: WhatIfArgs) -> CmdResult {
    let window = Window::parse(&args.since).map_err(UsageError)?;
    let kind: TokenizerKind = args.tokenizer.parse().map_err(UsageError)?;
    let config = load_config(flag)?.config;
    super::say_if_past_horizon("mws what-if", &config, &window);
    let settings = grid::settings(
        &config.promote,
        &Axes {
            min_sessions: args.min_sessions.as_deref(),
            min_calls: args.min_calls.as_deref(),
            window_days: args.window_days.as_deref(),
            keep_days: args.keep_days.as_deref(),
        },
    )
    .map_err(UsageError)?;
    let now = clock::now();
    let store = Store::open(&config.db_path()).map_err(|e| {
        anyhow::anyhow!("cannot open the database (`mws doctor` says how to fix it): {e}")
    })?;
    let p = probe::for_command(&config)?;
    let catalog = p.usable(&config).ok().map(|c| c.as_ref().clone());
    if catalog.is_none() {
        eprintln!(
            "mws what-if: no upstream catalog: token figures are unknown, nothing is dropped"
        );
    }
    let tok = Tokenizer::load(kind);
    let mut figures = gather(
        &store,
        &config,
        catalog.as_ref(),
        now,
        &window,
        &tok,
        &settings,
    )?;
    // The replay's nights run at midnight: a `mws promote` now also counts today's calls, pin
    // files, the team's priors and the working set it holds. The current setting ends with
    // what that run lists, so that the two never disagree.
    let now_listed =
        super::promote::decide_now(&config, &store, catalog.as_ref(), now, false)?.outcome;
    let names: Vec<String> = now_listed.listing.iter().map(|l| l.tool.clone()).collect();
    if let Some(f) = figures.iter_mut().find(|f| f.current) {
        f.end_listed_tools = names.len();
        f.end_listed_tokens = catalog
            .as_ref()
            .map(|c| tokens::list_size(&tok, &listed_tools(c, &names, &config)).tokens);
    }
    let recommended = grid::recommend(&figures);
    let span = window.span(now);
    let mut projects = gather_projects(&store, &config, catalog.as_ref(), now, &window, &tok)?;
    if let Some(p) = projects.as_mut() {
        p.compare(&figures);
    }
    let w = WhatIf {
        since: &span.since,
        until: &span.until,
        tokenizer: kind.encoding(),
        settings: &figures,
        recommended: recommended.as_ref(),
        projects: projects.as_ref(),
    };
    if let Some(path) = &args.svg {
        let svg = render::svg(&w).map_err(anyhow::Error::msg)?;
        std::fs::write(path, svg).with_context(|| format!("{}: cannot write", path.display()))?;
        eprintln!("mws what-if: wrote {}", crate::term::path(path));
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", crate::term::json_pretty(&w)?)?;
    } else {
        out.write_all(render::table(&w).as_bytes())?;
    }
    out.flush()?;
    Ok(0)
}

/// Replays this machine's calls under the config's setting with and without working sets per
/// project (`whatif::replay_projects`). `None` when no call has a readable time.
pub fn gather_projects(
    store: &Store,
    config: &Config,
    catalog: Option<&Catalog>,
    now: OffsetDateTime,
    window: &Window,
    tokenizer: &Tokenizer,
) -> anyhow::Result<Option<ProjectFigures>> {
    let span = window.span(now);
    let mut b = ProjectHistoryBuilder::new(&span.since, &span.until);
    store.whatif_scan_project_calls(|ts, tool, session, project, ok| {
        b.add(ts, tool, session, project, ok);
    })?;
    let names: Option<HashSet<String>> = catalog.map(|c| c.names().map(str::to_string).collect());
    let mut count = |ws: &[String]| {
        catalog.map(|c| tokens::list_size(tokenizer, &listed_tools(c, ws, config)).tokens)
    };
    let rules = crate::config::Promote {
        per_project: true,
        ..config.promote.clone()
    };
    Ok(whatif::replay_projects(
        b,
        &rules,
        &mut World {
            pins: &config.pins,
            catalog: names.as_ref(),
            tokens: &mut count,
            since: &span.since,
        },
    ))
}

/// Loads every call from `store` and replays `settings`, measuring the window ending at `now`.
/// Tokens are of the `tools/list` the proxy would send (`None` without a catalog).
pub fn gather(
    store: &Store,
    config: &Config,
    catalog: Option<&Catalog>,
    now: OffsetDateTime,
    window: &Window,
    tokenizer: &Tokenizer,
    settings: &[Setting],
) -> anyhow::Result<Vec<Figures>> {
    let span = window.span(now);
    let mut b = HistoryBuilder::new(&span.since, &span.until);
    let mut skipped = 0u64;
    let mut add = |b: &mut HistoryBuilder, ts: &str, tool: &str, session: &str, ok: bool| {
        if !b.add(ts, tool, session, ok) {
            skipped += 1;
        }
    };
    // With a team database, the history promotion reads: this user's calls on every machine.
    let team = crate::team::ship::scan_for_whatif(config, store, |ts, tool, session, ok| {
        add(&mut b, ts, tool, session, ok)
    });
    let from_team = team.unwrap_or_else(|e| {
        eprintln!(
            "mws what-if: warning: {}; replaying this machine's history only",
            crate::term::Safe(&e.0)
        );
        false
    });
    if !from_team {
        // Whatever a failed read of the team database added is dropped.
        b = HistoryBuilder::new(&span.since, &span.until);
        store.whatif_scan_calls(|ts, tool, session, ok| add(&mut b, ts, tool, session, ok))?;
    }
    if skipped > 0 {
        tracing::warn!("what-if: {skipped} call(s) with an unreadable time skipped");
    }
    let history = b.finish();
    if history.is_empty() {
        anyhow::bail!(
            "no calls recorded in {}: nothing to replay (`mws serve` records calls, `mws ingest` \
             reads transcripts)",
            config.db_path().display()
        );
    }
    let names: Option<HashSet<String>> = catalog.map(|c| c.names().map(str::to_string).collect());
    let mut count = |ws: &[String]| {
        catalog.map(|c| tokens::list_size(tokenizer, &listed_tools(c, ws, config)).tokens)
    };
    Ok(whatif::replay(
        &history,
        settings,
        &mut World {
            pins: &config.pins,
            catalog: names.as_ref(),
            tokens: &mut count,
            since: &span.since,
        },
    ))
}
