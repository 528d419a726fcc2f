//! Long-lived SSE streams of server notifications: a legacy session's GET stream and a 2026-07-28
//! `subscriptions/listen` stream. Both send `notifications/tools/list_changed` when the working set
//! or the upstream catalog changes, the upstream's prompts and resources `list_changed` (a listen
//! stream: when its filter asks), and `notifications/resources/updated` for the URIs the stream
//! holds (a legacy session's subscriptions, a listen's `resourceSubscriptions`;
//! `subscriptions.rs`), keep-alives while idle, and end on shutdown. A stream's `Gate` (its
//! session's held listing, `proxy/session_listing.rs`) decides whether a change is announced. Takes
//! a working-set watch and the `Upstream`, never the `Proxy`.

use std::sync::Arc;
use std::time::Duration;

use axum::response::Response;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::{broadcast, watch};

use crate::mcp;
use crate::server::relay::sse;
use crate::server::relay::subscriptions::{self, Held, META_SUBSCRIPTION_ID, Wants};
use crate::server::working_set::WorkingSet;
use crate::upstream::Upstream;

/// How often an idle stream sends a keep-alive comment. Raising it lets idle connections be cut
/// sooner by intermediaries; lowering it costs a few bytes more often.
pub const KEEP_ALIVE_EVERY: Duration = Duration::from_secs(15);

/// Asked after each change of the working set or the catalog: is it announced on this stream?
pub type Gate = Arc<dyn Fn() -> BoxFuture<'static, bool> + Send + Sync>;

/// The events of a stream, first to last.
pub struct Shape {
    /// Sent at once (the listen acknowledgement).
    pub first: Option<Value>,
    /// The subscription id to tag notifications with (`None` on a legacy GET stream).
    pub subscription: Option<Value>,
    /// Sent when the server shuts down (the listen result).
    pub last: Option<Value>,
    /// Does the stream carry `tools/list_changed`?
    pub tools: bool,
    /// The resource URIs whose updates this stream delivers (`None`: none).
    pub updates: Option<Wants>,
    /// The upstream's prompts/resources `list_changed` notifications this stream passes on.
    pub lists: Vec<&'static str>,
    /// The listen's URIs held upstream while the stream is open.
    pub held: Option<Held>,
    /// Fails once the legacy session behind the stream ends (DELETE, expiry): the stream ends too.
    pub ended: Option<watch::Receiver<()>>,
    /// Decides whether a change is announced (`None`: every change is).
    pub gate: Option<Gate>,
}

