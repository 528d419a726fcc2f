//! The fixture's resources (static text, static binary, a template), prompts and completions, as
//! the conformance scenarios `resources-*`, `prompts-*`, `completion-complete` and
//! `sep-2164-resource-not-found` expect them.

use rmcp::ErrorData;
use rmcp::model::*;
use serde_json::{Value, json};

use super::interactive::PNG;
use super::result;

const TEMPLATE_PREFIX: &str = "test://template/";

pub fn resources() -> ListResourcesResult {
    result(json!({"resources": [
        {"uri": "test://static-text", "name": "Static Text Resource", "description": "A static text resource for testing", "mimeType": "text/plain"},
        {"uri": "test://static-binary", "name": "Static Binary Resource", "description": "A static binary resource for testing", "mimeType": "image/png"},
    ]}))
}

pub fn templates() -> ListResourceTemplatesResult {
    result(json!({"resourceTemplates": [
        {"uriTemplate": "test://template/{id}/data", "name": "Dynamic Resource", "description": "A dynamic resource with parameter substitution", "mimeType": "application/json"},
    ]}))
}

pub fn read(uri: &str) -> Result<ReadResourceResult, ErrorData> {
    let contents = match uri {
        "test://static-text" => {
            json!({"uri": uri, "mimeType": "text/plain", "text": "This is the content of the static text resource."})
        }
        "test://static-binary" => json!({"uri": uri, "mimeType": "image/png", "blob": PNG}),
        _ => match uri
            .strip_prefix(TEMPLATE_PREFIX)
            .and_then(|r| r.strip_suffix("/data"))
        {
            Some(id) => json!({"uri": uri, "mimeType": "application/json",
                               "text": json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()}),
            None => {
                return Err(ErrorData::resource_not_found(
                    format!("Resource not found: {uri}"),
                    Some(json!({"uri": uri})),
                ));
            }
        },
    };
    Ok(result(json!({"contents": [contents]})))
}

pub fn prompts() -> ListPromptsResult {
    result(json!({"prompts": [
        {"name": "test_simple_prompt", "description": "A simple test prompt with no arguments"},
        {"name": "test_prompt_with_arguments", "description": "A test prompt that accepts arguments", "arguments": [
            {"name": "arg1", "description": "First test argument", "required": true},
            {"name": "arg2", "description": "Second test argument", "required": false}]},
        {"name": "test_prompt_with_embedded_resource", "description": "A test prompt that includes an embedded resource", "arguments": [
            {"name": "resourceUri", "description": "URI of the resource to embed", "required": false}]},
        {"name": "test_prompt_with_image", "description": "A test prompt that includes an image"},
        {"name": super::mrtr::PROMPT, "description": "A prompt that needs an elicited answer first (SEP-2322)"},
    ]}))
}

pub fn prompt(request: &GetPromptRequestParams) -> Result<GetPromptResult, ErrorData> {
    let arg = |k: &str| {
        request
            .arguments
            .as_ref()
            .and_then(|a| a.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let text = |t: &str| json!({"role": "user", "content": {"type": "text", "text": t}});
    let (description, messages) = match request.name.as_str() {
        "test_simple_prompt" => (
            "A simple test prompt",
            json!([text("This is a simple test prompt.")]),
        ),
        "test_prompt_with_arguments" => (
            "A prompt with arguments",
            json!([text(&format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                arg("arg1"),
                arg("arg2")
            ))]),
        ),
        "test_prompt_with_embedded_resource" => {
            let uri = Some(arg("resourceUri"))
                .filter(|u| !u.is_empty())
                .unwrap_or_else(|| "test://static-text".into());
            (
                "A prompt with an embedded resource",
                json!([
                    text("Here is a resource:"),
                    {"role": "user", "content": {"type": "resource", "resource": {"uri": uri, "mimeType": "text/plain", "text": "Resource content for prompt"}}},
                ]),
            )
        }
        "test_prompt_with_image" => (
            "A prompt with an image",
            json!([
                text("Here is an image:"),
                {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            ]),
        ),
        other => {
            return Err(ErrorData::invalid_params(
                format!("Unknown prompt: {other}"),
                None,
            ));
        }
    };
    Ok(result(
        json!({"description": description, "messages": messages}),
    ))
}

pub fn complete(request: &CompleteRequestParams) -> Result<CompleteResult, ErrorData> {
    let values: Vec<&str> = match request.argument.name.as_str() {
        "id" => vec!["1", "2", "3"],
        "name" => vec!["Alice", "Bob", "Charlie"],
        "style" => vec!["friendly", "formal", "casual"],
        "arg1" | "arg2" => vec!["alpha", "beta", "gamma"],
        _ => vec![],
    };
    let prefix = request.argument.value.as_str();
    let hits: Vec<&str> = values
        .into_iter()
        .filter(|v| v.starts_with(prefix))
        .collect();
    Ok(result(
        json!({"completion": {"values": hits, "total": hits.len(), "hasMore": false}}),
    ))
}
