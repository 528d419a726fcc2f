//! The SQL of `mws what-if`: every recorded call in time order, borrowed, for
//! `whatif::HistoryBuilder`. Read-only; must not decide anything.

use super::{Store, StoreError};

impl Store {
    /// Hands every call to `f` as `(ts, tool, session_id, ok)`, oldest first (the `calls_ts`
    /// index), without copying its text.
    pub fn whatif_scan_calls(
        &self,
        mut f: impl FnMut(&str, &str, &str, bool),
    ) -> Result<(), StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT ts, tool, session_id, ok FROM calls ORDER BY ts")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let s = |i: usize| {
                r.get_ref(i)?.as_str().map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(
                        i,
                        rusqlite::types::Type::Text,
                        e.into(),
                    )
                })
            };
            f(s(0)?, s(1)?, s(2)?, r.get::<_, i64>(3)? != 0);
        }
        Ok(())
    }

    /// Hands every call to `f` as `(ts, tool, session_id, project, ok)`, oldest first: the
    /// history `whatif::replay_projects` replays with and without project scoping.
    pub fn whatif_scan_project_calls(
        &self,
        mut f: impl FnMut(&str, &str, &str, Option<&str>, bool),
    ) -> Result<(), StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT ts, tool, session_id, project, ok FROM calls ORDER BY ts")?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let text = |i: usize| -> rusqlite::Result<Option<&str>> {
                match r.get_ref(i)? {
                    rusqlite::types::ValueRef::Null => Ok(None),
                    v => v.as_str().map(Some).map_err(|e| {
                        rusqlite::Error::FromSqlConversionFailure(
                            i,
                            rusqlite::types::Type::Text,
                            e.into(),
                        )
                    }),
                }
            };
            let (Some(ts), Some(tool), Some(session)) = (text(0)?, text(1)?, text(2)?) else {
                continue;
            };
            f(ts, tool, session, text(3)?, r.get::<_, i64>(4)? != 0);
        }
        Ok(())
    }
}
