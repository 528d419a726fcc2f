//! A `tools/call` from a client: a meta-tool answered by the proxy, any other tool checked
//! (`guard_call`), forwarded, shaped (`results_call`) and logged, its result kept as the upstream
//! sent it where the transports on both sides allow (`mcp::raw`). Must not log arguments or
//! results.

use std::sync::atomic::Ordering;
use std::time::Instant;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use crate::call::{Call, Status};
use crate::clock;
use crate::mcp::raw::{self, Answer};
use crate::mcp::{self, Caller, Era, RpcError, code};
use crate::results::{PAGE_TOOL, Results};
use crate::server::proxy::calls::{
    CLIENT_CALL_ID_KEYS, INPUT_REQUIRED, input_fields, outage_result, split_meta, text_result,
};
use crate::server::proxy::meta_tools::{
    self, CALL_READ_ONLY_TOOL, CALL_TOOL, RUN_SCRIPT, SEARCH_TOOLS,
};
use crate::server::proxy::{Proxy, Reply, bridge};
use crate::upstream::{CallContext, Upstream, UpstreamError};

/// A forwarded call's result as a transport takes it: a tree (`Value`), or for one that writes
/// lines (`Proxy::handle_line`) kept as sent where the upstream's wire keeps it so (`Answer`).
pub(super) trait Outcome: Sized + Send {
    /// What the transport writes: a message (`Value`), or a message or a line (`Reply`).
    type Reply: From<Value>;

    fn tree(result: Value) -> Self;

    /// The call sent upstream (`Upstream::request` or `Upstream::call_tool`).
    fn call<'a>(
        up: &'a dyn Upstream,
        params: Value,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<Self, UpstreamError>>;

    /// A top-level member of the result.
    fn member(&self, key: &str) -> Option<&Value>;

    /// What shaping to `results` needs of it: a tree, or nothing when it cannot exceed the limit.
    fn for_shaping(self, results: &Results) -> Shaping<Self>;

    /// The response to request `id` of `method`, bridged to the client's `era`.
    fn reply(id: &Value, method: &str, result: Self, era: Era) -> Self::Reply;
}

/// What shaping a result needs (`Outcome::for_shaping`).
pub(super) enum Shaping<A> {
    /// Shorter than any limit: it passes as it is.
    Passes(A),
    Tree(Value),
    /// Kept as sent, and its bytes do not read as JSON.
    Unread(String),
}

impl Outcome for Value {
    type Reply = Value;

    fn tree(result: Value) -> Value {
        result
    }

    fn call<'a>(
        up: &'a dyn Upstream,
        params: Value,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<Value, UpstreamError>> {
        up.request("tools/call", params, ctx)
    }

    fn member(&self, key: &str) -> Option<&Value> {
        self.get(key)
    }

    fn for_shaping(self, _: &Results) -> Shaping<Value> {
        Shaping::Tree(self)
    }

    fn reply(id: &Value, method: &str, result: Value, era: Era) -> Value {
        mcp::response(id, bridge::for_client(method, result, era))
    }
}

impl Outcome for Answer {
    type Reply = Reply;

    fn tree(result: Value) -> Answer {
        Answer::Tree(result)
    }

    fn call<'a>(
        up: &'a dyn Upstream,
        params: Value,
        ctx: &'a CallContext,
    ) -> BoxFuture<'a, Result<Answer, UpstreamError>> {
        up.call_tool(params, ctx)
    }

    fn member(&self, key: &str) -> Option<&Value> {
        Answer::member(self, key)
    }

    /// A result kept as sent whose bulk is no longer than `results.maxTokens` cannot need
    /// shaping and passes as it is; a longer one is read into a tree first.
    fn for_shaping(self, results: &Results) -> Shaping<Answer> {
        match self {
            Answer::Raw(r) if !results.may_exceed(r.kept_len()) => Shaping::Passes(Answer::Raw(r)),
            Answer::Raw(r) => match r.into_value() {
                Ok(v) => Shaping::Tree(v),
                Err(e) => Shaping::Unread(format!("the upstream's result does not read: {e}")),
            },
            Answer::Tree(v) => Shaping::Tree(v),
        }
    }

    fn reply(id: &Value, method: &str, result: Answer, era: Era) -> Reply {
        match result {
            Answer::Tree(r) => Reply::Msg(mcp::response(id, bridge::for_client(method, r, era))),
            Answer::Raw(r) => {
                let r = bridge::raw_for_client(method, r, era);
                Reply::Line(raw::response_bytes(id, &r))
            }
        }
    }
}

/// How a call is forwarded: logged with `via`, cut to `results.maxTokens` (`shape`; a script's
/// calls are not: their results go to the script, never to the model).
#[derive(Debug, Clone, Copy)]
struct Forward<'a> {
    via: &'a str,
    shape: bool,
}

