//! Input requests through the proxy (docs/protocol.md): a 2026-07-28 rmcp upstream whose `greet`
//! tool needs an elicited name, then a sampled sentence (two `InputRequiredResult` rounds with
//! `requestState`), called through the real `mws serve` by the Python SDK client. A legacy
//! (2025 session) client answers them as ordinary server->client requests that mws relays; a
//! 2026 client gets the rounds passed through; a client that declared nothing makes mws tell the
//! upstream so (`-32021`); a client that never answers gets a clear error within `callMs`. A
//! `prompts/get` that asks for input reaches a legacy client the same way, and a session that set a
//! log level gets each round's log messages on the stream that carries the questions.

#![allow(deprecated)] // rmcp marks sampling deprecated (SEP-2577); clients still answer it

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::*;
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use crate::support::{peer, serve};

/// `callMs` of the proxy under test: how long the stalling client is waited for.
const CALL_MS: u64 = 3_000;

/// The upstream: `greet` asks twice, `plain` never asks; records each call's client capabilities.
#[derive(Clone, Default)]
struct Asker {
    caps_seen: Arc<Mutex<Vec<(String, Value)>>>,
}

fn tool(name: &str) -> Tool {
    Tool::new(
        name.to_string(),
        format!("{name} (input test)"),
        Arc::new(json!({"type": "object"}).as_object().unwrap().clone()),
    )
}

fn ask(key: &str, request: InputRequest, state: String) -> CallToolResponse {
    let map: InputRequests = [(key.to_string(), request)].into_iter().collect();
    InputRequiredResult::new(Some(map), Some(state)).into()
}

fn answer<'a>(request: &'a CallToolRequestParams, key: &str) -> Option<&'a Value> {
    request.input_responses.as_ref()?.get(key)
}

impl ServerHandler for Asker {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_prompts()
                .enable_logging()
                .build(),
        )
        .with_server_info(Implementation::new("mws-input-fixture", "1.0.0"))
    }

    async fn list_tools(
        &self,
        _: Option<PaginatedRequestParams>,
        _: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            tool("greet"),
            tool("plain"),
        ]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Asker::prompt(&request)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caps = cx.meta.client_capabilities().unwrap_or_default();
        let seen = serde_json::to_value(&caps).unwrap_or_default();
        self.caps_seen
            .lock()
            .unwrap()
            .push((request.name.to_string(), seen));
        let done = |t: String| Ok(CallToolResult::success(vec![ContentBlock::text(t)]).into());
        if request.name == "plain" {
            return done("plain answer".into());
        }
        if cx.meta.log_level().is_some() {
            let round = format!("greet asked with state {:?}", request.request_state);
            let note = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(round));
            let _ = cx.peer.notify_logging_message(note).await;
        }
        match request.request_state.as_deref() {
            None if caps.elicitation.is_none() => {
                Err(ErrorData::missing_required_client_capability(
                    ClientCapabilities::builder().enable_elicitation().build(),
                ))
            }
            None => {
                let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]});
                let form = ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: "What is your name?".into(),
                    requested_schema: serde_json::from_value(schema).unwrap(),
                };
                Ok(ask(
                    "name",
                    InputRequest::Elicitation(ElicitRequest::new(form)),
                    "asked-name".into(),
                ))
            }
            Some("asked-name") => {
                let name = answer(&request, "name")
                    .and_then(|a| a.pointer("/content/name"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| {
                        ErrorData::invalid_params("inputResponses lacks the name", None)
                    })?;
                let sample = CreateMessageRequestParams::new(
                    vec![SamplingMessage::user_text("Capital of France?")],
                    20,
                );
                let sample = InputRequest::CreateMessage(CreateMessageRequest::new(sample));
                Ok(ask("capital", sample, format!("asked-capital:{name}")))
            }
            Some(state) => {
                let name = state.strip_prefix("asked-capital:").unwrap_or("?");
                let said = answer(&request, "capital")
                    .and_then(|a| a.pointer("/content/text"))
                    .and_then(Value::as_str)
                    .unwrap_or("nothing");
                done(format!("Hello {name}, the model says {said}"))
            }
        }
    }
}

impl Asker {
    /// `ask_topic`: one round asking for a name by elicitation, then the prompt about it.
    fn prompt(request: &GetPromptRequestParams) -> Result<GetPromptResponse, ErrorData> {
        let given = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get("topic"));
        if let Some(name) = given
            .and_then(|a| a.pointer("/content/name"))
            .and_then(Value::as_str)
        {
            let text = format!("Write about {name}");
            return Ok(
                GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]).into(),
            );
        }
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
        let form = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Whom should the prompt be about?".into(),
            requested_schema: serde_json::from_value(schema).unwrap(),
        };
        let map: InputRequests = [(
            "topic".to_string(),
            InputRequest::Elicitation(ElicitRequest::new(form)),
        )]
        .into_iter()
        .collect();
        Ok(InputRequiredResult::new(Some(map), None).into())
    }
}

