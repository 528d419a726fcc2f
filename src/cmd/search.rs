//! `mws search [--catalog FILE] [--json] [--limit N] [--explain] QUERY`: runs `search_tools`
//! (or, with `--eval GOLD.jsonl`, scores every query of a gold file: `search::eval`)
//! against a catalog file, else the catalog a command uses (`probe::for_command`), marks the
//! tools the proxy lists (`listed`), and prints the reply (human text, or `--json` exactly as
//! `search_tools` returns it).

use std::collections::HashSet;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use super::{CmdResult, UsageError, load_config};
use crate::catalog::Catalog;
use crate::cli::SearchArgs;
use crate::config::Config;
use crate::config::search::Semantic as SemanticConfig;
use crate::embed::Embedder;
use crate::search::semantic::{Fusion, Semantic, Vectors};
use crate::search::{
    FIELDS, Prior, QueryOptions, Reply, SearchIndex, SearchOptions, check_query, eval,
};
use crate::server::meta_tools;
use crate::term::Safe;
use crate::{listed, probe};

pub fn run(config: Option<&Path>, args: SearchArgs) -> CmdResult {
    let loaded = load_config(config)?;
    let cfg = &loaded.config;
    if args.limit == Some(0) {
        return Err(UsageError("--limit must be at least 1".into()).into());
    }
    let query = args.query.join(" ");
    if args.eval.is_some() && !query.is_empty() {
        return Err(UsageError(
            "--eval reads its queries from the gold file; drop the query".into(),
        )
        .into());
    }
    let gold = match &args.eval {
        Some(path) => Some(read_gold(path)?),
        None => None,
    };
    if let Err(e) = check_query(&query) {
        return Err(UsageError(e.to_string()).into());
    }
    let catalog = match &args.catalog {
        Some(path) => Arc::new(Catalog::load_file(path)?),
        None => command_catalog(cfg)?,
    };
    let options = SearchOptions {
        aliases: cfg.search_aliases.clone(),
        backend_hints: cfg.backend_hints.clone(),
        purposes: cfg.server_purposes(),
    };
    let listed = listed_names(cfg, &catalog);
    // Upstream tools named like a meta-tool under the names `search_tools` shows them by.
    let catalog = meta_tools::exposed_catalog(&listed::searchable(&catalog, cfg));
    let index = SearchIndex::build_shared(catalog, &options);
    let prior = if args.no_prior {
        Prior::default()
    } else {
        listed::stored_prior(cfg).unwrap_or_else(|e| {
            eprintln!(
                "mws search: warning: cannot read the usage prior: {}",
                Safe(&e.to_string())
            );
            Prior::default()
        })
    };
    let opts = QueryOptions {
        limit: args.limit,
        explain: args.explain,
        variant: None,
        prior: Some(&prior),
        semantic: None,
        always_answer: args.always_answer,
        // As `search_tools` answers: a script's signature with each schema result in code mode.
        script: cfg.code_mode.enabled,
    };
    let fusion = match args.fusion.as_deref() {
        None | Some("sum") => Fusion::Sum,
        Some("rrf") => Fusion::Rrf,
        Some(other) => {
            return Err(UsageError(format!("--fusion {other}: expected rrf or sum")).into());
        }
    };
    let semantic = match &args.model {
        Some(dir) => Some(SemanticConfig::Local {
            dir: crate::config::expand_tilde(dir),
        }),
        None if args.keywords => None,
        None => cfg.search.semantic.clone(),
    };
    let model = semantic.and_then(|s| load_model(&s, &index, cfg));
    if let Some(gold) = gold {
        let embed_query = |q: &str| {
            let (m, _) = model.as_ref()?;
            m.embed(&[q]).ok()?.pop()
        };
        let vectors = model
            .as_ref()
            .map(|(_, v)| (v, &embed_query as eval::QueryVector<'_>, fusion));
        let report = eval::evaluate(&index, &gold, &opts, vectors);
        let mut out = std::io::stdout().lock();
        if args.json {
            writeln!(out, "{}", serde_json::to_string(&report)?)?;
        } else {
            write_eval(&mut out, &report)?;
        }
        return Ok(0);
    }
    // With every tool's vector from the cache, the query is the model's first use: its failure
    // is said as a failed catalog embedding would be.
    let qv = model.as_ref().and_then(|(m, _)| {
        m.embed(&[crate::search::typed_query(&query).as_ref()])
            .map_err(|e| {
                eprintln!(
                    "mws search: warning: ranking by keywords only: {}",
                    Safe(&e.to_string())
                )
            })
            .ok()?
            .pop()
    });
    let opts = QueryOptions {
        semantic: match (&model, &qv) {
            (Some((_, vectors)), Some(q)) => Some(Semantic {
                vectors,
                query: q,
                fusion,
            }),
            _ => None,
        },
        ..opts
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

/// The configured embedder and the catalog's vectors, or `None` (keyword ranking) with the
/// reason on stderr. The vectors come from the cache in `state.db` that `mws serve` fills too
/// (keyed by model and tool text, whatever catalog the tool came from); only the tools it lacks
/// are embedded, and written back.
fn load_model(
    semantic: &SemanticConfig,
    index: &SearchIndex,
    config: &Config,
) -> Option<(Embedder, Vectors)> {
    let warn = |e: &dyn std::fmt::Display| {
        eprintln!(
            "mws search: warning: ranking by keywords only: {}",
            Safe(&e.to_string())
        );
    };
    let model = Embedder::open(semantic).map_err(|e| warn(&e)).ok()?;
    let start = std::time::Instant::now();
    let (vectors, done) = crate::server::embedding::catalog_vectors(&model, index, config)
        .map_err(|e| warn(&e))
        .ok()?;
    if done.computed > 0 {
        eprintln!(
            "mws search: embedded {} tools in {:.1} s ({} from the cache)",
            done.computed,
            start.elapsed().as_secs_f64(),
            done.cached
        );
    }
    Some((model, vectors))
}

/// The gold file's queries, or an error naming the file and line.
fn read_gold(path: &Path) -> anyhow::Result<Vec<eval::Gold>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("cannot read the gold file {}: {e}", path.display()))?;
    let gold = eval::parse_gold(&text).map_err(|e| {
        UsageError(format!(
            "gold file {}:{}: {}",
            path.display(),
            e.line,
            e.reason
        ))
    })?;
    if gold.is_empty() {
        return Err(UsageError(format!("gold file {} has no queries", path.display())).into());
    }
    Ok(gold)
}

fn write_eval(out: &mut impl Write, r: &eval::EvalReport) -> std::io::Result<()> {
    for m in &r.misses {
        let what = match m.rank {
            _ if m.expected.is_empty() => "answered, want nothing".to_string(),
            Some(k) => format!("rank {k}, want {}", Safe(&m.expected.join(" | "))),
            None => format!(
                "not in the top {}, want {}",
                eval::EVAL_DEPTH,
                Safe(&m.expected.join(" | "))
            ),
        };
        writeln!(
            out,
            "miss {}: {what}; got [{}]",
            Safe(&format!("{:?}", m.query)),
            Safe(&m.got.join(", "))
        )?;
    }
    for u in &r.unknown {
        writeln!(
            out,
            "warning: expected tool {} is not in the catalog",
            Safe(u)
        )?;
    }
    writeln!(
        out,
        "queries {}: {} with expected tools, {} negatives",
        r.queries, r.positives, r.negatives
    )?;
    writeln!(
        out,
        "top-1 {:.1}%  top-3 {:.1}%  MRR@{} {:.3}  answered with nothing: {} of {}  marked weak: {}",
        r.top1 * 100.0,
        r.top3 * 100.0,
        eval::EVAL_DEPTH,
        r.mrr,
        r.positives_empty,
        r.positives,
        r.positives_weak
    )?;
    writeln!(
        out,
        "negatives answered with nothing: {} of {}  with nothing or marked weak: {}",
        r.negatives_empty, r.negatives, r.negatives_weak
    )
}

/// The catalog a command uses, or the error a user reads when there is none.
fn command_catalog(cfg: &Config) -> anyhow::Result<Arc<Catalog>> {
    let p = probe::for_command(cfg)?;
    match p.usable(cfg) {
        Ok(c) => Ok(c.clone()),
        Err(e) => anyhow::bail!("{e}; pass --catalog FILE, or see `mws doctor`"),
    }
}

/// The tools the proxy lists from `catalog` (the upstream's), by the names `search_tools` shows:
/// the same rule and working set as `mws serve` (`listed`). A database that cannot be read is
/// said on stderr and marks nothing, as the proxy then lists only the meta-tools and pins.
fn listed_names(cfg: &Config, catalog: &Catalog) -> HashSet<String> {
    let working_set = listed::stored_working_set(cfg).unwrap_or_else(|e| {
        eprintln!(
            "mws search: warning: cannot read the working set: {}",
            Safe(&e.to_string())
        );
        Vec::new()
    });
    crate::server::tools_list::choose(catalog, &working_set, cfg)
        .names
        .into_iter()
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
        "    score {:.3} = {:.3} × name bonus {:.2}{}{}{}; confidence {:.2} (weak below {:.2}{})",
        e.score * e.prior * e.server.as_ref().map_or(1.0, |s| s.factor),
        e.base,
        e.name_bonus,
        match &e.values {
            Some(v) => format!(" × takes {} {:.2}", v.kinds.join(" and "), v.factor),
            None => String::new(),
        },
        match &e.server {
            Some(s) => format!(
                " × server {} {:.2} ({})",
                Safe(&s.backend),
                s.factor,
                Safe(&s.words.join(", "))
            ),
            None => String::new(),
        },
        if e.prior > 1.0 {
            format!(" × usage prior {:.2}", e.prior)
        } else {
            String::new()
        },
        e.confidence,
        e.min_confidence,
        if e.only_synonyms {
            "; as the best, weak anyway: it matches by synonyms only, and a word of the request \
             is in no tool"
        } else {
            ""
        }
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
