//! The fixture's ordinary tools: fixed content of every kind, an error result, logging and
//! progress notifications, 2025-era sampling and elicitation round trips, a JSON Schema 2020-12
//! tool, an `x-mcp-header` tool and the 2026-07-28 capability and logging probes.

use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};

use super::{result, text_result, tool, wire};

/// A 1x1 PNG and a silent WAV: the smallest valid media for content blocks.
pub const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/PchI7wAAAABJRU5ErkJggg==";
pub const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=";

/// Pause between the notifications a tool sends, so clients see them arrive in order.
const NOTIFY_GAP: std::time::Duration = std::time::Duration::from_millis(50);

fn no_args() -> Value {
    json!({"type": "object", "properties": {}})
}

pub fn tools() -> Vec<Tool> {
    let plain = [
        ("test_simple_text", "Returns simple text content"),
        ("test_image_content", "Returns image content"),
        ("test_audio_content", "Returns audio content"),
        (
            "test_embedded_resource",
            "Returns embedded resource content",
        ),
        (
            "test_multiple_content_types",
            "Returns text, image and resource content",
        ),
        (
            "test_tool_with_logging",
            "Sends logging notifications during execution",
        ),
        ("test_error_handling", "Always returns an error result"),
        ("test_tool_with_progress", "Reports progress notifications"),
        (
            "test_elicitation_sep1034_defaults",
            "Elicitation with default values (SEP-1034)",
        ),
        (
            "test_elicitation_sep1330_enums",
            "Elicitation with enum schemas (SEP-1330)",
        ),
        (
            "test_reconnection",
            "Answers after a short pause (SSE reconnection)",
        ),
        (
            "test_trigger_tool_change",
            "Notifies listen streams that the tool list changed",
        ),
        (
            "test_trigger_prompt_change",
            "Notifies listen streams that the prompt list changed",
        ),
        (
            "test_missing_capability",
            "Needs the client's sampling capability",
        ),
        (
            "test_streaming_elicitation",
            "Asks for input with an InputRequiredResult",
        ),
        (
            "test_logging_tool",
            "Logs only when the request sets a log level",
        ),
    ];
    let mut v: Vec<Tool> = plain.iter().map(|(n, d)| tool(n, d, no_args())).collect();
    v.push(tool("test_sampling", "Requests LLM sampling from the client", json!({
        "type": "object", "properties": {"prompt": {"type": "string", "description": "The prompt to send"}}, "required": ["prompt"]})));
    v.push(tool("test_elicitation", "Requests user input from the client", json!({
        "type": "object", "properties": {"message": {"type": "string", "description": "The message to show"}}, "required": ["message"]})));
    v.push(tool("json_schema_2020_12_tool", "Tool with JSON Schema 2020-12 features", json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
        "properties": {
            "name": {"type": "string"}, "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]}, "phone": {"type": "string"}, "email": {"type": "string"}},
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false})));
    v.push(tool("test_custom_header", "Echoes a value mirrored into the Mcp-Param-Value header (SEP-2243)", json!({
        "type": "object", "properties": {"value": {"type": "string", "x-mcp-header": "Value"}}, "required": ["value"]})));
    v.push(tool(UPDATE_RESOURCE, "Changes a resource and notifies its subscribers (notifications/resources/updated)", json!({
        "type": "object", "properties": {"uri": {"type": "string", "description": "The resource that changed"}}})));
    v
}

/// The tool that announces a resource change (handled in `main.rs`, which holds the subscribers).
pub const UPDATE_RESOURCE: &str = "test_update_resource";

