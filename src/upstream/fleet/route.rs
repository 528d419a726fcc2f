//! Which server a request goes to when several are behind mws: a tool by its exposed name, a prompt
//! by its `<server>__` prefix, a resource by the server that listed its URI (or a template it
//! matches); lists of resources, templates and prompts are asked of every server at once and
//! merged; and the names a server's errors and held tools take. Must not wait on one server for
//! another's request.

use std::time::Duration;

use futures_util::future::join_all;
use serde_json::{Map, Value};

use super::members::{FleetInner, named};
use crate::catalog::exposed::{SEPARATOR, split_prefixed};
use crate::mcp::code;
use crate::mcp::raw::Answer;
use crate::upstream::{CallContext, MAX_PAGES, UpstreamError};

fn invalid(message: String) -> UpstreamError {
    UpstreamError::Rpc {
        code: code::INVALID_PARAMS,
        message,
        data: None,
    }
}

/// A `tools/call` routed as `request` routes it, its result as the member's wire gives it
/// (`Upstream::call_tool`).
pub async fn call_tool(
    f: &FleetInner,
    mut params: Value,
    ctx: &CallContext,
) -> Result<Answer, UpstreamError> {
    let i = to_tool_owner(f, &mut params).await?;
    let m = &f.members[i];
    m.up.call_tool(params, ctx)
        .await
        .map_err(|e| named(&m.name, e))
}

/// The member that owns the tool a `tools/call` names, with `params.name` made that member's
/// own name for it.
async fn to_tool_owner(f: &FleetInner, params: &mut Value) -> Result<usize, UpstreamError> {
    let name = str_at(params, "name").unwrap_or_default().to_string();
    let (i, tool) = tool_owner(f, &name).await?;
    params["name"] = Value::String(tool);
    Ok(i)
}

pub async fn request(
    f: &FleetInner,
    method: &str,
    mut params: Value,
    ctx: &CallContext,
) -> Result<Value, UpstreamError> {
    match method {
        "tools/call" => {
            let i = to_tool_owner(f, &mut params).await?;
            f.send(i, method, params, ctx).await
        }
        "prompts/get" => {
            let name = str_at(&params, "name").unwrap_or_default().to_string();
            let (i, prompt) = prefixed(f, &name, "prompt")?;
            params["name"] = Value::String(prompt);
            f.send(i, method, params, ctx).await
        }
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            let uri = str_at(&params, "uri").unwrap_or_default().to_string();
            let i = resource_owner(f, &uri).await?;
            f.send(i, method, params, ctx).await
        }
        "completion/complete" => {
            let kind = params.pointer("/ref/type").and_then(Value::as_str);
            let i = match kind {
                Some("ref/prompt") => {
                    let name = params
                        .pointer("/ref/name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    let (i, prompt) = prefixed(f, &name, "prompt")?;
                    params["ref"]["name"] = Value::String(prompt);
                    i
                }
                _ => {
                    let uri = params
                        .pointer("/ref/uri")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    resource_owner(f, &uri).await?
                }
            };
            f.send(i, method, params, ctx).await
        }
        "resources/list" => Ok(merged_list(f, method, "resources", ctx).await),
        "resources/templates/list" => Ok(merged_list(f, method, "resourceTemplates", ctx).await),
        "prompts/list" => Ok(merged_list(f, method, "prompts", ctx).await),
        _ if f.members.len() == 1 => f.send(0, method, params, ctx).await,
        _ => Err(UpstreamError::Rpc {
            code: code::METHOD_NOT_FOUND,
            message: format!("{method}: not routed to any of mws's several servers"),
            data: None,
        }),
    }
}

fn str_at<'a>(params: &'a Value, key: &str) -> Option<&'a str> {
    params.get(key).and_then(Value::as_str)
}

/// The server and its own name for an exposed tool name: from the merged catalog's naming, else
/// by its `<server>__` prefix (a tool the server added since its last list).
async fn tool_owner(f: &FleetInner, name: &str) -> Result<(usize, String), UpstreamError> {
    if let Some((i, tool)) = f.naming().await.resolve(name) {
        return Ok((i, tool.to_string()));
    }
    prefixed(f, name, "tool")
}

