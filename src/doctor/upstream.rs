//! The upstream check of `mws doctor` with a single `upstream`: it answers (through the same
//! client the proxy uses), in which era, what clients are shown of its catalog, and the tool names
//! clients would reject. Must not write anything.

use std::path::Path;

use super::Check;
use crate::catalog::{Catalog, exposed};
use crate::config::{Config, Upstream};
use crate::{listed, probe};

/// The upstream answers (through the same client the proxy uses), and in which era.
pub fn check(config: &Config, config_path: &Path) -> Check {
    let target = probe::target(config);
    let cfg = config_path.display();
    let p = match probe::for_command(config) {
        Ok(p) => p,
        Err(e) => {
            return Check::fail(
                "upstream",
                format!("{target}: could not be asked: {e}"),
                "run `MWS_LOG=debug mws doctor` to see why",
            );
        }
    };
    let s = &p.status;
    if let Some(e) = &s.list_error {
        return Check::fail(
            "upstream",
            format!("{target}: answers, but its tool list cannot be used"),
            "fix the upstream server's tools/list answer",
        )
        .detail(e.clone());
    }
    if s.reachable {
        let era = s.era.map(|e| e.as_str()).unwrap_or("era unknown");
        let server = s
            .server_info
            .as_ref()
            .map(|i| {
                let field = |k: &str| i.get(k).and_then(|v| v.as_str()).unwrap_or("");
                format!(", server {} {}", field("name"), field("version"))
                    .trim_end()
                    .to_string()
            })
            .unwrap_or_default();
        let summary = format!(
            "{target}: reachable, {era}{server}, {} tools",
            p.catalog.len()
        );
        let listing = listing(config, &p.catalog);
        let long = too_long(config, &p.catalog);
        return match p.catalog.rejected() {
            [] if !long.is_empty() => Check::warn(
                "upstream",
                format!(
                    "{summary}; {} name(s) too long for Claude's and OpenAI's APIs",
                    long.len()
                ),
                format!(
                    "move the upstream into \"servers\" in {cfg} (mws shortens such names there), \
                     or choose a shorter \"serverName\""
                ),
            )
            .details(long)
            .details(listing),
            [] => Check::ok("upstream", summary).details(listing),
            left_out => left_out
                .iter()
                .fold(
                    Check::warn(
                        "upstream",
                        format!(
                            "{summary}; {} left out because clients would reject them",
                            left_out.len()
                        ),
                        "fix these tool definitions in the upstream server",
                    ),
                    |c, (name, why)| c.detail(format!("{name}: {why}")),
                )
                .details(listing),
        };
    }
    let fix = match &config.upstream {
        Upstream::Http(_) => format!(
            "start the upstream MCP server, or set \"upstream\": {{\"url\": ...}} in {cfg} to where it listens"
        ),
        Upstream::Stdio(_) => {
            format!("run `{target}` in a shell to see why it fails, or fix \"upstream\" in {cfg}")
        }
    };
    let mut c = Check::fail("upstream", format!("{target}: not reachable"), fix);
    if let Some(e) = &s.last_error {
        c = c.detail(e.clone());
    }
    if s.needs_login
        && let Upstream::Http(h) = &config.upstream
    {
        let sent = crate::auth::store::load(&config.state_dir, &h.url).is_some()
            || super::servers::has_authorization(h);
        c = super::servers::refused(c, sent, crate::upstream::LOGIN_NAME);
    }
    match p.catalog_source {
        "catalog.json" => c
            .detail(format!(
                "meanwhile the proxy serves the last good catalog from catalog.json ({} tools)",
                p.catalog.len()
            ))
            .details(listing(config, &p.catalog)),
        _ => c.detail("with no catalog.json either, clients see only search_tools and call_tool"),
    }
}

/// A single upstream's tools whose names pass the clients' 64-character limit once the client adds
/// `mcp__<serverName>__` (with `servers`, `catalog::exposed` shortens them instead).
fn too_long(config: &Config, catalog: &Catalog) -> Vec<String> {
    let budget = exposed::name_budget(&config.server_name);
    catalog
        .names()
        .filter(|n| n.len() > budget)
        .map(|n| {
            format!(
                "tool \"{n}\" is {} characters with the client's mcp__{}__ (limit {})",
                "mcp__".len() + config.server_name.len() + exposed::SEPARATOR.len() + n.len(),
                config.server_name,
                exposed::CLIENT_NAME_LIMIT
            )
        })
        .collect()
}

/// How many tools `tools/list` shows with this catalog (`listed`, over the stored working set),
/// then what the policy hides and which schemas cannot be checked (`doctor::safety`).
fn listing(config: &Config, catalog: &Catalog) -> Vec<String> {
    let listed = match listed::stored_working_set(config) {
        Ok(ws) => match crate::server::tools_list::choose(catalog, &ws, config) {
            c if c.mode.all => format!(
                "clients see all {} tools and no meta-tools ({})",
                c.names.len(),
                c.mode.why
            ),
            c => format!(
                "clients see search_tools, call_tool and {} listed tool(s) (working set and pins; {})",
                c.names.len(),
                c.mode.why
            ),
        },
        Err(e) => format!("the working set cannot be read ({e}): clients see the pins only"),
    };
    let mut lines = vec![listed];
    lines.extend(crate::doctor::safety::details(config, catalog));
    lines
}
