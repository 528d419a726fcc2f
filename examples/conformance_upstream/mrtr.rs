//! The fixture's 2026-07-28 multi-round tool calls (SEP-2322): tools and one prompt that answer
//! `InputRequiredResult` until the client retries with the `inputResponses` they asked for, with
//! `requestState` sealed (HMAC) so a tampered state is refused.

use rmcp::ErrorData;
use rmcp::model::*;
use serde_json::{Value, json};

use super::{text_result, tool, wire};

pub const PREFIX: &str = "test_input_required_result_";
pub const PROMPT: &str = "test_input_required_result_prompt";

/// Signing key for `requestState`. A fixed key is fine for a test fixture only.
const STATE_KEY: &[u8] = b"mws-conformance-fixture-request-state-key";

pub fn codec() -> RequestStateCodec {
    RequestStateCodec::new_unchecked(STATE_KEY)
}

pub fn tools() -> Vec<Tool> {
    [
        ("elicitation", "Asks for a name by elicitation, then greets"),
        ("sampling", "Asks the client's model a question by sampling"),
        ("list_roots", "Asks for the client's roots"),
        ("request_state", "Round-trips a sealed requestState"),
        ("tampered_state", "Refuses a tampered requestState"),
        (
            "multiple_inputs",
            "Asks for elicitation, sampling and roots at once",
        ),
        ("multi_round", "Asks twice, carrying state between rounds"),
        (
            "capabilities",
            "Asks only for inputs the client declared it supports",
        ),
    ]
    .iter()
    .map(|(n, d)| {
        tool(
            &format!("{PREFIX}{n}"),
            d,
            json!({"type": "object", "properties": {}}),
        )
    })
    .collect()
}

fn elicitation(message: &str, field: &str, ty: &str) -> InputRequest {
    InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: message.into(),
            requested_schema: wire(
                json!({"type": "object", "properties": {field: {"type": ty}}, "required": [field]}),
            ),
        },
    ))
}

fn sampling(prompt: &str, max_tokens: u32) -> InputRequest {
    InputRequest::CreateMessage(CreateMessageRequest::new(CreateMessageRequestParams::new(
        vec![SamplingMessage::user_text(prompt)],
        max_tokens,
    )))
}

fn roots() -> InputRequest {
    InputRequest::ListRoots(ListRootsRequest::default())
}

fn ask(requests: Vec<(&str, InputRequest)>, state: Option<String>) -> InputRequiredResult {
    let map: InputRequests = requests
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    InputRequiredResult::new(Some(map), state)
}

/// The client's answer under `key`, if it is an object (anything else counts as missing).
fn answer<'a>(
    responses: Option<&'a InputResponses>,
    key: &str,
) -> Option<&'a serde_json::Map<String, Value>> {
    responses
        .and_then(|r| r.get(key))
        .and_then(Value::as_object)
}

fn seal(codec: &RequestStateCodec, v: Value) -> Result<String, ErrorData> {
    codec
        .seal_json(&v)
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))
}

fn open(codec: &RequestStateCodec, sealed: &str) -> Result<Value, ErrorData> {
    codec
        .open_json(sealed)
        .map_err(|_| ErrorData::invalid_params("requestState failed integrity verification", None))
}

pub fn call(
    codec: &RequestStateCodec,
    request: &CallToolRequestParams,
    meta: &RequestMetaObject,
) -> Result<CallToolResponse, ErrorData> {
    let responses = request.input_responses.as_ref();
    let state = request.request_state.as_deref();
    let name = request.name.strip_prefix(PREFIX).unwrap_or(&request.name);
    let done = |text: String| Ok(text_result(text).into());
    match name {
        "test_streaming_elicitation" => Ok(ask(
            vec![(
                "streaming_elicitation",
                elicitation("Provide a value", "value", "string"),
            )],
            None,
        )
        .into()),
        "elicitation" => match answer(responses, "user_name") {
            Some(a) => done(format!(
                "Hello, {}!",
                a.get("content")
                    .and_then(|c| c.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or("friend")
            )),
            None => Ok(ask(
                vec![(
                    "user_name",
                    elicitation("What is your name?", "name", "string"),
                )],
                None,
            )
            .into()),
        },
        "sampling" => match answer(responses, "capital_question") {
            Some(a) => done(format!(
                "Sampling response: {}",
                a.get("content")
                    .and_then(|c| c.get("text"))
                    .and_then(Value::as_str)
                    .unwrap_or("(no text)")
            )),
            None => Ok(ask(
                vec![(
                    "capital_question",
                    sampling("What is the capital of France?", 100),
                )],
                None,
            )
            .into()),
        },
        "list_roots" => match answer(responses, "client_roots") {
            Some(a) => {
                let uris: Vec<&str> = a
                    .get("roots")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|r| r.get("uri").and_then(Value::as_str))
                    .collect();
                done(format!("Client roots: [{}]", uris.join(", ")))
            }
            None => Ok(ask(vec![("client_roots", roots())], None).into()),
        },
        "request_state" | "tampered_state" => match state {
            Some(sealed) => {
                open(codec, sealed)?;
                done("Confirmed: state-ok".into())
            }
            None => Ok(ask(
                vec![("confirm", elicitation("Please confirm", "ok", "boolean"))],
                Some(seal(codec, json!({"stage": "confirm"}))?),
            )
            .into()),
        },
        "multiple_inputs" => {
            if let Some(sealed) = state {
                open(codec, sealed)?;
            }
            let all = ["user_name", "greeting", "client_roots"]
                .iter()
                .all(|k| answer(responses, k).is_some());
            if all && state.is_some() {
                return done("All inputs received".into());
            }
            let asks = vec![
                (
                    "user_name",
                    elicitation("What is your name?", "name", "string"),
                ),
                ("greeting", sampling("Generate a greeting", 50)),
                ("client_roots", roots()),
            ];
            Ok(ask(asks, Some(seal(codec, json!({"stage": "gather"}))?)).into())
        }
        "multi_round" => {
            let round = match state {
                None => 0,
                Some(sealed) => open(codec, sealed)?
                    .get("round")
                    .and_then(Value::as_i64)
                    .unwrap_or(0),
            };
            match round {
                0 => Ok(ask(
                    vec![(
                        "step1",
                        elicitation("Step 1: What is your name?", "name", "string"),
                    )],
                    Some(seal(codec, json!({"round": 1}))?),
                )
                .into()),
                1 => Ok(ask(
                    vec![(
                        "step2",
                        elicitation("Step 2: What is your favorite color?", "color", "string"),
                    )],
                    Some(seal(codec, json!({"round": 2}))?),
                )
                .into()),
                _ => done("Multi-round flow complete".into()),
            }
        }
        "capabilities" => {
            if responses.is_some() {
                return done("Capability-aware flow complete".into());
            }
            let caps = meta.client_capabilities().unwrap_or_default();
            let mut asks = vec![];
            if caps.elicitation.is_some() {
                asks.push((
                    "user_name",
                    elicitation("What is your name?", "name", "string"),
                ));
            }
            if caps.sampling.is_some() {
                asks.push(("greeting", sampling("Generate a greeting", 50)));
            }
            if caps.roots.is_some() {
                asks.push(("client_roots", roots()));
            }
            if asks.is_empty() {
                return done("Client declared no MRTR-capable capabilities".into());
            }
            Ok(ask(asks, None).into())
        }
        _ => Err(ErrorData::invalid_params(
            format!("Unknown tool: {}", request.name),
            None,
        )),
    }
}

