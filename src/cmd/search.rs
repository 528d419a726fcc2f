//! `mws search [--catalog FILE] [--json] [--limit N] [--explain] QUERY`: runs `search_tools`
//! against a catalog file, else the live upstream's catalog, else the last-good `catalog.json`,
//! and prints the reply (human text, or `--json` exactly as `search_tools` returns it).

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::Context;
use serde_json::Value;

use super::{CmdResult, UsageError, load_config};
use crate::catalog::Catalog;
use crate::cli::SearchArgs;
use crate::config::Config;
use crate::search::{FIELDS, QueryOptions, Reply, SearchIndex, SearchOptions, check_query};
use crate::server::meta_tools;
use crate::term::Safe;

pub fn run(config: Option<&Path>, args: SearchArgs) -> CmdResult {
    let loaded = load_config(config)?;
    let cfg = &loaded.config;
    if args.limit == Some(0) {
        return Err(UsageError("--limit must be at least 1".into()).into());
    }
    let query = args.query.join(" ");
    if let Err(e) = check_query(&query) {
        return Err(UsageError(e.to_string()).into());
    }
    let catalog = match &args.catalog {
        Some(path) => Catalog::load_file(path)?,
        None => live_or_stored(cfg)?,
    };
    let options = SearchOptions {
        aliases: cfg.search_aliases.clone(),
        backend_hints: cfg.backend_hints.clone(),
    };
    // Upstream tools named like a meta-tool under the names `search_tools` shows them by.
    let catalog = meta_tools::exposed_catalog(&Arc::new(catalog));
    let listed = listed_names(cfg, &catalog);
    let index = SearchIndex::build_shared(catalog, &options);
    let opts = QueryOptions {
        limit: args.limit,
        explain: args.explain,
        variant: None,
    };
    let reply = index.search_with(&query, &listed, &opts);
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", reply.text)?;
        if args.explain {
            let mut err = std::io::stderr().lock();
            write_explain(&mut err, &reply)?;
        }
    } else {
        write_human(&mut out, &reply)?;
    }
    Ok(0)
}

/// The live upstream's catalog, else `stateDir/catalog.json`.
fn live_or_stored(cfg: &Config) -> anyhow::Result<Catalog> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime")?;
    let live = rt.block_on(async { crate::upstream::connect(cfg).catalog().await });
    if !live.catalog.is_empty() {
        return Ok((*live.catalog).clone());
    }
    let path = cfg.catalog_path();
    match Catalog::load_file(&path) {
        Ok(c) if !c.is_empty() => Ok(c),
        Ok(_) => anyhow::bail!(
            "no catalog: the upstream listed no tools and {} is empty; pass --catalog FILE",
            path.display()
        ),
        Err(e) if !path.exists() => anyhow::bail!(
            "no catalog: the upstream listed no tools and {} does not exist ({e}); pass --catalog FILE or check `mws doctor`",
            path.display()
        ),
        Err(e) => Err(e.into()),
    }
}

/// Names in `working-set.json`, if there is one (marks listed tools in the reply), as `catalog`
/// (the exposed one) names them.
fn listed_names(cfg: &Config, catalog: &Catalog) -> HashSet<String> {
    let Ok(text) = std::fs::read_to_string(cfg.working_set_path()) else {
        return HashSet::new();
    };
    let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    v.get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(|n| {
            if meta_tools::is_meta(n) && !catalog.contains(n) {
                format!("{}{n}", meta_tools::SHADOWED_PREFIX)
            } else {
                n.to_string()
            }
        })
        .collect()
}

fn write_human(out: &mut impl Write, reply: &Reply) -> std::io::Result<()> {
    let j = &reply.json;
    let results = j["results"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    let more = j.get("more").and_then(Value::as_u64).unwrap_or(0);
    let scope = j
        .get("backend")
        .and_then(Value::as_str)
        .map(|b| format!(" in {}", Safe(b)))
        .unwrap_or_default();
    writeln!(
        out,
        "{}{scope}: {} shown, {more} more, {} bytes",
        reply.mode,
        reply.result_count,
        reply.text.len()
    )?;
    if reply.mode == "catalog" {
        for g in results {
            let tools: Vec<&str> = g["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let label = g
                .get("label")
                .and_then(Value::as_str)
                .map(|l| format!(" ({})", Safe(l)))
                .unwrap_or_default();
            let extra = g
                .get("more")
                .and_then(Value::as_u64)
                .map(|m| format!(" … and {m} more"))
                .unwrap_or_default();
            writeln!(
                out,
                "{}{label}: {}{extra}",
                Safe(g["backend"].as_str().unwrap_or("")),
                Safe(&tools.join(" "))
            )?;
        }
        return Ok(());
    }
    for (i, r) in results.iter().enumerate() {
        let listed = if r["listed"] == Value::Bool(true) {
            "  [listed]"
        } else {
            ""
        };
        writeln!(
            out,
            "{:>2}. {}{listed}",
            i + 1,
            Safe(r["name"].as_str().unwrap_or(""))
        )?;
        let desc = r["description"].as_str().unwrap_or("");
        let first = desc.lines().next().unwrap_or("");
        writeln!(out, "    {}", Safe(&crate::search::trim_text(first, 160)))?;
        if let Some(c) = r.get("call_tool") {
            writeln!(out, "    call_tool {}", Safe(&c.to_string()))?;
        }
        if let Some(e) = reply.explain.get(i) {
            write_explain_one(out, e)?;
        }
    }
    if let Some(h) = j.get("hint").and_then(Value::as_str) {
        writeln!(out, "hint: {}", Safe(h))?;
    }
    Ok(())
}

fn write_explain(out: &mut impl Write, reply: &Reply) -> std::io::Result<()> {
    for e in &reply.explain {
        writeln!(out, "{}", Safe(&e.name))?;
        write_explain_one(out, e)?;
    }
    Ok(())
}

fn write_explain_one(out: &mut impl Write, e: &crate::search::Explain) -> std::io::Result<()> {
    writeln!(
        out,
        "    score {:.3} = {:.3} × name bonus {:.2}",
        e.score, e.base, e.name_bonus
    )?;
    for w in &e.words {
        let tf: Vec<String> = FIELDS
            .iter()
            .zip(w.tf)
            .filter(|(_, n)| *n > 0)
            .map(|(f, n)| format!("{f} {n}"))
            .collect();
        let via = if w.synonym {
            format!(" (synonym {})", Safe(&w.term))
        } else {
            String::new()
        };
        let others = if w.other_terms > 0.0 {
            format!(" (other terms +{:.3})", w.other_terms)
        } else {
            String::new()
        };
        writeln!(
            out,
            "      {}{via}: {} → tf~ {:.2}, idf {:.2}, score {:.3}{others}",
            Safe(&w.word),
            tf.join(", "),
            w.tf_combined,
            w.idf,
            w.score
        )?;
    }
    Ok(())
}
