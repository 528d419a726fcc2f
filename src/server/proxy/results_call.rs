//! The proxy's side of big results (`crate::results`): a result shaped to `results.maxTokens`
//! and the `mws_result_page` answer, both off the one worker, since counting tokens is CPU work.
//! A kept result belongs to the caller that got it (`owner`). Must not keep or write a result
//! anywhere but the in-memory store.

use std::time::Instant;

use serde_json::Value;

use crate::mcp::Caller;
use crate::server::proxy::Proxy;

/// Who may page a result `caller` got: its session (a legacy `Mcp-Session-Id`, a `--stdio`
/// connection); a stateless 2026 client, which has no session, by its client name.
fn owner(caller: &Caller) -> String {
    match &caller.session {
        Some(s) => format!("session:{s}"),
        None => format!("client:{}", caller.client.as_deref().unwrap_or("")),
    }
}

impl Proxy {
    /// The result shaped to `results.maxTokens` (`crate::results`), and the bytes saved. Counting
    /// tokens is CPU work, so a result that may need it is shaped off the one worker.
    pub(crate) async fn shape(&self, result: Value, caller: &Caller) -> (Value, Option<usize>) {
        if !self.results.may_shape(&result) {
            return (result, None);
        }
        let results = self.results.clone();
        let now = Instant::now();
        let owner = owner(caller);
        match tokio::task::spawn_blocking(move || results.shape_deferred(result, &owner, now)).await
        {
            Ok((shaped, saved, leftover)) => {
                // Freeing what was cut waits until the answer is on its way.
                if !leftover.is_empty() {
                    tokio::task::spawn_blocking(move || drop(leftover));
                }
                (shaped, saved)
            }
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }

    /// The answer to `mws_result_page`, off the one worker (it counts tokens, as `shape`).
    pub(crate) async fn page(&self, args: Option<Value>, caller: &Caller) -> Value {
        let results = self.results.clone();
        let now = Instant::now();
        let owner = owner(caller);
        match tokio::task::spawn_blocking(move || results.page(args.as_ref(), &owner, now)).await {
            Ok(page) => page,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        }
    }
}