/// `prompts/get` for the prompt that needs an elicited answer first.
pub fn prompt(request: &GetPromptRequestParams) -> Result<GetPromptResponse, ErrorData> {
    match answer(request.input_responses.as_ref(), "user_context") {
        Some(a) => {
            let context = a
                .get("content")
                .and_then(|c| c.get("context"))
                .and_then(Value::as_str)
                .unwrap_or("(no context)");
            Ok(GetPromptResult::new(vec![PromptMessage::new_text(
                Role::User,
                format!("Prompt with elicited context: {context}"),
            )])
            .with_description("A prompt built from elicited context")
            .into())
        }
        None => Ok(ask(
            vec![(
                "user_context",
                elicitation("What context should the prompt use?", "context", "string"),
            )],
            None,
        )
        .into()),
    }
}

/// The key a 2026-07-28 request's `InputRequiredResult` files the interactive tools' question under.
const ASK_KEY: &str = "input";

/// `test_sampling` and the `test_elicitation*` tools for a 2026-07-28 request, which cannot get a
/// server->client request: they ask by `InputRequiredResult` when the client declared the
/// capability (else `-32021`), and answer as their 2025 round trips do once the client retries
/// with the input. `None` for other tools and for 2025 session requests.
pub fn interactive(
    request: &CallToolRequestParams,
    meta: &RequestMetaObject,
) -> Option<Result<CallToolResponse, ErrorData>> {
    let modern = meta.protocol_version().is_some_and(|v| !v.has_initialize());
    if !modern {
        return None;
    }
    let args = request.arguments.clone().unwrap_or_default();
    let caps = meta.client_capabilities().unwrap_or_default();
    let given = answer(request.input_responses.as_ref(), ASK_KEY);
    let done = |text: String| Some(Ok(text_result(text).into()));
    if request.name == "test_sampling" {
        if let Some(a) = given {
            let text = a
                .get("content")
                .and_then(|c| c.get("text"))
                .and_then(Value::as_str);
            return done(format!(
                "LLM response: {}",
                text.unwrap_or("No text response")
            ));
        }
        if caps.sampling.is_none() {
            let need = ClientCapabilities::builder().enable_sampling().build();
            return Some(Err(ErrorData::missing_required_client_capability(need)));
        }
        let prompt = args
            .get("prompt")
            .and_then(Value::as_str)
            .unwrap_or("Hello");
        return Some(Ok(ask(vec![(ASK_KEY, sampling(prompt, 100))], None).into()));
    }
    let (message, schema, label) = super::interactive::elicitation_form(&request.name, &args)?;
    if let Some(a) = given {
        let action = a.get("action").and_then(Value::as_str).unwrap_or_default();
        let content = a
            .get("content")
            .map_or_else(|| "none".into(), Value::to_string);
        return done(format!("{label}: action={action}, content={content}"));
    }
    if caps.elicitation.is_none() {
        let need = ClientCapabilities::builder().enable_elicitation().build();
        return Some(Err(ErrorData::missing_required_client_capability(need)));
    }
    let form = InputRequest::Elicitation(ElicitRequest::new(
        ElicitRequestParams::FormElicitationParams {
            meta: None,
            message,
            requested_schema: wire(schema),
        },
    ));
    Some(Ok(ask(vec![(ASK_KEY, form)], None).into()))
}
