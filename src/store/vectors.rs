//! The SQL of the tool-vector cache (`tool_vectors`, migration V4): read the vectors a model
//! already made for a set of tool-text hashes, write new ones. Vectors of tool definitions only;
//! nothing a user typed is stored here.

use std::collections::HashMap;

use rusqlite::{Connection, params};

/// The cached vectors of `model` among `hashes`, by hash. A row whose blob is not `dim` floats
/// is skipped (it is embedded again).
pub fn read(
    conn: &Connection,
    model: &str,
    hashes: &[String],
) -> rusqlite::Result<HashMap<String, Vec<f32>>> {
    let mut stmt = conn.prepare_cached(
        "SELECT dim, vector FROM tool_vectors WHERE model = ?1 AND tool_hash = ?2",
    )?;
    let mut out = HashMap::new();
    for h in hashes {
        let row = stmt.query_row(params![model, h], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?))
        });
        match row {
            Ok((dim, blob)) if usize::try_from(dim).is_ok_and(|d| d * 4 == blob.len()) => {
                let v = blob
                    .chunks_exact(4)
                    .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                out.insert(h.clone(), v);
            }
            Ok(_) | Err(rusqlite::Error::QueryReturnedNoRows) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Stores `rows` (hash, vector) for `model` in one transaction, replacing any row of the same key.
pub fn write(
    conn: &mut Connection,
    model: &str,
    rows: &[(String, Vec<f32>)],
) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    {
        let mut stmt = tx.prepare_cached(
            "INSERT OR REPLACE INTO tool_vectors (model, tool_hash, dim, vector) \
             VALUES (?1, ?2, ?3, ?4)",
        )?;
        for (h, v) in rows {
            let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            stmt.execute(params![model, h, v.len() as i64, blob])?;
        }
    }
    tx.commit()
}

/// Rows of `model` in the cache (tests and `mws doctor`).
pub fn count(conn: &Connection, model: &str) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT COUNT(*) FROM tool_vectors WHERE model = ?1",
        [model],
        |r| r.get(0),
    )
}