async fn start_upstream(asker: Asker) -> (String, tokio::task::JoinHandle<()>) {
    let service: StreamableHttpService<Asker, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(asker.clone()),
        Default::default(),
        StreamableHttpServerConfig::default().with_json_response(true),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    (url, task)
}

async fn run_client(url: &str, mode: &str, answer: &str, tools: &[&str]) -> Value {
    let out = tokio::process::Command::new(peer(".venv/bin/python"))
        .arg(peer("tests/peers/input_client.py"))
        .args([url, mode, answer])
        .args(tools)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(90), out)
        .await
        .expect("python client timed out")
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{mode} {answer}: {stderr}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_requests_reach_legacy_and_modern_clients() {
    let asker = Asker::default();
    let (up, task) = start_upstream(asker.clone()).await;
    let config = json!({"upstream": {"url": up}, "timeouts": {"callMs": CALL_MS}});
    let mut served = serve::start(&config, &[]);
    let greeted = json!({"text": "Hello Ada, the model says Paris", "isError": false});
    // (client mode, how it answers, tools, expected outcome per tool, capabilities the upstream saw)
    let cases = [
        (
            "legacy",
            "yes",
            vec!["greet", "plain", "prompt:ask_topic"],
            vec![
                greeted.clone(),
                json!({"text": "plain answer", "isError": false}),
                json!({"text": "Write about Ada"}),
            ],
            json!({"elicitation": {}, "sampling": {}}),
        ),
        (
            "2026-07-28",
            "yes",
            vec!["greet"],
            vec![greeted.clone()],
            json!({"elicitation": {}, "sampling": {}}),
        ),
        (
            "legacy",
            "none",
            vec!["greet"],
            vec![json!("capability")],
            json!({}),
        ),
        (
            "legacy",
            "stall",
            vec!["greet"],
            vec![json!(
                "the client did not answer the upstream's elicitation/create request within 3.0 s"
            )],
            json!({"elicitation": {}, "sampling": {}}),
        ),
        (
            "legacy",
            "logs",
            vec!["greet"],
            vec![greeted.clone()],
            json!({"elicitation": {}, "sampling": {}}),
        ),
        (
            "legacy",
            "refuse",
            vec!["greet"],
            vec![json!(
                "the client refused the upstream's elicitation/create request: the user closed the dialog"
            )],
            json!({"elicitation": {}, "sampling": {}}),
        ),
    ];
    for (mode, answer, tools, want, caps) in cases {
        asker.caps_seen.lock().unwrap().clear();
        let r = run_client(&served.url, mode, answer, &tools).await;
        for (tool, want) in tools.iter().zip(want) {
            let got = &r[*tool];
            match want.as_str() {
                // An error the user sees: the message names what went wrong.
                Some(part) => {
                    let e = got["error"].as_str().unwrap_or_default();
                    assert!(e.contains(part), "{mode} {answer} {tool}: {r}");
                }
                None => assert_eq!(got, &want, "{mode} {answer} {tool}: {r}"),
            }
        }
        // A session that asked for logs gets each round's, on the same stream as the questions.
        let logs = match answer {
            "logs" => json!([
                "greet asked with state None",
                "greet asked with state Some(\"asked-name\")",
                "greet asked with state Some(\"asked-capital:Ada\")"
            ]),
            _ => json!([]),
        };
        assert_eq!(r["logs"], logs, "{mode} {answer}");
        // The upstream heard what the client can answer (the SDK spells out elicitation's
        // modes: compare the capability names).
        for (tool, seen) in asker.caps_seen.lock().unwrap().iter() {
            let keys = |v: &Value| {
                v.as_object()
                    .map(|o| o.keys().cloned().collect::<std::collections::BTreeSet<_>>())
            };
            assert_eq!(keys(seen), keys(&caps), "{mode} {answer} {tool}: {seen}");
        }
    }
    served.stop();
    // One `calls` row per finished call, however many rounds it took; the stalled and the
    // refused calls never finished.
    let rows: Vec<(String, bool)> = served
        .calls()
        .into_iter()
        .map(|(tool, _, _, ok)| (tool, ok))
        .collect();
    let want = [
        ("greet", true),
        ("plain", true),
        ("greet", true),
        ("greet", false),
        ("greet", true),
    ];
    let want: Vec<(String, bool)> = want.iter().map(|(t, ok)| (t.to_string(), *ok)).collect();
    assert_eq!(rows, want);
    task.abort();
}
