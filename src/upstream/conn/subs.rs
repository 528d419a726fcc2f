//! Resource subscriptions held on behalf of our clients: a refcounted set of URIs. A 2026-07-28
//! upstream hears of it as the `resourceSubscriptions` of our `subscriptions/listen` (re-opened
//! when the set changes); a legacy one as `resources/subscribe` / `unsubscribe` on our session
//! (sent again after a new session). Must not know which client holds which URI.

use std::time::Duration;

use serde_json::json;

use super::Outgoing;
use super::{Call, CallContext, Conn, Negotiated, UpstreamError};
use crate::mcp::{self, Era};

/// What a change to one URI's count does upstream.
fn edge(count: usize, on: bool) -> bool {
    (on && count == 1) || (!on && count == 0)
}

impl Conn {
    /// The URIs at least one client is subscribed to, sorted.
    pub(super) fn subscribed_uris(&self) -> Vec<String> {
        self.resource_subs.lock().unwrap().keys().cloned().collect()
    }

    /// One client subscribes (`on`) to `uri` or lets it go. Only the first subscriber and the
    /// last to leave reach the upstream; a refused legacy subscribe is undone and returned.
    pub async fn resource_subscription(
        &self,
        uri: &str,
        on: bool,
        budget: Duration,
    ) -> Result<(), UpstreamError> {
        let changed = {
            let mut subs = self.resource_subs.lock().unwrap();
            let count = match (on, subs.get_mut(uri)) {
                (true, Some(c)) => {
                    *c += 1;
                    *c
                }
                (true, None) => {
                    subs.insert(uri.to_string(), 1);
                    1
                }
                (false, Some(c)) => {
                    *c -= 1;
                    *c
                }
                (false, None) => return Ok(()),
            };
            if count == 0 {
                subs.remove(uri);
            }
            edge(count, on)
        };
        if !changed {
            return Ok(());
        }
        let n = self.ensure(budget).await?;
        if n.era == Era::Modern {
            self.listen_modern(&n);
            return Ok(());
        }
        let method = if on {
            "resources/subscribe"
        } else {
            "resources/unsubscribe"
        };
        let r = self
            .request(
                method,
                json!({ "uri": uri }),
                &CallContext::default(),
                Call {
                    budget,
                    reopen: false,
                    param_headers: &[],
                },
            )
            .await
            .map(|_| ());
        if r.is_err() && on {
            let mut subs = self.resource_subs.lock().unwrap();
            if let Some(c) = subs.get_mut(uri) {
                *c -= 1;
                if *c == 0 {
                    subs.remove(uri);
                }
            }
        }
        r
    }

    /// A new legacy session knows none of our subscriptions: tell it each again (failures are
    /// logged; the clients keep their subscriptions and the next session tries again).
    pub(super) async fn resubscribe_legacy(&self, n: &Negotiated) {
        for uri in self.subscribed_uris() {
            let msg = mcp::request(&self.id(), "resources/subscribe", json!({ "uri": uri }));
            let out = Outgoing {
                msg: &msg,
                method: "resources/subscribe",
                name: Some(&uri),
                version: Some(&n.version),
                modern: false,
                params: &[],
            };
            match self.wire.request(out).await {
                Ok((_, resp)) if resp.get("result").is_some() => {}
                Ok(_) => tracing::debug!("the upstream refused resources/subscribe again"),
                Err(e) => tracing::debug!("resources/subscribe upstream failed: {e}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::edge;

    #[test]
    fn only_the_first_and_last_subscriber_reach_the_upstream() {
        // (count after the change, subscribing?, reaches the upstream?)
        let cases = [
            (1, true, true),
            (2, true, false),
            (1, false, false),
            (0, false, true),
        ];
        for (count, on, want) in cases {
            assert_eq!(edge(count, on), want, "count {count} on {on}");
        }
    }
}
