//! `mws report --team`: the team's figures from the team database (calls, sessions and tools per
//! member and for the team, the tools nobody used), and what the team's listings cost in tokens
//! with and without mws, estimated from this machine's catalog and listing. Pure: the rows come
//! from `queries::team_rows`, the sizes from the personal report.

use serde::Serialize;

use super::queries::{Figures, TeamRows, ToolUse};
use crate::report::format::{num, pct};
use crate::term::safe;

/// One member's line.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Member {
    pub user: String,
    #[serde(flatten)]
    pub figures: Figures,
}

/// Tokens of the listings over the team's sessions.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingTokens {
    /// Every tool of this machine's catalog, as one `tools/list` costs.
    pub catalog_per_session: u64,
    /// What mws lists on this machine now.
    pub listed_per_session: u64,
    pub sessions: u64,
    pub without_mws: u64,
    pub with_mws: u64,
    pub saved: u64,
}

/// The team report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TeamReport {
    pub database: String,
    pub window: String,
    pub since: String,
    pub until: String,
    pub members: Vec<Member>,
    pub team: Figures,
    pub tools: Vec<ToolUse>,
    /// Tools of this machine's catalog no member called successfully in the window.
    pub unused: Vec<String>,
    pub tokens: ListingTokens,
    /// Members who keep themselves out of team figures: named, never counted.
    pub excluded: Vec<String>,
}

/// What the report is computed from besides the database's rows.
pub struct Inputs<'a> {
    pub database: &'a str,
    pub window: &'a str,
    pub since: &'a str,
    pub until: &'a str,
    pub catalog: Vec<String>,
    pub catalog_tokens: u64,
    pub listed_tokens: u64,
}

pub fn compute(rows: TeamRows, i: Inputs) -> TeamReport {
    let used: std::collections::HashSet<&str> =
        rows.tools.iter().map(|t| t.tool.as_str()).collect();
    let mut unused: Vec<String> = i
        .catalog
        .iter()
        .filter(|t| !used.contains(t.as_str()))
        .cloned()
        .collect();
    unused.sort();
    let sessions = rows.team.sessions;
    let tokens = ListingTokens {
        catalog_per_session: i.catalog_tokens,
        listed_per_session: i.listed_tokens,
        sessions,
        without_mws: i.catalog_tokens * sessions,
        with_mws: i.listed_tokens * sessions,
        saved: i.catalog_tokens.saturating_sub(i.listed_tokens) * sessions,
    };
    TeamReport {
        database: i.database.to_string(),
        window: i.window.to_string(),
        since: i.since.to_string(),
        until: i.until.to_string(),
        members: rows
            .members
            .into_iter()
            .map(|(user, figures)| Member { user, figures })
            .collect(),
        team: rows.team,
        tools: rows.tools,
        unused,
        tokens,
        excluded: rows.excluded,
    }
}

/// The report as text: a table per part, names escaped.
pub fn text(r: &TeamReport) -> String {
    use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
    let mut out = format!(
        "Team usage, last {} ({} to {}), from the team database {}\n\n",
        r.window,
        r.since.get(..10).unwrap_or(&r.since),
        r.until.get(..10).unwrap_or(&r.until),
        safe(&r.database)
    );
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED);
    t.set_header(["member", "calls", "successful", "sessions", "tools"]);
    let row = |name: &str, f: &Figures| {
        [
            safe(name).into_owned(),
            num(f.calls),
            num(f.ok_calls),
            num(f.sessions),
            num(f.tools),
        ]
    };
    for m in &r.members {
        t.add_row(row(&m.user, &m.figures));
    }
    t.add_row(row("team", &r.team));
    out.push_str(&format!("{t}\n\n"));
    if r.tools.is_empty() {
        out.push_str("No successful call in the window.\n\n");
    } else {
        let mut t = Table::new();
        t.load_preset(UTF8_FULL_CONDENSED);
        t.set_header(["tool", "members", "successful calls"]);
        for u in &r.tools {
            t.add_row([safe(&u.tool).into_owned(), num(u.users), num(u.calls)]);
        }
        out.push_str(&format!("Tools the team uses\n{t}\n\n"));
    }
    if !r.unused.is_empty() {
        let names: Vec<String> = r.unused.iter().map(|n| safe(n).into_owned()).collect();
        out.push_str(&format!(
            "Tools nobody used ({} of this machine's catalog): {}\n\n",
            r.unused.len(),
            names.join(", ")
        ));
    }
    let k = &r.tokens;
    let share = if k.without_mws > 0 {
        format!(" ({})", pct(k.saved as f64 / k.without_mws as f64))
    } else {
        String::new()
    };
    out.push_str(&format!(
        "Listing cost over the team's {} session(s): every tool {} tokens per session, {} in all; \
         with mws {} per session, {} in all; saved {} tokens{share}. Estimated with this \
         machine's catalog and listing.\n",
        num(k.sessions),
        num(k.catalog_per_session),
        num(k.without_mws),
        num(k.listed_per_session),
        num(k.with_mws),
        num(k.saved)
    ));
    if !r.excluded.is_empty() {
        let names: Vec<String> = r.excluded.iter().map(|n| safe(n).into_owned()).collect();
        out.push_str(&format!(
            "Not counted (store.inTeamFigures: false): {}\n",
            names.join(", ")
        ));
    }
    out
}
