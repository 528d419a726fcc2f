//! The `catalog` table: the last-good upstream catalog as rows (name, backend, definition hash as
//! `catalog::definitions` computes it, first/last seen, present), so that SQL can join usage with
//! what exists. Must not store the tool objects themselves (`catalog.json` holds those).

use rusqlite::{Connection, TransactionBehavior, params};
use serde_json::Value;

use super::{Store, StoreError};
use crate::catalog::Catalog;
use crate::catalog::definitions::definition_hash;

/// Upserts every tool of `catalog` as present and seen at `now`, and marks the others absent.
pub fn refresh(conn: &Connection, catalog: &Catalog, now: &str) -> rusqlite::Result<()> {
    let mut up = conn.prepare_cached(
        "INSERT INTO catalog (name, backend, schema_hash, first_seen, last_seen, present)
         VALUES (?1, ?2, ?3, ?4, ?4, 1)
         ON CONFLICT (name) DO UPDATE SET backend = excluded.backend,
             schema_hash = excluded.schema_hash, last_seen = excluded.last_seen, present = 1",
    )?;
    let mut names = Vec::with_capacity(catalog.len());
    for tool in catalog.tools() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        up.execute(params![name, backend_of(name), definition_hash(tool), now])?;
        names.push(name);
    }
    let names = serde_json::to_string(&names).expect("names serialize");
    conn.execute(
        "UPDATE catalog SET present = 0
         WHERE present = 1 AND name NOT IN (SELECT value FROM json_each(?1))",
        [names],
    )?;
    Ok(())
}

impl Store {
    /// Refreshes the `catalog` table from a catalog just listed, in its own transaction.
    pub fn refresh_catalog(&mut self, catalog: &Catalog, now: &str) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)?;
        refresh(&tx, catalog, now)?;
        tx.commit()?;
        Ok(())
    }

    /// Names the catalog table marks present.
    pub fn catalog_names(&self) -> Result<Vec<String>, StoreError> {
        let mut stmt = self
            .conn
            .prepare("SELECT name FROM catalog WHERE present = 1 ORDER BY name")?;
        let rows = stmt.query_map([], |r| r.get(0))?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

/// The backend prefix of a tool name: `mail` in `mail_send_message`; `None` without one.
fn backend_of(name: &str) -> Option<&str> {
    name.split_once('_')
        .map(|(b, _)| b)
        .filter(|b| !b.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn refresh_marks_present_and_gone() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("state.db")).unwrap();
        let c1 = Catalog::from_value(json!([{"name": "mail_send"}, {"name": "ping"}])).unwrap();
        store
            .refresh_catalog(&c1, "2026-11-01T00:00:00.000Z")
            .unwrap();
        let c2 = Catalog::from_value(json!([{"name": "mail_send", "description": "new"}])).unwrap();
        store
            .refresh_catalog(&c2, "2026-11-02T00:00:00.000Z")
            .unwrap();
        let rows: Vec<(String, Option<String>, String, String, i64)> = store
            .conn
            .prepare(
                "SELECT name, backend, first_seen, last_seen, present FROM catalog ORDER BY name",
            )
            .unwrap()
            .query_map([], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            rows,
            [
                (
                    "mail_send".into(),
                    Some("mail".into()),
                    "2026-11-01T00:00:00.000Z".into(),
                    "2026-11-02T00:00:00.000Z".into(),
                    1
                ),
                (
                    "ping".into(),
                    None,
                    "2026-11-01T00:00:00.000Z".into(),
                    "2026-11-01T00:00:00.000Z".into(),
                    0
                ),
            ]
        );
        assert_eq!(store.catalog_names().unwrap(), ["mail_send"]);
        assert_ne!(
            definition_hash(&json!({"name": "a"})),
            definition_hash(&json!({"name": "a", "description": "new"}))
        );
    }
}