/// A `subscriptions/listen` stream for request `id` asking for `filter`. `resources`: the upstream,
/// when mws relays its resource updates (`subscriptions::relays`); `lists`: the list changes it
/// passes on (`subscriptions::lists`).
pub fn listen_shape(
    id: &Value,
    filter: Option<&Value>,
    resources: Option<&Arc<dyn Upstream>>,
    lists: &[(&'static str, &'static str)],
) -> Shape {
    let wants_tools = filter
        .and_then(|f| f.get("toolsListChanged"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut uris: Vec<String> = match (
        resources,
        filter.and_then(|f| f.get("resourceSubscriptions")),
    ) {
        (Some(_), Some(Value::Array(a))) => a
            .iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect(),
        _ => Vec::new(),
    };
    uris.sort();
    uris.dedup();
    let mut honored = serde_json::Map::new();
    if wants_tools {
        honored.insert("toolsListChanged".into(), json!(true));
    }
    let mut methods = Vec::new();
    for (key, method) in lists {
        if filter.and_then(|f| f.get(*key)).and_then(Value::as_bool) == Some(true) {
            honored.insert((*key).into(), json!(true));
            methods.push(*method);
        }
    }
    let (updates, held) = match resources.filter(|_| !uris.is_empty()) {
        Some(up) => {
            honored.insert("resourceSubscriptions".into(), json!(uris));
            let set = uris.clone();
            let wants: Wants =
                Arc::new(move |u: &str| set.binary_search_by(|x| x.as_str().cmp(u)).is_ok());
            (Some(wants), Some(Held::hold(up, uris)))
        }
        None => (None, None),
    };
    let tag = json!({ META_SUBSCRIPTION_ID: id });
    Shape {
        first: Some(mcp::notification(
            "notifications/subscriptions/acknowledged",
            Some(json!({"notifications": Value::Object(honored.clone()), "_meta": tag})),
        )),
        subscription: Some(id.clone()),
        tools: wants_tools,
        last: Some(mcp::response(
            id,
            json!({"resultType": "complete", "_meta": tag}),
        )),
        updates,
        lists: methods,
        held,
        ended: None,
        gate: None,
    }
}

/// A legacy GET stream: list_changed (the tools', and the prompts' and resources' of `lists`), and
/// updates of the resources the session subscribed to (`wants`), until `ended` fails
/// (`Sessions::ended`).
pub fn get_shape(
    wants: Wants,
    lists: &[(&'static str, &'static str)],
    ended: watch::Receiver<()>,
) -> Shape {
    Shape {
        first: None,
        subscription: None,
        tools: true,
        last: None,
        updates: Some(wants),
        lists: lists.iter().map(|(_, m)| *m).collect(),
        held: None,
        ended: Some(ended),
        gate: None,
    }
}

/// Where a stream is between events.
struct State {
    ws: watch::Receiver<WorkingSet>,
    cat: watch::Receiver<u64>,
    cat_alive: bool,
    notes: Option<broadcast::Receiver<Value>>,
    stop: watch::Receiver<bool>,
    done: bool,
    ended: Option<watch::Receiver<()>>,
    _held: Option<Held>,
}

/// The next resource update this stream `wants`, or list change of `lists` (tagged with `tag`),
/// skipping everything else; `None` once the upstream's notifications end. Pending forever
/// without `notes`.
async fn next_update(
    notes: &mut Option<broadcast::Receiver<Value>>,
    wants: Option<&(dyn Fn(&str) -> bool + Send + Sync)>,
    lists: &[&str],
    tag: Option<&Value>,
) -> Option<Value> {
    let Some(notes) = notes.as_mut() else {
        return std::future::pending().await;
    };
    loop {
        match notes.recv().await {
            Ok(msg) => {
                let update = wants.and_then(|w| subscriptions::updated_for(&msg, w, tag));
                if let Some(note) =
                    update.or_else(|| subscriptions::list_changed_for(&msg, lists, tag))
                {
                    return Some(note);
                }
            }
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return None,
        }
    }
}

/// Resolves once the session behind a stream ended; pending forever without one.
async fn session_end(ended: &mut Option<watch::Receiver<()>>) {
    match ended {
        // The sender is never sent on, only dropped with the session: `changed` fails then.
        Some(rx) => while rx.changed().await.is_ok() {},
        None => std::future::pending().await,
    }
}

/// Streams `shape`: list_changed when `ws` (the working set) or the upstream's catalog changes,
/// resource updates, keep-alives, until `shutdown`. `listen` streams with no tools filter send no
/// list_changed, only keep-alives (and the updates of the resources they hold).
pub fn stream(
    mut ws: watch::Receiver<WorkingSet>,
    upstream: &dyn Upstream,
    shape: Shape,
    shutdown: watch::Receiver<bool>,
    notify: bool,
) -> Response {
    let mut cat = upstream.changes();
    ws.borrow_and_update();
    cat.borrow_and_update();
    let changed = match &shape.subscription {
        Some(id) => mcp::notification(
            "notifications/tools/list_changed",
            Some(json!({"_meta": { META_SUBSCRIPTION_ID: id }})),
        ),
        None => mcp::notification("notifications/tools/list_changed", None),
    };
    let changed = sse::event(&changed);
    let last = shape.last.map(|l| sse::event(&l));
    let wants = shape.updates;
    let lists = shape.lists;
    let tag = shape.subscription;
    let gate = shape.gate;
    let state = State {
        ws,
        cat,
        cat_alive: true,
        notes: (wants.is_some() || !lists.is_empty()).then(|| upstream.notifications()),
        stop: shutdown,
        done: false,
        ended: shape.ended,
        _held: shape.held,
    };
    let body = futures_util::stream::unfold(state, move |mut st| {
        let changed = changed.clone();
        let last = last.clone();
        let wants = wants.clone();
        let lists = lists.clone();
        let tag = tag.clone();
        let gate = gate.clone();
        async move {
            if st.done {
                return None;
            }
            let mut change = false;
            let text = tokio::select! {
                r = st.ws.changed() => match r {
                    Ok(()) if notify => { change = true; changed }
                    Ok(()) => sse::KEEP_ALIVE.to_string(),
                    Err(_) => return None,
                },
                r = async { if st.cat_alive { st.cat.changed().await } else { std::future::pending().await } } => match r {
                    Ok(()) if notify => { change = true; changed }
                    Ok(()) => sse::KEEP_ALIVE.to_string(),
                    Err(_) => { st.cat_alive = false; sse::KEEP_ALIVE.to_string() }
                },
                r = next_update(&mut st.notes, wants.as_deref(), &lists, tag.as_ref()) => match r {
                    Some(note) => sse::event(&note),
                    None => { st.notes = None; sse::KEEP_ALIVE.to_string() }
                },
                _ = st.stop.wait_for(|s| *s) => String::new(),
                _ = session_end(&mut st.ended) => String::new(),
                _ = tokio::time::sleep(KEEP_ALIVE_EVERY) => sse::KEEP_ALIVE.to_string(),
            };
            if text.is_empty() {
                // Shutdown (or the session's end): the listen result closes the stream, a GET
                // stream just ends.
                st.done = true;
                return last.map(|l| (l, st));
            }
            let text = match gate {
                Some(gate) if change && !gate().await => sse::KEEP_ALIVE.to_string(),
                _ => text,
            };
            Some((text, st))
        }
    });
    let first = futures_util::stream::iter(shape.first.map(|f| sse::event(&f)));
    sse::response(first.chain(body))
}
