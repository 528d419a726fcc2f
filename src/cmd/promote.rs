//! `mws promote [--dry-run] [--json] [--no-ingest]`: ingest, find the catalog for the reality
//! check (`probe::for_command`; none skips the check), read front-matter pins, decide
//! (`crate::promote`), print the table, and — unless `--dry-run` — write the run (the
//! `working_set` table) and its `working-set.json` export in one transaction.

use std::collections::{HashMap, HashSet};
use std::io::{IsTerminal, Write};
use std::path::Path;

use anyhow::Context;
use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use serde_json::json;

use super::{CmdResult, load_config};
use crate::catalog::Catalog;
use crate::cli::PromoteArgs;
use crate::config::Config;
use crate::promote::projects::ProjectOutcome;
use crate::promote::{self, Inputs, Outcome, Why, pin_files};
use crate::store::{PromotionRecord, Store};
use crate::term::{self, Safe, safe};
use crate::{clock, ingest, private_file, probe};

pub fn run(flag: Option<&Path>, args: PromoteArgs) -> CmdResult {
    let config = load_config(flag)?.config;
    let mut store = Store::open(&config.db_path())?;
    if args.dry_run {
        eprintln!("mws promote: dry run: ingest skipped, nothing written");
    } else if !args.no_ingest {
        let progress = std::io::stderr().is_terminal() && !args.json;
        let s = ingest::ingest_all(&config, &mut store, progress).context("ingest")?;
        eprintln!(
            "mws promote: ingest: {} file(s), {} new call(s), {} duplicate(s), {} skipped line(s)",
            s.files, s.new_calls, s.duplicates, s.skipped_lines
        );
        for (path, message) in &s.errors {
            eprintln!("mws promote: ingest: {}: {}", Safe(path), Safe(message));
        }
    }
    if !args.dry_run {
        super::adopt_history(&config, &mut store, "mws promote")?;
    }
    let (catalog, source) = reality_catalog(&config);
    let now_t = clock::now();
    let now = clock::fmt(now_t);
    let decided = decide_now(&config, &store, catalog.as_ref(), now_t, !args.dry_run)?;
    let outcome = &decided.outcome;

    if outcome.decisions.is_empty() {
        eprintln!(
            "mws promote: no calls in the last {} days and no pins: nothing to list yet",
            config.promote.window_days
        );
    }
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(
            out,
            "{}",
            crate::term::json_pretty(&as_json(outcome, &decided.projects))?
        )?;
    } else {
        writeln!(out, "{}", table(outcome))?;
        for p in decided
            .projects
            .iter()
            .filter(|p| !p.outcome.listing.is_empty())
        {
            writeln!(out, "project {}:", safe(&p.project))?;
            writeln!(out, "{}", table(&p.outcome))?;
        }
    }
    out.flush()?;
    if args.dry_run {
        return Ok(0);
    }

    write(
        &config,
        &mut store,
        &decided,
        catalog.as_ref(),
        source,
        &now,
    )?;
    let projects = decided
        .projects
        .iter()
        .filter(|p| !p.outcome.listing.is_empty())
        .count();
    eprintln!(
        "mws promote: {} tool(s) listed; {projects} project(s) with tools of their own; wrote {}",
        outcome.listing.len(),
        term::path(&config.working_set_path())
    );
    retain(&config, &mut store, now_t, "mws promote")?;
    Ok(0)
}

