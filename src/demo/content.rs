//! The demo upstream's resources, resource templates, prompts and completions, so that a proxy's
//! forwarding of those methods can be seen working. They read the same in-memory state as the
//! tools (sending mail changes the inbox resource).

use serde_json::{Value, json};

use super::tools::State;
use super::tools::{self, Args};
use crate::mcp::{RpcError, code};

/// 2025-era "resource not found" (2026-07-28 uses -32602 instead).
const LEGACY_RESOURCE_NOT_FOUND: i64 = code::RESOURCE_NOT_FOUND;

const INBOX: &str = "demo://mail/inbox";
const AGENDA: &str = "demo://calendar/agenda";
const LOGO: &str = "demo://brand/logo.png";
const FILE_PREFIX: &str = "demo://drive/file/";
const PEOPLE: &[&str] = &["priya@example.com", "sam@example.com", "jordan@example.com"];

pub fn list_resources() -> Value {
    json!({"resources": [
        {"uri": INBOX, "name": "inbox", "title": "Mail inbox", "description": "The demo inbox, newest first, as JSON", "mimeType": "application/json"},
        {"uri": AGENDA, "name": "agenda", "title": "Calendar agenda", "description": "Upcoming events on every calendar, as JSON", "mimeType": "application/json"},
        {"uri": LOGO, "name": "logo", "title": "Logo", "description": "A tiny PNG (a binary resource)", "mimeType": "image/png"},
    ]})
}

pub fn list_resource_templates() -> Value {
    json!({"resourceTemplates": [
        {"uriTemplate": format!("{FILE_PREFIX}{{file_id}}"), "name": "drive-file", "title": "Drive file", "description": "The text of a drive file by id", "mimeType": "text/plain"},
    ]})
}

/// `resources/read`; `modern` picks the not-found error code of the era.
pub fn read_resource(state: &State, params: &Value, modern: bool) -> Result<Value, RpcError> {
    let uri = params.get("uri").and_then(Value::as_str).ok_or_else(|| {
        RpcError::new(
            code::INVALID_PARAMS,
            "resources/read needs a string \"uri\"",
        )
    })?;
    let text = |mime: &str, t: String| {
        Ok(json!({"contents": [{"uri": uri, "mimeType": mime, "text": t}]}))
    };
    match uri {
        INBOX => text(
            "application/json",
            read_only(state, "mail_list_messages", json!({"label": "INBOX"})),
        ),
        AGENDA => text(
            "application/json",
            read_only(state, "calendar_list_events", json!({})),
        ),
        LOGO => Ok(
            json!({"contents": [{"uri": uri, "mimeType": "image/png", "blob": "iVBORw0KGgoAAAANSUhEUgAAAAQAAAADCAIAAAA7ljmRAAAAEUlEQVR4nGN49+4/HDHg5AAAm6ciRX7TIX8AAAAASUVORK5CYII="}]}),
        ),
        _ => {
            if let Some(id) = uri.strip_prefix(FILE_PREFIX)
                && let Some(f) = state.drive.files.iter().find(|f| f.id == id && !f.trashed)
            {
                return text(&f.mime, f.content.clone());
            }
            let code = if modern {
                code::INVALID_PARAMS
            } else {
                LEGACY_RESOURCE_NOT_FOUND
            };
            let mut e = RpcError::new(code, format!("Resource not found: {uri}"));
            e.data = Some(json!({"uri": uri}));
            Err(e)
        }
    }
}

/// Runs a listing tool on a copy of the mail and calendar, so a read never needs `&mut State`.
fn read_only(state: &State, tool: &str, args: Value) -> String {
    let mut copy = State::seeded(state.now);
    copy.mail.messages = state.mail.messages.clone();
    copy.calendar.events = state.calendar.events.clone();
    let args = args.as_object().cloned().unwrap_or_default();
    match tools::call(&mut copy, tool, &args) {
        Ok(out) => serde_json::to_string_pretty(&out.data).unwrap_or_default(),
        Err(e) => format!("{e:?}"),
    }
}

pub fn list_prompts() -> Value {
    json!({"prompts": [
        {"name": "triage_inbox", "title": "Triage my inbox", "description": "Summarise unread mail and propose replies"},
        {"name": "schedule_meeting", "title": "Schedule a meeting", "description": "Find a free slot with someone and invite them",
         "arguments": [
            {"name": "person", "description": "Email of the person to meet", "required": true},
            {"name": "topic", "description": "What the meeting is about", "required": false}]},
    ]})
}

pub fn get_prompt(state: &State, params: &Value) -> Result<Value, RpcError> {
    let name = params.get("name").and_then(Value::as_str).unwrap_or("");
    let args = params
        .get("arguments")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let a = Args(&args);
    let msg = |text: String, description: &str| json!({"description": description, "messages": [{"role": "user", "content": {"type": "text", "text": text}}]});
    match name {
        "triage_inbox" => {
            let unread = state
                .mail
                .messages
                .iter()
                .filter(|m| !m.read && m.labels.contains("INBOX"))
                .count();
            Ok(msg(
                format!(
                    "I have {unread} unread messages. List them with mail_list_messages (unread_only: true), summarise each in one line, and draft a reply for any that asks me something."
                ),
                "Triage my inbox",
            ))
        }
        "schedule_meeting" => {
            let person = a.str("person").ok_or_else(|| {
                RpcError::new(
                    code::INVALID_PARAMS,
                    "prompt schedule_meeting needs the argument \"person\"",
                )
            })?;
            let topic = a.str("topic").unwrap_or("a catch-up");
            Ok(msg(
                format!(
                    "Find a 30-minute slot this week when {person} and I are both free (calendar_find_free_time), then create an event about {topic} and invite them."
                ),
                "Schedule a meeting",
            ))
        }
        _ => Err(RpcError::new(
            code::INVALID_PARAMS,
            format!("unknown prompt: {name:?} (have triage_inbox, schedule_meeting)"),
        )),
    }
}

/// `completion/complete` for the prompt's `person` argument and the drive-file template.
pub fn complete(params: &Value) -> Result<Value, RpcError> {
    let prefix = params
        .pointer("/argument/value")
        .and_then(Value::as_str)
        .unwrap_or("");
    let arg = params
        .pointer("/argument/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let values: Vec<&str> = match arg {
        "person" => PEOPLE.to_vec(),
        "file_id" => vec!["doc_roadmap", "doc_agenda", "doc_notes", "sheet_budget"],
        _ => vec![],
    };
    let hits: Vec<&str> = values
        .into_iter()
        .filter(|v| v.starts_with(prefix))
        .collect();
    Ok(json!({"completion": {"values": hits, "total": hits.len(), "hasMore": false}}))
}
