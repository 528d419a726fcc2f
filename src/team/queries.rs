//! The SQL of a team's PostgreSQL database: writing a batch of one member's calls (idempotent by
//! the row's source key), one member's usage sums (the promotion SQL of `store::promote`, run over
//! that member's rows), the team priors, and the team report's figures. Must not decide
//! anything: the rules are in `crate::promote` and the words in `crate::team::report`.

use postgres::Client;
use serde::Serialize;

use crate::promote::Usage;
use crate::store::promote::{usage_sql, with_last_success};
use crate::store::team::{ShipRow, ShipSession};

/// Writes one batch of `user`'s rows in one transaction: the member, the sessions (their span
/// widened), the calls (a source key the database has is skipped, so a batch sent twice counts
/// once). Returns how many calls were new.
pub fn ship(
    client: &mut Client,
    user: &str,
    in_team_figures: bool,
    now: &str,
    rows: &[ShipRow],
    sessions: &[ShipSession],
) -> Result<u64, postgres::Error> {
    let mut tx = client.transaction()?;
    tx.execute(
        "INSERT INTO members (user_name, in_team_figures, first_seen, last_seen)
         VALUES ($1, $2, $3, $3)
         ON CONFLICT (user_name) DO UPDATE SET
             in_team_figures = excluded.in_team_figures, last_seen = excluded.last_seen",
        &[&user, &in_team_figures, &now],
    )?;
    let col = |f: fn(&ShipSession) -> Option<String>| sessions.iter().map(f).collect::<Vec<_>>();
    tx.execute(
        "INSERT INTO sessions (user_name, id, source, client, first_seen, last_seen)
         SELECT $1, * FROM UNNEST($2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[], $6::TEXT[])
         ON CONFLICT (user_name, id) DO UPDATE SET
             first_seen = LEAST(sessions.first_seen, excluded.first_seen),
             last_seen = GREATEST(sessions.last_seen, excluded.last_seen),
             client = COALESCE(sessions.client, excluded.client)",
        &[
            &user,
            &col(|s| Some(s.id.clone())),
            &col(|s| Some(s.source.clone())),
            &col(|s| s.client.clone()),
            &col(|s| Some(s.first_seen.clone())),
            &col(|s| Some(s.last_seen.clone())),
        ],
    )?;
    let text = |f: fn(&ShipRow) -> Option<String>| rows.iter().map(f).collect::<Vec<_>>();
    let ok: Vec<i32> = rows.iter().map(|r| i32::from(r.ok)).collect();
    let ms: Vec<Option<i64>> = rows.iter().map(|r| r.ms).collect();
    let new = tx.execute(
        "INSERT INTO calls (user_name, ts, session_id, tool, via, ok, error_kind, ms, client,
                            client_call_id, source_key)
         SELECT $1, * FROM UNNEST($2::TEXT[], $3::TEXT[], $4::TEXT[], $5::TEXT[], $6::INTEGER[],
                                  $7::TEXT[], $8::BIGINT[], $9::TEXT[], $10::TEXT[], $11::TEXT[])
         ON CONFLICT (user_name, source_key) DO NOTHING",
        &[
            &user,
            &text(|r| Some(r.ts.clone())),
            &text(|r| Some(r.session_id.clone())),
            &text(|r| Some(r.tool.clone())),
            &text(|r| Some(r.via.clone())),
            &ok,
            &text(|r| r.error_kind.clone()),
            &ms,
            &text(|r| r.client.clone()),
            &text(|r| r.client_call_id.clone()),
            &text(|r| Some(r.source_key.clone())),
        ],
    )?;
    tx.commit()?;
    Ok(new)
}

/// `user`'s usage since `window` over every machine they use: the same SQL as
/// `Store::usage`, over their rows.
pub fn usage(
    client: &mut Client,
    user: &str,
    window: &str,
    also: &[&str],
) -> Result<Vec<Usage>, postgres::Error> {
    let sql = usage_sql("(SELECT * FROM calls WHERE user_name = $2) AS calls");
    let count = |r: &postgres::Row, i: usize| r.get::<_, Option<i64>>(i).unwrap_or(0) as u32;
    let out: Vec<Usage> = client
        .query(&sql, &[&window, &user])?
        .iter()
        .map(|r| Usage {
            tool: r.get(0),
            sessions: count(r, 1),
            calls: count(r, 2),
            failed: count(r, 3),
            last_success: r.get(4),
        })
        .collect();
    let last = client
        .prepare("SELECT MAX(ts) FROM calls WHERE user_name = $1 AND tool = $2 AND ok = 1")?;
    with_last_success(out, also, |t| {
        Ok(client.query_one(&last, &[&user, &t])?.get(0))
    })
}