fn prefixed(f: &FleetInner, name: &str, what: &str) -> Result<(usize, String), UpstreamError> {
    let names: Vec<&str> = f.members.iter().map(|m| m.name.as_str()).collect();
    match split_prefixed(&names, name) {
        Some((i, own)) => Ok((i, own.to_string())),
        None => Err(invalid(format!(
            "unknown {what} \"{name}\": names are <server>{SEPARATOR}<name>, with server one of {}",
            names.join(", ")
        ))),
    }
}

/// The server that owns resource `uri`: the one that listed it, else the one whose template it
/// matches (longest head first). Resources are listed once when nothing is known.
pub async fn resource_owner(f: &FleetInner, uri: &str) -> Result<usize, UpstreamError> {
    if let Some(i) = lookup(f, uri) {
        return Ok(i);
    }
    let ctx = CallContext::default();
    merged_list(f, "resources/list", "resources", &ctx).await;
    merged_list(f, "resources/templates/list", "resourceTemplates", &ctx).await;
    lookup(f, uri).ok_or_else(|| {
        invalid(format!(
            "no server lists resource \"{uri}\" or a template it matches"
        ))
    })
}

fn lookup(f: &FleetInner, uri: &str) -> Option<usize> {
    let owners = f.owners.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(i) = owners.resources.get(uri) {
        return Some(*i);
    }
    owners
        .templates
        .iter()
        .filter(|(head, _)| !head.is_empty() && uri.starts_with(head.as_str()))
        .max_by_key(|(head, _)| head.len())
        .map(|(_, i)| *i)
}

/// `method` asked of every server at once (each within `listMs`, following its pages), the `key`
/// arrays joined in server order; a server that fails or does not answer in time is left out.
/// Prompts get their server's prefix; resources and templates are remembered for routing.
async fn merged_list(f: &FleetInner, method: &str, key: &str, ctx: &CallContext) -> Value {
    let budget = f.list_budget;
    let lists =
        join_all((0..f.members.len()).map(|i| list_one(f, i, method, key, ctx, budget))).await;
    let mut all = Vec::new();
    let mut owners = f.owners.lock().unwrap_or_else(|e| e.into_inner());
    for (i, items) in lists.into_iter().enumerate() {
        let server = &f.members[i].name;
        for mut item in items {
            match key {
                "prompts" => {
                    if let Some(n) = item.get("name").and_then(Value::as_str) {
                        item["name"] = Value::String(format!("{server}{SEPARATOR}{n}"));
                    }
                }
                "resources" => {
                    if let Some(u) = item.get("uri").and_then(Value::as_str) {
                        owners.resources.entry(u.to_string()).or_insert(i);
                    }
                }
                _ => {
                    if let Some(t) = item.get("uriTemplate").and_then(Value::as_str) {
                        let head = t.split('{').next().unwrap_or("").to_string();
                        if !owners.templates.contains(&(head.clone(), i)) {
                            owners.templates.push((head, i));
                        }
                    }
                }
            }
            all.push(item);
        }
    }
    let mut out = Map::new();
    out.insert(key.to_string(), Value::Array(all));
    Value::Object(out)
}

async fn list_one(
    f: &FleetInner,
    i: usize,
    method: &str,
    key: &str,
    ctx: &CallContext,
    budget: Duration,
) -> Vec<Value> {
    let m = &f.members[i];
    // A server that says it has none of these is not asked.
    let cap = if key == "prompts" {
        "prompts"
    } else {
        "resources"
    };
    if m.up
        .status()
        .capabilities
        .is_some_and(|c| c.get(cap).is_none())
    {
        return Vec::new();
    }
    let work = async {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => serde_json::json!({ "cursor": c }),
                None => serde_json::json!({}),
            };
            let page = match m.up.request(method, params, ctx).await {
                Ok(p) => p,
                Err(e) => {
                    tracing::debug!("{}", named(&m.name, e));
                    break;
                }
            };
            if let Some(Value::Array(a)) = page.get(key) {
                items.extend(a.iter().cloned());
            }
            cursor = page
                .get("nextCursor")
                .and_then(Value::as_str)
                .map(String::from);
            if cursor.is_none() {
                break;
            }
        }
        items
    };
    tokio::time::timeout(budget, work).await.unwrap_or_default()
}
