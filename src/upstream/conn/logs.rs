//! Asking the upstream for a call's log messages (the `related` scope's level): a modern upstream
//! reads the level from the request's `_meta`; a legacy one only has the session-wide
//! `logging/setLevel`, sent before the call when the session was not yet told a level at least as
//! verbose. Messages below a client's own level are dropped again in `related::deliver`.

use std::sync::{Arc, Mutex, Weak};

use serde_json::{Value, json};

use super::{Conn, Negotiated};
use crate::mcp::{self, Era};
use crate::upstream::related::{self, Level};
use crate::upstream::wire::Outgoing;

/// The level the current legacy session was last told, per negotiation (a new session starts
/// from none).
#[derive(Default)]
pub(super) struct SentLevel(Mutex<Option<(Weak<Negotiated>, Level)>>);

impl SentLevel {
    /// The level to send before a `method` request on `n`: the one the scope asks for, when `n`
    /// is a legacy session that offers logging and was not told it (or something more verbose).
    fn needed(&self, method: &str, n: &Arc<Negotiated>) -> Option<Level> {
        if method != "tools/call" || n.era != Era::Legacy || !offers_logging(n) {
            return None;
        }
        let want = related::requested_level()?;
        let sent = self.0.lock().unwrap_or_else(|e| e.into_inner());
        match sent.as_ref() {
            Some((w, l)) if std::ptr::eq(w.as_ptr(), Arc::as_ptr(n)) && *l <= want => None,
            _ => Some(want),
        }
    }

    fn record(&self, n: &Arc<Negotiated>, level: Level) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Some((Arc::downgrade(n), level));
    }
}

/// `Upstream::relays_logs` for one connection: its wire ties messages to calls and the upstream
/// offers `logging`.
pub(super) fn relays(wire: &dyn super::Wire, status: &super::UpstreamStatus) -> bool {
    wire.carries_call_logs()
        && status
            .capabilities
            .as_ref()
            .is_some_and(|c| c.get("logging").is_some())
}

fn offers_logging(n: &Negotiated) -> bool {
    n.capabilities
        .as_ref()
        .is_some_and(|c| c.get("logging").is_some())
}

impl Conn {
    /// Makes the upstream send the log messages the caller in scope asked for: returns `params`
    /// with the level in `_meta` (modern), or sends `logging/setLevel` first (legacy). A failed
    /// `setLevel` costs the call nothing but its logs.
    pub(super) async fn ask_for_logs(
        &self,
        method: &str,
        n: &Arc<Negotiated>,
        params: Value,
    ) -> Value {
        if !self.wire.carries_call_logs() {
            // The messages could not be told apart: asking for them only makes noise.
            return params;
        }
        if n.era == Era::Modern {
            return related::with_requested_level(method, params);
        }
        let Some(level) = self.sent_level.needed(method, n) else {
            return params;
        };
        let msg = mcp::request(
            &self.id(),
            "logging/setLevel",
            json!({"level": level.name()}),
        );
        let out = Outgoing {
            msg: &msg,
            method: "logging/setLevel",
            name: None,
            version: Some(&n.version),
            modern: false,
            params: &[],
        };
        match self.wire.request(out).await {
            Ok((_, resp)) if resp.get("result").is_some() => self.sent_level.record(n, level),
            Ok(_) => tracing::debug!("the upstream refused logging/setLevel"),
            Err(e) => tracing::debug!("logging/setLevel upstream failed: {e}"),
        }
        params
    }
}