impl Proxy {
    /// A `tools/call`: a meta-tool answered here, any other tool forwarded, its result as `A`
    /// takes it.
    pub(super) async fn tools_call<A: Outcome>(
        &self,
        params: Value,
        caller: &Caller,
    ) -> Result<A, RpcError> {
        let Some(name) = params.get("name").and_then(Value::as_str).map(String::from) else {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "tools/call needs a string 'name'",
            ));
        };
        self.seen(caller);
        let (params, ctx) = split_meta(params, caller);
        match name.as_str() {
            SEARCH_TOOLS => Ok(A::tree(
                self.search_tools(params.get("arguments"), caller).await,
            )),
            PAGE_TOOL => Ok(A::tree(
                self.page(params.get("arguments").cloned(), caller).await,
            )),
            CALL_TOOL | CALL_READ_ONLY_TOOL => {
                let runner = if name == CALL_TOOL {
                    CALL_TOOL
                } else {
                    CALL_READ_ONLY_TOOL
                };
                let input = input_fields(&params);
                self.call_tool(runner, params.get("arguments"), input, ctx, caller)
                    .await
                    .map(A::tree)
            }
            _ if name.starts_with(meta_tools::SHADOWED_PREFIX) => {
                // `upstream__search_tools` is the upstream's `search_tools` (meta_tools' rule).
                let snap = self.upstream.catalog().await;
                let real = meta_tools::upstream_name(&snap.catalog, &name).to_string();
                let mut params = params;
                params["name"] = json!(real);
                self.forward_call(&real, params, ctx, "direct", caller, true)
                    .await
                    .map(A::tree)
            }
            RUN_SCRIPT if self.config.code_mode.enabled => self
                .run_script(params.get("arguments"), ctx, caller)
                .await
                .map(A::tree),
            RUN_SCRIPT => Ok(A::tree(text_result(
                "run_script is off in mws's config (`codeMode.enabled`); call tools one by one"
                    .into(),
                true,
            ))),
            _ => {
                let how = Forward {
                    via: "direct",
                    shape: true,
                };
                self.forward(&name, params, ctx, caller, how).await
            }
        }
    }

    /// Sends one call upstream unless `refusal` refuses it, and logs it with `via`. `shape`:
    /// whether its result is cut to `results.maxTokens` (a script's calls are not: their results
    /// go to the script, never to the model).
    pub(crate) async fn forward_call(
        &self,
        tool: &str,
        params: Value,
        ctx: CallContext,
        via: &str,
        caller: &Caller,
        shape: bool,
    ) -> Result<Value, RpcError> {
        let how = Forward { via, shape };
        self.forward(tool, params, ctx, caller, how).await
    }

    /// `forward_call`, its result as `A` takes it.
    async fn forward<A: Outcome>(
        &self,
        tool: &str,
        params: Value,
        ctx: CallContext,
        caller: &Caller,
        how: Forward<'_>,
    ) -> Result<A, RpcError> {
        let Forward { via, shape } = how;
        let client_call_id = ctx.meta.as_ref().and_then(|m| {
            CLIENT_CALL_ID_KEYS
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_str))
                .map(String::from)
        });
        let start = Instant::now();
        let refusal = self.refusal(tool, &params).await;
        let refused = refusal.as_ref().map(|r| r.1);
        let result = match refusal {
            Some((refusal, _)) => Ok(A::tree(refusal)),
            None => A::call(&*self.upstream, params, &ctx).await,
        };
        let ms = i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX);
        if let Ok(a) = &result
            && a.member("resultType").and_then(Value::as_str) == Some(INPUT_REQUIRED)
        {
            // Not a finished call: the round that completes it (the client's retry) is logged.
            return Ok(result?);
        }
        let (result, bytes_saved) = match result {
            Ok(r) if refused.is_none() && shape => self.shaped(r, caller).await,
            other => (other, None),
        };
        let status = match &result {
            Ok(_) if let Some(status) = refused => status,
            Ok(r) if r.member("isError") == Some(&Value::Bool(true)) => Status::Error,
            Ok(_) => Status::Ok,
            Err(UpstreamError::Rpc { .. }) => Status::Error,
            Err(UpstreamError::Timeout { .. }) => Status::Timeout,
            Err(UpstreamError::Held(_)) => Status::Held,
            Err(_) => Status::Upstream,
        };
        if let Some(log) = &self.log {
            log.call(Call {
                ts: clock::fmt(clock::now()),
                session_id: self.stateless.session(caller, &self.run_id, Instant::now()),
                tool: tool.to_string(),
                via: via.to_string(),
                status: Some(status),
                ms: Some(ms),
                bytes_saved: bytes_saved.map(|b| i64::try_from(b).unwrap_or(i64::MAX)),
                client: caller.client.clone(),
                client_call_id,
                project: caller.project.as_deref().map(str::to_string),
                source_key: format!(
                    "proxy:{}:{}",
                    self.run_id,
                    self.seq.fetch_add(1, Ordering::Relaxed)
                ),
                ..Call::default()
            });
        }
        match result {
            Ok(r) => Ok(r),
            // The upstream's own JSON-RPC error is its answer, passed on as is.
            Err(e @ UpstreamError::Rpc { .. }) => Err(e.into()),
            // Never sent: the model reads why, and that only the user can change it.
            Err(e @ UpstreamError::Held(_)) => Ok(A::tree(text_result(e.to_string(), true))),
            Err(e) => Ok(A::tree(outage_result(tool, &e))),
        }
    }

    /// `result` cut to `results.maxTokens` (`shape`), and the bytes saved.
    async fn shaped<A: Outcome>(
        &self,
        result: A,
        caller: &Caller,
    ) -> (Result<A, UpstreamError>, Option<usize>) {
        match result.for_shaping(&self.results) {
            Shaping::Passes(r) => (Ok(r), None),
            Shaping::Tree(v) => {
                let (result, saved) = self.shape(v, caller).await;
                (Ok(A::tree(result)), saved)
            }
            Shaping::Unread(why) => (Err(UpstreamError::Protocol(why)), None),
        }
    }

    /// Why `tool` may not be called with `params` (`guard_call`): the result to answer with and
    /// the call's status.
    async fn refusal(&self, tool: &str, params: &Value) -> Option<(Value, Status)> {
        if self.guard.is_open() {
            return None;
        }
        let snap = self.upstream.catalog().await;
        self.guard.refuse(&snap, tool, params)
    }
}
