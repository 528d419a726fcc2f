//! Test support, not shipped: the fixture MCP server that the official conformance suites
//! (`@modelcontextprotocol/conformance`, server scenarios) run against, directly or through
//! `mws serve`. It offers the `test_*` tools, prompts and resources those scenarios call, over
//! Streamable HTTP on loopback, dual-era (2026-07-28 stateless and 2025 sessions), built on the
//! rmcp dev-dependency. Run by scripts/conformance.sh:
//!
//! ```text
//! cargo run --example conformance_upstream -- PORT [--no-legacy-sessions]
//! ```
//!
//! PORT 0 picks a free port. The first line on stdout is the endpoint URL; logs go to stderr.

#![allow(deprecated)] // resources/subscribe is legacy-only, and the 2025 suites still test it

mod content;
mod interactive;
mod mrtr;

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::model::*;
use rmcp::service::{RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::Mutex;

/// The resource the 2025 suites subscribe to.
const WATCHED: &str = "test://watched-resource";

/// How long clients may cache list and read results (the fixture's lists never change).
const CACHE_TTL_MS: u64 = 60_000;

#[derive(Clone)]
struct Fixture {
    /// URIs subscribed with the legacy `resources/subscribe`.
    subscribed: Arc<Mutex<HashSet<String>>>,
    /// Open 2026-07-28 `subscriptions/listen` streams.
    listeners: Arc<Mutex<BTreeMap<u64, SubscriptionSink>>>,
    next_listener: Arc<AtomicU64>,
    log_level: Arc<Mutex<LoggingLevel>>,
    state_codec: RequestStateCodec,
}

impl Fixture {
    fn new() -> Fixture {
        Fixture {
            subscribed: Arc::default(),
            listeners: Arc::default(),
            next_listener: Arc::default(),
            log_level: Arc::new(Mutex::new(LoggingLevel::Debug)),
            state_codec: mrtr::codec(),
        }
    }

    async fn listeners(&self) -> Vec<SubscriptionSink> {
        self.listeners.lock().await.values().cloned().collect()
    }
}

/// A `tools/list` entry from a name, description and JSON Schema.
pub fn tool(name: &str, description: &str, schema: Value) -> Tool {
    let Value::Object(schema) = schema else {
        panic!("{name}: a tool schema is an object")
    };
    Tool::new(name.to_string(), description.to_string(), schema)
}

/// A tool result (or any rmcp result type) written as its wire JSON.
pub fn wire<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v.clone()).unwrap_or_else(|e| panic!("fixture JSON {v}: {e}"))
}

/// A result written as its wire JSON, marked `resultType: "complete"` as the rmcp constructors
/// do (rmcp strips it again for 2025 peers).
pub fn result<T: serde::de::DeserializeOwned>(mut v: Value) -> T {
    v["resultType"] = json!("complete");
    wire(v)
}

pub fn text_result(text: impl Into<String>) -> CallToolResult {
    CallToolResult::success(vec![ContentBlock::text(text.into())])
}

impl ServerHandler for Fixture {
    fn get_info(&self) -> ServerInfo {
        let mut caps = ServerCapabilities::builder()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_subscribe()
            .enable_resources_list_changed()
            .enable_tools()
            .enable_tool_list_changed()
            .enable_logging()
            .build();
        caps.completions = Some(Default::default());
        ServerInfo::new(caps)
            .with_server_info(Implementation::new(
                "mws-conformance-upstream",
                env!("CARGO_PKG_VERSION"),
            ))
            .with_instructions("The mws conformance fixture: test_* tools, prompts and resources.")
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        interactive::tools().into_iter().find(|t| t.name == name)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.supported_by(&self.get_info().capabilities))
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let key = self.next_listener.fetch_add(1, Ordering::Relaxed);
        self.listeners
            .lock()
            .await
            .insert(key, context.sink().clone());
        context.cancelled().await;
        self.listeners.lock().await.remove(&key);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tools = interactive::tools()
            .into_iter()
            .chain(mrtr::tools())
            .collect();
        Ok(ListToolsResult {
            tools,
            ..Default::default()
        }
        .with_ttl_ms(CACHE_TTL_MS)
        .with_cache_scope(CacheScope::Public))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        cx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name.starts_with(mrtr::PREFIX) || request.name == "test_streaming_elicitation" {
            return mrtr::call(&self.state_codec, &request, &cx.meta);
        }
        match request.name.as_ref() {
            "test_trigger_tool_change" => {
                for l in self.listeners().await {
                    let _ = l.notify_tool_list_changed().await;
                }
                Ok(text_result("Tool list change triggered").into())
            }
            interactive::UPDATE_RESOURCE => {
                let uri = request
                    .arguments
                    .as_ref()
                    .and_then(|a| a.get("uri"))
                    .and_then(Value::as_str)
                    .unwrap_or(WATCHED)
                    .to_string();
                // A listen stream sends it only when it named the URI; a legacy session when
                // `resources/subscribe` did.
                let mut told = 0;
                for l in self.listeners().await {
                    told += usize::from(l.notify_resource_updated(uri.clone()).await.is_ok());
                }
                if self.subscribed.lock().await.contains(&uri) {
                    let param = ResourceUpdatedNotificationParam::new(uri.clone());
                    told += usize::from(cx.peer.notify_resource_updated(param).await.is_ok());
                }
                Ok(text_result(format!("Updated {uri}; notified {told} subscriber(s)")).into())
            }
            "test_trigger_prompt_change" => {
                for l in self.listeners().await {
                    let _ = l.notify_prompt_list_changed().await;
                }
                Ok(text_result("Prompt list change triggered").into())
            }
            _ => match mrtr::interactive(&request, &cx.meta) {
                Some(answer) => answer,
                None => interactive::call(request, cx).await.map(Into::into),
            },
        }
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(content::resources()
            .with_ttl_ms(CACHE_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(content::templates()
            .with_ttl_ms(CACHE_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        content::read(request.uri.as_str()).map(|r| {
            r.with_ttl_ms(CACHE_TTL_MS)
                .with_cache_scope(CacheScope::Public)
                .into()
        })
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribed.lock().await.insert(request.uri.to_string());
        Ok(())
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribed.lock().await.remove(request.uri.as_str());
        Ok(())
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _cx: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(content::prompts()
            .with_ttl_ms(CACHE_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        if request.name == mrtr::PROMPT {
            return mrtr::prompt(&request);
        }
        content::prompt(&request).map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        content::complete(&request)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _cx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        *self.log_level.lock().await = request.level;
        Ok(())
    }
}

fn usage() -> ! {
    eprintln!("usage: conformance_upstream PORT [--no-legacy-sessions]");
    std::process::exit(2)
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port: u16 = args
        .first()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| usage());
    let legacy_sessions = match args.get(1).map(String::as_str) {
        None => true,
        Some("--no-legacy-sessions") => false,
        Some(_) => usage(),
    };
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let addr = listener.local_addr()?;
    let config = StreamableHttpServerConfig::default().with_legacy_session_mode(legacy_sessions);
    let fixture = Fixture::new();
    let service = StreamableHttpService::new(
        move || Ok(fixture.clone()),
        LocalSessionManager::default().into(),
        config,
    );
    let app = axum::Router::new().nest_service("/mcp", service);
    println!("http://{addr}/mcp");
    std::io::stdout().flush()?;
    eprintln!(
        "conformance_upstream: listening on http://{addr}/mcp (legacy sessions {legacy_sessions})"
    );
    axum::serve(listener, app).await?;
    Ok(())
}
