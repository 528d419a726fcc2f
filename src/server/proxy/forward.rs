//! A `tools/call` from a client: a meta-tool answered by the proxy, any other tool checked
//! (`guard_call`), forwarded, shaped (`results_call`) and logged, its result kept as the upstream
//! sent it where the transports on both sides allow (`mcp::raw`). Must not log arguments or
//! results.

use std::sync::atomic::Ordering;
use std::time::Instant;

use serde_json::{Value, json};

use crate::call::{Call, Status};
use crate::clock;
use crate::mcp::raw::Answer;
use crate::mcp::{Caller, RpcError, code};
use crate::results::PAGE_TOOL;
use crate::server::proxy::Proxy;
use crate::server::proxy::calls::{
    CLIENT_CALL_ID_KEYS, INPUT_REQUIRED, input_fields, outage_result, split_meta, text_result,
};
use crate::server::proxy::meta_tools::{
    self, CALL_READ_ONLY_TOOL, CALL_TOOL, RUN_SCRIPT, SEARCH_TOOLS,
};
use crate::upstream::{CallContext, UpstreamError};

/// How a call is forwarded: logged with `via`, cut to `results.maxTokens` (`shape`; a script's
/// calls are not: their results go to the script, never to the model), its result kept as sent
/// where it can be (`raw`).
#[derive(Debug, Clone, Copy)]
struct Forward<'a> {
    via: &'a str,
    shape: bool,
    raw: bool,
}

impl Proxy {
    /// A `tools/call`: a meta-tool answered here, any other tool forwarded. `raw`: a forwarded
    /// call's result may stay as sent (the transport writes it as it came).
    pub(super) async fn tools_call(
        &self,
        params: Value,
        caller: &Caller,
        raw: bool,
    ) -> Result<Answer, RpcError> {
        let Some(name) = params.get("name").and_then(Value::as_str).map(String::from) else {
            return Err(RpcError::new(
                code::INVALID_PARAMS,
                "tools/call needs a string 'name'",
            ));
        };
        self.seen(caller);
        let (params, ctx) = split_meta(params, caller);
        match name.as_str() {
            SEARCH_TOOLS => Ok(Answer::Tree(
                self.search_tools(params.get("arguments"), caller).await,
            )),
            PAGE_TOOL => Ok(Answer::Tree(
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
                    .map(Answer::Tree)
            }
            _ if name.starts_with(meta_tools::SHADOWED_PREFIX) => {
                // `upstream__search_tools` is the upstream's `search_tools` (meta_tools' rule).
                let snap = self.upstream.catalog().await;
                let real = meta_tools::upstream_name(&snap.catalog, &name).to_string();
                let mut params = params;
                params["name"] = json!(real);
                self.forward_call(&real, params, ctx, "direct", caller, true)
                    .await
                    .map(Answer::Tree)
            }
            RUN_SCRIPT if self.config.code_mode.enabled => self
                .run_script(params.get("arguments"), ctx, caller)
                .await
                .map(Answer::Tree),
            RUN_SCRIPT => Ok(Answer::Tree(text_result(
                "run_script is off in mws's config (`codeMode.enabled`); call tools one by one"
                    .into(),
                true,
            ))),
            _ => {
                let how = Forward {
                    via: "direct",
                    shape: true,
                    raw,
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
        let how = Forward {
            via,
            shape,
            raw: false,
        };
        match self.forward(tool, params, ctx, caller, how).await? {
            Answer::Tree(result) => Ok(result),
            // Not reached: only a `raw` call gets a result kept as sent.
            Answer::Raw(result) => result
                .into_value()
                .map_err(|e| RpcError::new(code::INTERNAL_ERROR, e.to_string())),
        }
    }

    /// `forward_call`, its result kept as sent where `how.raw` allows and the wire gives it so.
    async fn forward(
        &self,
        tool: &str,
        params: Value,
        ctx: CallContext,
        caller: &Caller,
        how: Forward<'_>,
    ) -> Result<Answer, RpcError> {
        let Forward { via, shape, raw } = how;
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
            Some((refusal, _)) => Ok(Answer::Tree(refusal)),
            None if raw => self.upstream.call_tool(params, &ctx).await,
            None => self
                .upstream
                .request("tools/call", params, &ctx)
                .await
                .map(Answer::Tree),
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
            Err(e @ UpstreamError::Held(_)) => Ok(Answer::Tree(text_result(e.to_string(), true))),
            Err(e) => Ok(Answer::Tree(outage_result(tool, &e))),
        }
    }

    /// `answer` cut to `results.maxTokens` (`shape`), and the bytes saved. A result kept as sent
    /// whose bulk is no longer than that cannot need it and passes as it is; a longer one is read
    /// into a tree first.
    async fn shaped(
        &self,
        answer: Answer,
        caller: &Caller,
    ) -> (Result<Answer, UpstreamError>, Option<usize>) {
        let result = match answer {
            Answer::Raw(r) if !self.results.may_exceed(r.kept_len()) => {
                return (Ok(Answer::Raw(r)), None);
            }
            Answer::Raw(r) => match r.into_value() {
                Ok(v) => v,
                Err(e) => {
                    let why = format!("the upstream's result does not read: {e}");
                    return (Err(UpstreamError::Protocol(why)), None);
                }
            },
            Answer::Tree(v) => v,
        };
        let (result, saved) = self.shape(result, caller).await;
        (Ok(Answer::Tree(result)), saved)
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