/// Applies `historyDays` after a real run (docs/database.md#what-is-kept-and-for-how-long): this
/// machine's history older than the cutoff is summed and removed (`Store::retain`), then this
/// user's rows on the team database. Says on stderr what went, prefixed with `who`. A team
/// database that does not answer is a warning: its old rows go at a later run.
pub fn retain(
    config: &Config,
    store: &mut Store,
    now_t: time::OffsetDateTime,
    who: &str,
) -> anyhow::Result<()> {
    let Some(cutoff) = crate::config::history::cutoff(config.history_days(), now_t) else {
        return Ok(());
    };
    let r = store.retain(&cutoff).context("history")?;
    let mb = |b: u64| b as f64 / 1_048_576.0;
    if !r.is_empty() {
        eprintln!(
            "{who}: history: removed what is older than {} days (historyDays): {} call(s) \
             (summed per day in call_days), {} search(es), {} script run(s), {} session(s), {} \
             promotion run(s); {:.1} MB given back to the file system",
            config.history_days(),
            r.calls,
            r.searches,
            r.script_runs,
            r.sessions,
            r.promotion_runs,
            mb(r.bytes_returned)
        );
    }
    if r.bytes_free >= MENTION_FREE_BYTES && !store.returns_free_pages()? {
        eprintln!(
            "{who}: history: {:.1} MB of free pages stay inside state.db for new rows; to shrink \
             the file, stop mws and run `sqlite3 {} 'PRAGMA auto_vacuum = INCREMENTAL; VACUUM'` \
             once (docs/database.md#what-is-kept-and-for-how-long)",
            mb(r.bytes_free),
            term::path(store.path())
        );
    }
    match crate::team::retention::retain(config, &cutoff) {
        Ok(Some(n)) if n > 0 => {
            eprintln!("{who}: history: removed {n} call(s) of yours from the team database")
        }
        Ok(_) => {}
        Err(e) => eprintln!(
            "{who}: warning: {}; the team database keeps its old rows until a later run",
            Safe(&e.0)
        ),
    }
    Ok(())
}

/// Free pages inside a file that cannot give them back, in bytes, from which `retain` says how
/// to convert the file. Raising it mentions the conversion to fewer users.
const MENTION_FREE_BYTES: u64 = 64 << 20;

/// What one promotion decided, ready for `write`.
pub struct Decided {
    /// The user-wide decision table and working set.
    pub outcome: Outcome,
    /// The front-matter pins seen: `(tool, file)`.
    pub declared_seen: Vec<(String, String)>,
    /// Each project's decisions and listing (empty with `promote.perProject` off).
    pub projects: Vec<ProjectOutcome>,
    /// How many projects used each tool in the window or list it.
    pub projects_per_tool: HashMap<String, u32>,
}

/// One promotion as `mws promote` and `mws serve`'s schedule run it: front-matter pins scanned
/// (warnings on stderr), the sums (from the team database when there is one, after shipping
/// what waits unless `ship` is false; else, or when it does not answer, from state.db),
/// `promote::decide`, then each project's own decision from this machine's calls
/// (`promote::projects`).
pub fn decide_now(
    config: &Config,
    store: &Store,
    catalog: Option<&Catalog>,
    now_t: time::OffsetDateTime,
    ship: bool,
) -> anyhow::Result<Decided> {
    let (declared_seen, warnings) = pin_files::scan(&config.pin_files);
    for w in warnings {
        eprintln!("mws promote: pinFiles: {}", Safe(&w));
    }
    let now = clock::fmt(now_t);
    let before = store.working_set()?;
    let mut also: Vec<&str> = before.iter().map(|l| l.tool.as_str()).collect();
    also.extend(config.pins.iter().map(String::as_str));
    also.extend(declared_seen.iter().map(|(t, _)| t.as_str()));
    let window = promote::cutoff(now_t, config.promote.window_days);
    let (usage, team) = match crate::team::ship::for_promotion(config, store, &window, &also, ship)
    {
        Ok(Some(t)) => (t.usage, t.priors),
        Ok(None) => (store.usage(&window, &also)?, Vec::new()),
        Err(e) => {
            eprintln!(
                "mws promote: warning: {}; promoting from this machine's history only, without \
                 team priors",
                Safe(&e.0)
            );
            (store.usage(&window, &also)?, Vec::new())
        }
    };
    let declared = store.declared(&declared_seen, &now)?;
    let names: Option<HashSet<String>> = catalog.map(|c| c.names().map(str::to_string).collect());
    let outcome = promote::decide(&Inputs {
        now: now_t,
        rules: &config.promote,
        pins: &config.pins,
        declared: &declared,
        before: &before,
        usage: &usage,
        catalog: names.as_ref(),
        team: &team,
    });
    let before_projects = store.project_sets()?;
    let project_usage = store.project_usage(&window, &before_projects)?;
    let projects = if config.promote.per_project {
        promote::projects::decide_projects(
            now_t,
            &config.promote,
            &before_projects,
            &project_usage,
            names.as_ref(),
        )
    } else {
        Vec::new()
    };
    let projects_per_tool = crate::store::projects::projects_per_tool(&project_usage, &projects);
    Ok(Decided {
        outcome,
        declared_seen,
        projects,
        projects_per_tool,
    })
}