#[rustfmt::skip] // one arm per tool, kept on one line each
pub async fn call(
    request: CallToolRequestParams,
    cx: RequestContext<RoleServer>,
) -> Result<CallToolResult, ErrorData> {
    let args = request.arguments.clone().unwrap_or_default();
    let arg = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_owned);
    let resource = |uri: &str, mime: &str, text: &str| json!({"type": "resource", "resource": {"uri": uri, "mimeType": mime, "text": text}});
    let fixed = |content: Value| Ok(result::<CallToolResult>(json!({"content": content})));
    if let Some((message, schema, label)) = elicitation_form(request.name.as_ref(), &args) {
        return elicit(&cx, &message, schema, label).await;
    }
    match request.name.as_ref() {
        "test_simple_text" => Ok(text_result("This is a simple text response for testing.")),
        "test_image_content" => fixed(json!([{"type": "image", "data": PNG, "mimeType": "image/png"}])),
        "test_audio_content" => fixed(json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}])),
        "test_embedded_resource" => fixed(json!([resource("test://embedded-resource", "text/plain", "This is an embedded resource content.")])),
        "test_multiple_content_types" => fixed(json!([
            {"type": "text", "text": "Multiple content types test:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            resource("test://mixed-content-resource", "application/json", r#"{"test":"data","value":123}"#),
        ])),
        "test_error_handling" => Ok(CallToolResult::error(vec![ContentBlock::text("This tool intentionally returns an error for testing")])),
        "test_tool_with_logging" => {
            for msg in ["Tool execution started", "Tool processing data", "Tool execution completed"] {
                let note = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(msg)).with_logger("conformance-upstream");
                let _ = cx.peer.notify_logging_message(note).await;
                tokio::time::sleep(NOTIFY_GAP).await;
            }
            Ok(text_result("Logging test completed"))
        }
        "test_tool_with_progress" => {
            let token = cx.meta.get_progress_token();
            for (progress, message) in [(0.0, "Starting"), (50.0, "Halfway"), (100.0, "Complete")] {
                if let Some(token) = &token {
                    let p = ProgressNotificationParam::new(token.clone(), progress).with_total(100.0).with_message(message);
                    let _ = cx.peer.notify_progress(p).await;
                }
                tokio::time::sleep(NOTIFY_GAP).await;
            }
            Ok(text_result("Progress test completed"))
        }
        "test_sampling" => {
            let prompt = arg("prompt").unwrap_or_else(|| "Hello".into());
            let params = CreateMessageRequestParams::new(vec![SamplingMessage::user_text(prompt)], 100);
            Ok(match cx.peer.create_message(params).await {
                Ok(r) => {
                    let text = r.message.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone());
                    text_result(format!("LLM response: {}", text.unwrap_or_else(|| "No text response".into())))
                }
                Err(e) => CallToolResult::error(vec![ContentBlock::text(format!("Sampling error: {e}"))]),
            })
        }
        "json_schema_2020_12_tool" => Ok(text_result(format!("Hello, {}!", arg("name").unwrap_or_else(|| "world".into())))),
        "test_reconnection" => {
            tokio::time::sleep(NOTIFY_GAP * 2).await;
            Ok(text_result("Reconnection test completed"))
        }
        "test_custom_header" => {
            let value = arg("value").ok_or_else(|| ErrorData::invalid_params("value must be a string", None))?;
            Ok(text_result(value))
        }
        "test_missing_capability" => {
            if cx.meta.client_capabilities().unwrap_or_default().sampling.is_none() {
                return Err(ErrorData::missing_required_client_capability(ClientCapabilities::builder().enable_sampling().build()));
            }
            Ok(text_result("Required capability declared"))
        }
        "test_logging_tool" => {
            if let Some(level) = cx.meta.log_level() {
                let note = LoggingMessageNotificationParam::new(level, json!("logLevel was requested")).with_logger("conformance-upstream");
                let _ = cx.peer.notify_logging_message(note).await;
            }
            Ok(text_result("Logging tool completed"))
        }
        other => Err(ErrorData::invalid_params(format!("Unknown tool: {other}"), None)),
    }
}

/// The message, schema and result label of the elicitation a `test_elicitation*` tool asks for
/// (2025 sessions ask by `elicitation/create`, 2026-07-28 requests by `InputRequiredResult`).
pub fn elicitation_form(
    tool: &str,
    args: &serde_json::Map<String, Value>,
) -> Option<(String, Value, &'static str)> {
    Some(match tool {
        "test_elicitation" => (
            args.get("message")
                .and_then(Value::as_str)
                .unwrap_or("Please provide your information")
                .to_string(),
            json!({
                "type": "object",
                "properties": {"username": {"type": "string", "description": "User's response"}, "email": {"type": "string", "description": "User's email address"}},
                "required": ["username", "email"]}),
            "User response",
        ),
        "test_elicitation_sep1034_defaults" => (
            "Please provide values (all have defaults)".into(),
            json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": "User's name", "default": "John Doe"},
                "age": {"type": "integer", "description": "User's age", "default": 30},
                "score": {"type": "number", "description": "User's score", "default": 95.5},
                "status": {"type": "string", "description": "User's status", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "description": "Whether user is verified", "default": true}}}),
            "Elicitation completed",
        ),
        "test_elicitation_sep1330_enums" => (
            "Test enum schema improvements".into(),
            json!({
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"}, {"const": "value2", "title": "Second Option"}, {"const": "value3", "title": "Third Option"}]},
                "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"], "enumNames": ["Option One", "Option Two", "Option Three"]},
                "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"}, {"const": "value2", "title": "Second Choice"}, {"const": "value3", "title": "Third Choice"}]}}}}),
            "Enum elicitation completed",
        ),
        _ => return None,
    })
}

/// A 2025-era elicitation round trip: ask the client, report what it answered.
async fn elicit(
    cx: &RequestContext<RoleServer>,
    message: &str,
    schema: Value,
    label: &str,
) -> Result<CallToolResult, ErrorData> {
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message.into(),
        requested_schema: wire(schema),
    };
    Ok(match cx.peer.create_elicitation(params).await {
        Ok(r) => {
            let action = serde_json::to_value(&r.action)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default();
            let content = r
                .content
                .map(|c| c.to_string())
                .unwrap_or_else(|| "none".into());
            text_result(format!("{label}: action={action}, content={content}"))
        }
        Err(e) => {
            CallToolResult::error(vec![ContentBlock::text(format!("Elicitation error: {e}"))])
        }
    })
}
