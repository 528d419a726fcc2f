//! What a server's `capabilities` say it can do beside answering: lists that change, resource
//! subscriptions. Pure: a capabilities object in, a yes or a list out.

use serde_json::Value;

/// Does the server say its tool list can change?
pub fn list_changes(caps: Option<&Value>) -> bool {
    caps.and_then(|c| c.pointer("/tools/listChanged"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// Which of its prompt and resource lists the upstream says can change: the 2026-07-28
/// `subscriptions/listen` filter keys for them (`promptsListChanged`, `resourcesListChanged`).
pub fn other_list_changes(caps: Option<&Value>) -> Vec<&'static str> {
    [
        ("/prompts/listChanged", "promptsListChanged"),
        ("/resources/listChanged", "resourcesListChanged"),
    ]
    .into_iter()
    .filter(|(at, _)| caps.and_then(|c| c.pointer(at)).and_then(Value::as_bool) == Some(true))
    .map(|(_, key)| key)
    .collect()
}

/// Does the upstream deliver `notifications/resources/updated` for URIs it is asked about (legacy
/// `resources/subscribe`, 2026-07-28 `subscriptions/listen` `resourceSubscriptions`)?
pub fn subscribes(caps: Option<&Value>) -> bool {
    caps.and_then(|c| c.pointer("/resources/subscribe"))
        .and_then(Value::as_bool)
        == Some(true)
}