/// Writes a run (the `working_set` table and the rest) and its `working-set.json` export.
pub fn write(
    config: &Config,
    store: &mut Store,
    decided: &Decided,
    catalog: Option<&Catalog>,
    source: &str,
    now: &str,
) -> anyhow::Result<()> {
    let path = config.working_set_path();
    let export = export(&decided.outcome, now);
    let rec = PromotionRecord {
        now,
        catalog_source: source,
        outcome: &decided.outcome,
        declared: &decided.declared_seen,
        catalog,
        projects: &decided.projects,
        projects_per_tool: &decided.projects_per_tool,
    };
    // Written and synced before the database commits, put in place after; dropped (the temp
    // file removed) when the commit fails.
    let mut pending = None;
    store.write_promotion(&rec, || {
        pending = Some(private_file::prepare(&path, export.as_bytes())?);
        Ok(())
    })?;
    if let Some(p) = pending {
        p.commit()
            .with_context(|| format!("{}: cannot replace", path.display()))?;
    }
    Ok(())
}

/// The catalog for the reality check and where it came from: the catalog a command uses
/// (`probe::for_command`), else none (a warning; nothing is dropped).
fn reality_catalog(config: &Config) -> (Option<Catalog>, &'static str) {
    let p = match probe::for_command(config) {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "mws promote: warning: cannot ask the upstream: {}; the reality check is skipped \
                 (no tool is dropped)",
                Safe(&format!("{e:#}"))
            );
            return (None, "skipped");
        }
    };
    // An empty list is treated as no list: dropping every tool on one bad answer is worse than
    // skipping the check once.
    match p.usable(config) {
        Ok(c) => (Some(c.as_ref().clone()), p.catalog_source),
        Err(e) => {
            eprintln!(
                "mws promote: warning: {}; the reality check is skipped (no tool is dropped)",
                Safe(&e.to_string())
            );
            (None, "skipped")
        }
    }
}

/// The user-wide rows (`"project": null`), then each project's rows under its path.
fn as_json(o: &Outcome, projects: &[ProjectOutcome]) -> serde_json::Value {
    let user = o.decisions.iter().map(|d| (None, d));
    let each = projects
        .iter()
        .flat_map(|p| p.outcome.decisions.iter().map(|d| (Some(&p.project), d)));
    user.chain(each)
        .map(|(project, d)| {
            json!({
                "tool": d.tool,
                "project": project,
                "before": d.before,
                "after": d.after,
                "reason": d.reason(),
                "sessions": d.sessions,
                "calls": d.calls,
                "lastSuccess": d.last_success,
            })
        })
        .collect()
}

fn table(o: &Outcome) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header([
        "tool",
        "sessions",
        "calls",
        "last success",
        "listed",
        "reason",
    ]);
    let yn = |b: bool| if b { "yes" } else { "no" };
    for d in &o.decisions {
        let last = d
            .last_success
            .as_deref()
            .map_or("-", |s| s.get(..10).unwrap_or(s));
        // Tool names, dates and pin-file paths come from outside: shown with controls escaped.
        t.add_row([
            safe(&d.tool).into_owned(),
            d.sessions.to_string(),
            d.calls.to_string(),
            safe(last).into_owned(),
            format!("{} → {}", yn(d.before), yn(d.after)),
            safe(&d.reason()).into_owned(),
        ]);
    }
    t
}

/// `working-set.json`: `{"generatedAt", "tools": [listing order], "pins": [listed pins]}`.
fn export(o: &Outcome, now: &str) -> String {
    let tools: Vec<&str> = o.listing.iter().map(|l| l.tool.as_str()).collect();
    let pins: Vec<&str> = o
        .listing
        .iter()
        .filter(|l| matches!(l.why, Why::Pin | Why::PinFile))
        .map(|l| l.tool.as_str())
        .collect();
    let v = json!({"generatedAt": now, "tools": tools, "pins": pins});
    format!(
        "{}\n",
        serde_json::to_string_pretty(&v).expect("serializes")
    )
}
