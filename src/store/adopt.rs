//! Moving from one `upstream` to `servers` without losing history: the server marked
//! `"adoptsUpstreamHistory": true` takes over every tool name stored without a server prefix
//! (calls, pending transcript calls, the working set, promotion transitions, front-matter pin
//! declarations), renamed `<server>__<tool>`. Idempotent: run again, it finds nothing left to
//! rename (or only rows written since under unprefixed names, such as old transcripts ingested
//! late). Must not touch a name that already starts with a configured server's prefix.

use rusqlite::TransactionBehavior;
use rusqlite::types::Value as SqlValue;

use super::{Store, StoreError};

/// Tables and their tool-name column; `true` where the name is part of a unique key, so a renamed
/// row that would collide with an existing one is dropped instead.
const TABLES: [(&str, &str, bool); 7] = [
    ("calls", "tool", false),
    ("ingest_pending", "tool", false),
    ("working_set", "tool", true),
    ("transitions", "tool", true),
    ("pin_declarations", "tool", true),
    ("project_tools", "tool", true),
    ("project_transitions", "tool", true),
];

impl Store {
    /// Renames every stored tool name that does not start with `<s>__` for one of `servers` to
    /// `<server>__<name>`, in one transaction. Returns the number of rows renamed.
    pub fn adopt_unprefixed(
        &mut self,
        server: &str,
        servers: &[&str],
    ) -> Result<usize, StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        let mut renamed = 0;
        for (table, col, unique) in TABLES {
            // `instr(x, p) <> 1`: x does not start with p (no LIKE: `_` is a wildcard there).
            let mut params: Vec<SqlValue> = vec![SqlValue::Text(format!("{server}__"))];
            let mut unprefixed = Vec::new();
            for s in servers {
                params.push(SqlValue::Text(format!("{s}__")));
                unprefixed.push(format!("instr({col}, ?{}) <> 1", params.len()));
            }
            let filter = unprefixed.join(" AND ");
            let or = if unique { "OR IGNORE " } else { "" };
            renamed += tx.execute(
                &format!("UPDATE {or}{table} SET {col} = ?1 || {col} WHERE {filter}"),
                rusqlite::params_from_iter(params.iter()),
            )?;
            if unique {
                // Left over: the prefixed name was there already; that row stands.
                tx.execute(
                    &format!("DELETE FROM {table} WHERE {filter}"),
                    rusqlite::params_from_iter(params.iter()),
                )?;
            }
        }
        tx.commit()?;
        Ok(renamed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unprefixed_names_move_to_the_adopting_server_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.db")).unwrap();
        let c = store.conn();
        for (i, tool) in ["create_issue", "time__now", "github__list", "a_b"]
            .iter()
            .enumerate()
        {
            c.execute(
                "INSERT INTO calls (ts, session_id, tool, via, ok, source_key) \
                 VALUES ('2026-11-01T00:00:00.000Z', 's', ?1, 'direct', 1, ?2)",
                rusqlite::params![tool, format!("k{i}")],
            )
            .unwrap();
        }
        for (i, tool) in ["create_issue", "github__create_issue", "time__now"]
            .iter()
            .enumerate()
        {
            c.execute(
                "INSERT INTO working_set (tool, position, reason, since) \
                 VALUES (?1, ?2, 'promoted', '2026-11-01T00:00:00.000Z')",
                rusqlite::params![tool, i as i64],
            )
            .unwrap();
        }
        let servers = ["github", "time"];
        assert_eq!(store.adopt_unprefixed("github", &servers).unwrap(), 2);
        let names = |sql: &str| -> Vec<String> {
            let mut st = store.conn().prepare(sql).unwrap();
            st.query_map([], |r| r.get(0))
                .unwrap()
                .collect::<Result<_, _>>()
                .unwrap()
        };
        assert_eq!(
            names("SELECT tool FROM calls ORDER BY id"),
            [
                "github__create_issue",
                "time__now",
                "github__list",
                "github__a_b"
            ]
        );
        // The working set had both names: the prefixed row stands, the old one is gone.
        assert_eq!(
            names("SELECT tool FROM working_set ORDER BY position"),
            ["github__create_issue", "time__now"]
        );
        assert_eq!(store.adopt_unprefixed("github", &servers).unwrap(), 0);
    }
}
