//! Resource subscriptions relayed for clients: a legacy session's `resources/subscribe` /
//! `unsubscribe` are answered here and kept in its session, a 2026-07-28 `subscriptions/listen`
//! names its URIs in `resourceSubscriptions`; either way the upstream is asked (refcounted, in
//! `upstream::conn::subs`) and its `notifications/resources/updated` are routed back by
//! `streams.rs` to the streams that hold the URI. Must not talk to the upstream except through
//! `Upstream`, and takes that, never the `Proxy`.

use std::sync::Arc;

use serde_json::{Map, Value, json};

use crate::mcp::{self, RpcError, code};
use crate::server::relay::sessions::Sessions;
use crate::upstream::Upstream;

pub const UPDATED: &str = "notifications/resources/updated";

/// `_meta` key tagging each message of a `subscriptions/listen` stream.
pub const META_SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

/// Which resource URIs a stream delivers updates for.
pub type Wants = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// Can mws deliver resource updates to its clients? When the upstream reports them
/// (`resources.subscribe`): a legacy upstream after `resources/subscribe`, a 2026-07-28 one on
/// the `subscriptions/listen` mws opens (an HTTP stream, or a request on a stdio child's stdin).
pub fn relays(upstream: &dyn Upstream) -> bool {
    upstream
        .status()
        .capabilities
        .as_ref()
        .and_then(|c| c.pointer("/resources/subscribe"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// The prompt and resource list changes mws passes on: (the 2026-07-28 listen filter key, the
/// notification) for each list the upstream (one of several servers) says can change.
pub fn lists(upstream: &dyn Upstream) -> Vec<(&'static str, &'static str)> {
    let caps = upstream.status().capabilities;
    crate::mcp::caps::other_list_changes(caps.as_ref())
        .into_iter()
        .map(|key| match key {
            "promptsListChanged" => (key, "notifications/prompts/list_changed"),
            _ => (key, "notifications/resources/list_changed"),
        })
        .collect()
}

/// Is `msg` an upstream's prompts or resources `list_changed`?
pub fn is_list_change(msg: &Value) -> bool {
    matches!(
        msg.get("method").and_then(Value::as_str),
        Some("notifications/prompts/list_changed" | "notifications/resources/list_changed")
    )
}

/// The list_changed to send for an upstream's notification `msg` when a stream takes `methods`,
/// tagged with the stream's subscription id (`tag`, a listen stream).
pub fn list_changed_for(msg: &Value, methods: &[&str], tag: Option<&Value>) -> Option<Value> {
    let method = msg.get("method").and_then(Value::as_str)?;
    if !methods.contains(&method) {
        return None;
    }
    let params = tag.map(|id| json!({"_meta": { META_SUBSCRIPTION_ID: id }}));
    Some(mcp::notification(method, params))
}

/// `params.uri` of a subscribe or unsubscribe request.
pub fn uri(method: &str, params: Option<&Value>) -> Result<String, RpcError> {
    match params.and_then(|p| p.get("uri")).and_then(Value::as_str) {
        Some(u) if !u.is_empty() => Ok(u.to_string()),
        _ => Err(RpcError::new(
            code::INVALID_PARAMS,
            format!("{method} needs params.uri, the resource's URI as a string"),
        )),
    }
}

/// A legacy client's `resources/subscribe` (`on`) or `resources/unsubscribe` in session `sid`.
pub async fn legacy(
    upstream: &dyn Upstream,
    sessions: &Sessions,
    sid: Option<&str>,
    method: &str,
    params: Option<&Value>,
) -> Result<Value, RpcError> {
    let on = method == "resources/subscribe";
    let uri = uri(method, params)?;
    if upstream.status().capabilities.is_none() {
        // Not heard from yet (a request sent right behind `initialize`): its capabilities come
        // with its catalog, which waits for it at most `listMs`.
        upstream.catalog().await;
    }
    if !relays(upstream) {
        return Err(RpcError {
            code: code::METHOD_NOT_FOUND,
            message: format!("{method}: the upstream does not report resource updates"),
            data: Some(json!(method)),
        });
    }
    let Some(sid) = sid else {
        return Err(RpcError::new(
            code::INVALID_REQUEST,
            format!(
                "{method} needs a session (Mcp-Session-Id from initialize): updates arrive on its GET stream"
            ),
        ));
    };
    let Some(changed) = sessions.subscribe(sid, &uri, on) else {
        return Err(RpcError::new(code::SESSION_NOT_FOUND, "Session not found"));
    };
    if changed && let Err(e) = upstream.resource_subscription(&uri, on).await {
        if on {
            sessions.subscribe(sid, &uri, false);
            return Err(e.into());
        }
        tracing::debug!("{method} upstream failed: {e}");
    }
    Ok(json!({}))
}

/// Is `msg` a `resources/subscribe` or `unsubscribe` request (answered here for legacy clients)?
pub fn is_request(msg: &Map<String, Value>) -> bool {
    let method = msg.get("method").and_then(Value::as_str);
    matches!(
        method,
        Some("resources/subscribe" | "resources/unsubscribe")
    ) && msg.contains_key("id")
}

/// The URIs legacy session `sid` is subscribed to, looked up as each update arrives.
pub fn session_wants(sessions: Arc<Sessions>, sid: &str) -> Wants {
    let sid = sid.to_string();
    Arc::new(move |uri: &str| sessions.is_subscribed(&sid, uri))
}

/// `legacy` as the JSON-RPC response to request `id`.
pub async fn answer(
    upstream: &dyn Upstream,
    sessions: &Sessions,
    sid: Option<&str>,
    id: &Value,
    msg: &Map<String, Value>,
) -> Value {
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    match legacy(upstream, sessions, sid, method, msg.get("params")).await {
        Ok(r) => mcp::response(id, r),
        Err(e) => mcp::error_response(id, e.code, &e.message, e.data),
    }
}

/// Lets go of every URI an ended session held.
pub fn release(upstream: &Arc<dyn Upstream>, uris: impl IntoIterator<Item = String>) {
    let uris: Vec<String> = uris.into_iter().collect();
    if uris.is_empty() {
        return;
    }
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let upstream = upstream.clone();
    rt.spawn(async move {
        for u in uris {
            let _ = upstream.resource_subscription(&u, false).await;
        }
    });
}

/// The URIs a listen stream holds upstream, let go when the stream ends.
pub struct Held {
    upstream: Arc<dyn Upstream>,
    uris: Vec<String>,
}

impl Held {
    /// Subscribes `uris` upstream in the background (the listen is acknowledged at once).
    pub fn hold(upstream: &Arc<dyn Upstream>, uris: Vec<String>) -> Held {
        let (up, list) = (upstream.clone(), uris.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                for u in list {
                    let _ = up.resource_subscription(&u, true).await;
                }
            });
        }
        Held {
            upstream: upstream.clone(),
            uris,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        release(&self.upstream, std::mem::take(&mut self.uris));
    }
}

/// The `notifications/resources/updated` to send for an upstream's, when `wants` its URI:
/// the upstream's `_meta` (its own subscription id) replaced by ours (`tag`, a listen stream).
pub fn updated_for(
    msg: &Value,
    wants: &dyn Fn(&str) -> bool,
    tag: Option<&Value>,
) -> Option<Value> {
    if msg.get("method").and_then(Value::as_str) != Some(UPDATED) {
        return None;
    }
    let mut params: Map<String, Value> = msg.get("params")?.as_object()?.clone();
    let uri = params.get("uri")?.as_str()?;
    if !wants(uri) {
        return None;
    }
    params.remove("_meta");
    if let Some(id) = tag {
        params.insert("_meta".into(), json!({ META_SUBSCRIPTION_ID: id }));
    }
    Some(mcp::notification(UPDATED, Some(Value::Object(params))))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (what, message, filter, tag, expected params or None)
    type Case<'a> = (
        &'a str,
        Value,
        &'a dyn Fn(&str) -> bool,
        Option<Value>,
        Option<Value>,
    );

    #[test]
    fn updates_reach_only_streams_holding_the_uri() {
        let up = json!({"jsonrpc": "2.0", "method": UPDATED, "params": {
            "uri": "test://watched", "_meta": {"io.modelcontextprotocol/subscriptionId": 3}}});
        let watched = |u: &str| u == "test://watched";
        let nothing = |_: &str| false;
        // (what, message, filter, tag, expected params or None)
        let cases: Vec<Case> = vec![
            (
                "legacy: upstream tag dropped",
                up.clone(),
                &watched,
                None,
                Some(json!({"uri": "test://watched"})),
            ),
            (
                "listen: our tag",
                up.clone(),
                &watched,
                Some(json!(9)),
                Some(
                    json!({"uri": "test://watched", "_meta": {"io.modelcontextprotocol/subscriptionId": 9}}),
                ),
            ),
            ("not subscribed", up.clone(), &nothing, None, None),
            (
                "another notification",
                json!({"method": "notifications/message", "params": {"uri": "test://watched"}}),
                &watched,
                None,
                None,
            ),
            (
                "no uri",
                json!({"method": UPDATED, "params": {}}),
                &watched,
                None,
                None,
            ),
        ];
        for (what, msg, wants, tag, want) in cases {
            let got = updated_for(&msg, wants, tag.as_ref()).map(|m| m["params"].clone());
            assert_eq!(got, want, "{what}");
        }
    }

    #[test]
    fn a_request_without_a_uri_is_refused_with_a_message() {
        let e = uri("resources/subscribe", Some(&json!({}))).unwrap_err();
        assert_eq!(e.code, code::INVALID_PARAMS);
        assert_eq!(
            e.message,
            "resources/subscribe needs params.uri, the resource's URI as a string"
        );
        assert_eq!(uri("x", Some(&json!({"uri": "a://b"}))).unwrap(), "a://b");
    }
}