/// Tools at least `min_users` teammates (members other than `user`, in team figures) used
/// successfully since `window`, with how many did.
pub fn team_priors(
    client: &mut Client,
    user: &str,
    window: &str,
    min_users: u32,
) -> Result<Vec<(String, u32)>, postgres::Error> {
    let rows = client.query(
        "SELECT c.tool, COUNT(DISTINCT c.user_name)
         FROM calls c JOIN members m ON m.user_name = c.user_name
         WHERE c.ts >= $1 AND c.ok = 1 AND m.in_team_figures AND c.user_name <> $2
         GROUP BY c.tool
         HAVING COUNT(DISTINCT c.user_name) >= $3
         ORDER BY c.tool",
        &[&window, &user, &i64::from(min_users)],
    )?;
    Ok(rows
        .iter()
        .map(|r| (r.get(0), r.get::<_, i64>(1) as u32))
        .collect())
}

/// One member's (or the team's) figures in the report window.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Figures {
    pub calls: u64,
    pub ok_calls: u64,
    pub sessions: u64,
    pub tools: u64,
}

/// One tool's use across the team in the window.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolUse {
    pub tool: String,
    pub users: u64,
    pub calls: u64,
}

/// Everything `mws report --team` reads from the database.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TeamRows {
    pub members: Vec<(String, Figures)>,
    pub team: Figures,
    pub tools: Vec<ToolUse>,
    /// Members who keep themselves out of team figures (named, never counted).
    pub excluded: Vec<String>,
}

/// The team report's figures for `[since, until)`, members in team figures only.
pub fn team_rows(
    client: &mut Client,
    since: &str,
    until: &str,
) -> Result<TeamRows, postgres::Error> {
    const IN: &str = "FROM calls c JOIN members m ON m.user_name = c.user_name
                      WHERE m.in_team_figures AND c.ts >= $1 AND c.ts < $2";
    let figures = |r: &postgres::Row, at: usize| Figures {
        calls: r.get::<_, i64>(at) as u64,
        ok_calls: r.get::<_, i64>(at + 1) as u64,
        sessions: r.get::<_, i64>(at + 2) as u64,
        tools: r.get::<_, i64>(at + 3) as u64,
    };
    const SUMS: &str = "COUNT(*), COALESCE(SUM(CASE WHEN c.ok = 1 THEN 1 ELSE 0 END), 0)::BIGINT,
                        COUNT(DISTINCT (c.user_name, c.session_id)), COUNT(DISTINCT c.tool)";
    let members = client
        .query(
            &format!("SELECT c.user_name, {SUMS} {IN} GROUP BY c.user_name ORDER BY c.user_name"),
            &[&since, &until],
        )?
        .iter()
        .map(|r| (r.get(0), figures(r, 1)))
        .collect();
    let team = figures(
        &client.query_one(&format!("SELECT {SUMS} {IN}"), &[&since, &until])?,
        0,
    );
    let tools = client
        .query(
            &format!(
                "SELECT c.tool, COUNT(DISTINCT c.user_name), COUNT(*) {IN} AND c.ok = 1
                 GROUP BY c.tool ORDER BY COUNT(DISTINCT c.user_name) DESC, COUNT(*) DESC, c.tool"
            ),
            &[&since, &until],
        )?
        .iter()
        .map(|r| ToolUse {
            tool: r.get(0),
            users: r.get::<_, i64>(1) as u64,
            calls: r.get::<_, i64>(2) as u64,
        })
        .collect();
    let excluded = client
        .query(
            "SELECT user_name FROM members WHERE NOT in_team_figures ORDER BY user_name",
            &[],
        )?
        .iter()
        .map(|r| r.get(0))
        .collect();
    Ok(TeamRows {
        members,
        team,
        tools,
        excluded,
    })
}

/// Hands each of `user`'s calls to `f` as `(ts, tool, session_id, ok)`, oldest first, streamed
/// (the rows are not collected first): `mws what-if`'s history from the team database.
pub fn scan_calls(
    client: &mut Client,
    user: &str,
    mut f: impl FnMut(&str, &str, &str, bool),
) -> Result<(), postgres::Error> {
    use postgres::fallible_iterator::FallibleIterator;
    let mut rows = client.query_raw(
        "SELECT ts, tool, session_id, ok FROM calls WHERE user_name = $1 ORDER BY ts",
        [user],
    )?;
    while let Some(r) = rows.next()? {
        f(r.get(0), r.get(1), r.get(2), r.get::<_, i32>(3) != 0);
    }
    Ok(())
}

/// Hands each of `user`'s calls in `[since, until]` to `f` as the personal report reads them
/// (`Store::report_scan_calls`, over this user's rows on every machine), streamed.
pub fn report_scan_calls(
    client: &mut Client,
    user: &str,
    since: &str,
    until: &str,
    mut f: impl FnMut(&crate::store::report::CallRef<'_>),
) -> Result<(), postgres::Error> {
    use postgres::fallible_iterator::FallibleIterator;
    let mut rows = client.query_raw(
        "SELECT ts, tool, session_id, client, via, ok FROM calls
         WHERE user_name = $1 AND ts >= $2 AND ts <= $3",
        [user, since, until],
    )?;
    while let Some(r) = rows.next()? {
        f(&crate::store::report::CallRef {
            ts: r.get(0),
            tool: r.get(1),
            session_id: r.get(2),
            client: r.get(3),
            via: r.get(4),
            ok: r.get::<_, i32>(5) != 0,
        });
    }
    Ok(())
}
