//! `search_tools` as the proxy answers it: the query checked, the shared index searched off the
//! one worker, the reply and a `searches` row (mode, count, size; never the query). Must never log
//! the query text.

use std::collections::HashSet;
use std::time::Instant;

use serde_json::Value;

use crate::clock;
use crate::mcp::Caller;
use crate::server::calls::text_result;
use crate::server::listing::listed_names;
use crate::server::meta_tools;
use crate::server::proxy::Proxy;
use crate::store::SearchRecord;
use crate::upstream::CatalogSource;

impl Proxy {
    pub(crate) async fn search_tools(&self, args: Option<&Value>, caller: &Caller) -> Value {
        let query = match meta_tools::search_query(args) {
            Ok(q) => q.to_string(),
            Err(e) => return text_result(e, true),
        };
        let snap = self.upstream.catalog().await;
        if snap.source == CatalogSource::None && snap.catalog.is_empty() {
            let why = self.upstream.status().list_error.unwrap_or_else(|| {
                "the upstream MCP server is down or has not answered yet".into()
            });
            return text_result(
                format!("{why}: there are no tools to search right now"),
                true,
            );
        }
        let index = self
            .index
            .get(snap.version, &snap.catalog, &self.config)
            .await;
        let ws = self.working_set.borrow().clone();
        let listed: HashSet<String> = listed_names(&snap.catalog, &ws, &self.config)
            .into_iter()
            .collect();
        // Ranking is linear in the (bounded) query but still CPU work: off the one worker, for
        // the reason `IndexCache::get` gives.
        let search = move || index.search(&query, &listed);
        let reply = match tokio::task::spawn_blocking(search).await {
            Ok(reply) => reply,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        let text = reply.json.to_string();
        if let Some(log) = &self.log {
            log.search(SearchRecord {
                ts: clock::fmt(clock::now()),
                session_id: Some(self.stateless.session(caller, &self.run_id, Instant::now())),
                client: caller.client.clone(),
                mode: reply.mode.to_string(),
                result_count: i64::try_from(reply.result_count).unwrap_or(i64::MAX),
                reply_bytes: i64::try_from(text.len()).unwrap_or(i64::MAX),
            });
        }
        text_result(text, false)
    }
}
