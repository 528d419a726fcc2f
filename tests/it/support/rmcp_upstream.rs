//! A dual-era upstream built on rmcp (the official Rust SDK, dev-dependency only): 27 tools served
//! in pages of 10, `echo` and `add` that really answer, `tools/list_changed` on demand over
//! `subscriptions/listen`, and a record of the `_meta` each call arrived with. Runs in-process on
//! loopback; `legacy_session_mode` picks sessions on or off for 2025 clients.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities,
    ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::Notify;

/// Tools per `tools/list` page, small so that pagination is exercised.
pub const PAGE: usize = 10;
/// Filler tools besides `echo`, `add` and `progress`.
pub const FILLER: usize = 25;

#[derive(Clone, Default)]
pub struct Shared {
    /// Extra tool names added at run time (then announce with `changed`).
    pub extra: Arc<Mutex<Vec<String>>>,
    pub changed: Arc<Notify>,
    /// The `_meta` of each `tools/call`, as the server saw it (serialized).
    pub call_meta: Arc<Mutex<Vec<Value>>>,
}

#[derive(Clone)]
struct Fixture(Shared);

fn schema(v: Value) -> Arc<serde_json::Map<String, Value>> {
    Arc::new(v.as_object().unwrap().clone())
}

fn all_tools(shared: &Shared) -> Vec<Tool> {
    let mut tools = vec![
        Tool::new(
            "echo",
            "Echoes the message back",
            schema(
                json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]}),
            ),
        ),
        Tool::new(
            "progress",
            "Reports progress, then answers",
            schema(json!({"type": "object"})),
        ),
        Tool::new(
            "add",
            "Adds two numbers",
            schema(
                json!({"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}}),
            ),
        ),
    ];
    for i in 0..FILLER {
        tools.push(Tool::new(
            format!("filler_{i:02}"),
            format!("Filler tool number {i}"),
            schema(json!({"type": "object"})),
        ));
    }
    for name in shared.extra.lock().unwrap().iter() {
        tools.push(Tool::new(
            name.clone(),
            "Added at run time",
            schema(json!({"type": "object"})),
        ));
    }
    tools
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("mws-rmcp-fixture", "1.0.0"))
        .with_instructions("fixture instructions".to_string())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = all_tools(&self.0);
        let start: usize = match request.and_then(|r| r.cursor) {
            Some(c) => c
                .parse()
                .map_err(|_| ErrorData::invalid_params("bad cursor", None))?,
            None => 0,
        };
        let end = (start + PAGE).min(tools.len());
        let mut r = ListToolsResult::with_all_items(tools[start..end].to_vec());
        if end < tools.len() {
            r.next_cursor = Some(end.to_string());
        }
        Ok(r)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut meta = serde_json::to_value(&ctx.meta).unwrap_or(Value::Null);
        if let (Some(m), Some(own)) = (meta.as_object_mut(), request.meta.as_ref())
            && let Ok(Value::Object(o)) = serde_json::to_value(own)
        {
            m.extend(o);
        }
        self.0.call_meta.lock().unwrap().push(meta);
        let args = request.arguments.unwrap_or_default();
        let text = match request.name.as_ref() {
            "echo" => format!(
                "Echo: {}",
                args.get("message").and_then(Value::as_str).unwrap_or("")
            ),
            "progress" => {
                // Reports progress against the caller's token before answering.
                if let Some(token) = ctx.meta.get_progress_token() {
                    for step in 1..=2 {
                        let p = ProgressNotificationParam::new(token.clone(), f64::from(step))
                            .with_total(2.0);
                        let _ = ctx.peer.notify_progress(p).await;
                    }
                }
                "done".to_string()
            }
            "add" => {
                let n = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
                format!("{}", n("a") + n("b"))
            }
            other => {
                return Err(ErrorData::invalid_params(
                    format!("unknown tool {other}"),
                    None,
                ));
            }
        };
        Ok(CallToolResult::success(vec![ContentBlock::text(text)]).into())
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        loop {
            tokio::select! {
                _ = context.cancelled() => return Ok(()),
                _ = self.0.changed.notified() => {
                    let _ = context.sink().notify_tool_list_changed().await;
                }
            }
        }
    }
}

/// A running fixture; stops when dropped.
pub struct RmcpUpstream {
    pub url: String,
    pub shared: Shared,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for RmcpUpstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

pub async fn start(legacy_session_mode: bool) -> RmcpUpstream {
    let shared = Shared::default();
    let handler = Fixture(shared.clone());
    let service: StreamableHttpService<Fixture, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Default::default(),
        StreamableHttpServerConfig::default()
            .with_legacy_session_mode(legacy_session_mode)
            .with_json_response(true)
            .with_sse_keep_alive(Some(Duration::from_secs(5))),
    );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    RmcpUpstream { url, shared, task }
}
