//! The proxy's side of code mode, `run_script` (docs/code-mode.md): the script runs on a blocking
//! thread (`crate::script`), and each `tools.<name>(args)` it makes is run on that thread, on the
//! runtime (`Handle::block_on`), through the path every call takes (`target` for the name, then
//! `forward_call` with `via` `script`: the policy, held definitions, the schema check, the `calls`
//! row), unshaped, since its result goes to the script and never to the model. What the script
//! returns is shaped like any result, and the run is one `script_runs` row. Must not log, store or
//! echo the script's text, its tool calls' arguments or their results.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde_json::{Value, json};

use crate::clock;
use crate::mcp::{Caller, RpcError};
use crate::script::{self, Failure, Host, Limit, Limits, Outcome, Reply, Returned, STACK_BYTES};
use crate::server::proxy::Proxy;
use crate::server::proxy::call_meta::Target;
use crate::server::proxy::calls::{is_input_request, text_result};
use crate::server::proxy::meta_tools::RUN_SCRIPT;
use crate::store::ScriptRecord;
use crate::upstream::CallContext;

/// Longest script accepted, in bytes. Raising it lets a model send longer scripts, each parsed
/// in the engine's memory.
pub const MAX_CODE_BYTES: usize = 64 * 1024;

/// Scripts running at once; a further one waits for a slot. Raising it lets more engines (each up
/// to `codeMode.memoryMb`) and blocking threads run together.
pub const MAX_RUNNING_SCRIPTS: usize = 4;

/// Sets its flag when dropped: the `run_script` call ended or its client went away.
struct SetOnDrop(Arc<AtomicBool>);

impl Drop for SetOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

impl Proxy {
    /// `run_script` with its `args`: the script's answer (or why it failed) as a tool result.
    pub(crate) async fn run_script(
        &self,
        args: Option<&Value>,
        ctx: CallContext,
        caller: &Caller,
    ) -> Result<Value, RpcError> {
        let code = match args.and_then(|a| a.get("code")) {
            Some(Value::String(c)) if c.len() > MAX_CODE_BYTES => {
                return Ok(text_result(
                    format!(
                        "{RUN_SCRIPT}: the script is {} bytes, over the {MAX_CODE_BYTES} allowed; \
                         write a shorter one",
                        c.len()
                    ),
                    true,
                ));
            }
            Some(Value::String(c)) if !c.trim().is_empty() => c.clone(),
            _ => {
                return Ok(text_result(
                    format!(
                        "{RUN_SCRIPT} needs 'code': the body of an async JavaScript function, \
                         such as `const r = await tools.<name>({{...}}); return r;`"
                    ),
                    true,
                ));
            }
        };
        let Some(proxy) = self.me.upgrade() else {
            return Ok(text_result(format!("{RUN_SCRIPT}: mws is stopping"), true));
        };
        let limits = Limits::of(&self.config.code_mode);
        let start = Instant::now();
        // Never closed: the permit is only ever waited for. It goes with the script's thread, so
        // a script whose client went away still holds its slot until it ends.
        let slot = self.scripts.clone().acquire_owned().await.ok();
        let gone = Arc::new(AtomicBool::new(false));
        let _gone_when_dropped = SetOnDrop(gone.clone());
        let on_thread = caller.clone();
        let runtime = tokio::runtime::Handle::current();
        // Each tool call runs on the script's own thread, on the runtime, with no hop between
        // threads: a call in a script costs what the same call costs from a client.
        let outcome = tokio::task::spawn_blocking(move || {
            let _slot = slot;
            let host: Host = Box::new(move |name, args, left| {
                if gone.load(Ordering::Relaxed) {
                    return Reply::Error("mws stopped the script: its caller went away".into());
                }
                let call = proxy.script_call(name, args, &ctx, &on_thread);
                runtime
                    .block_on(async { tokio::time::timeout(left, call).await })
                    .unwrap_or_else(|_| {
                        Reply::Error(format!("tools.{name}: no answer within the script's time"))
                    })
            });
            script::run(&code, &limits, host)
        })
        .await;
        let outcome = match outcome {
            Ok(o) => o,
            Err(e) => std::panic::resume_unwind(e.into_panic()),
        };
        let output_bytes = match &outcome.result {
            Ok(Returned::Text(s) | Returned::Json(s)) => s.len(),
            _ => 0,
        };
        let result = answer(&outcome, &limits);
        let (result, _saved) = match outcome.result {
            Ok(_) => self.shape(result, caller).await,
            Err(_) => (result, None),
        };
        if let Some(log) = &self.log {
            log.script(ScriptRecord {
                ts: clock::fmt(clock::now()),
                session_id: Some(self.stateless.session(caller, &self.run_id, Instant::now())),
                client: caller.client.clone(),
                outcome: outcome.kind().into(),
                ms: i64::try_from(start.elapsed().as_millis()).unwrap_or(i64::MAX),
                calls: i64::from(outcome.calls),
                memory_bytes: i64::try_from(outcome.memory_bytes).unwrap_or(i64::MAX),
                output_bytes: i64::try_from(output_bytes).unwrap_or(i64::MAX),
            });
        }
        Ok(result)
    }

    /// One `tools.<name>(args)` from a script: resolved as `call_tool` resolves a name, then
    /// forwarded and logged with `via` `script`, its result left whole for the script.
    async fn script_call(
        &self,
        name: &str,
        args: Value,
        ctx: &CallContext,
        caller: &Caller,
    ) -> Reply {
        let snap = self.upstream.catalog().await;
        let held = match self.target(&snap, RUN_SCRIPT, name) {
            Target::Tool(held) => held,
            Target::Search => {
                return Reply::Error(format!(
                    "tools.{name}: search_tools cannot be called from a script; search first, \
                     then write the script"
                ));
            }
            Target::Answer(refusal) => return Reply::Error(text_of(&refusal)),
        };
        // The client's call id belongs to the `run_script` call, not to the calls it makes.
        let ctx = CallContext {
            client: ctx.client.clone(),
            meta: None,
            client_capabilities: ctx.client_capabilities.clone(),
        };
        let params = json!({"name": held, "arguments": args});
        match self
            .forward_call(&held, params, ctx, "script", caller, false)
            .await
        {
            Err(e) => Reply::Error(e.message),
            Ok(r) if is_input_request(&r) => Reply::Error(format!(
                "tools.{name} asks the user for input, which a script cannot give; call it with \
                 call_tool instead"
            )),
            Ok(r) => reply_of(r),
        }
    }
}

/// A tool's result as the script sees it: `structuredContent` when there is one, else its text
/// as one string; an `isError` result is thrown with the tool's message.
fn reply_of(mut r: Value) -> Reply {
    if r.get("isError") == Some(&json!(true)) {
        return Reply::Error(text_of(&r));
    }
    match r
        .as_object_mut()
        .and_then(|o| o.remove("structuredContent"))
    {
        Some(v) if !v.is_null() => Reply::Value(v),
        _ => Reply::Value(Value::String(text_of(&r))),
    }
}

/// The text parts of a result, joined by newlines.
fn text_of(r: &Value) -> String {
    let parts = r.get("content").and_then(Value::as_array);
    parts
        .into_iter()
        .flatten()
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The tool result the model reads: what the script returned (and its `console.log` lines), or
/// why it failed, with the limit it broke named by its config field.
fn answer(outcome: &Outcome, limits: &Limits) -> Value {
    let mut result = match &outcome.result {
        Ok(Returned::Nothing) => text_result(
            "the script returned nothing: end it with `return <value>` to see a result".into(),
            false,
        ),
        Ok(Returned::Text(t) | Returned::Json(t)) => text_result(t.clone(), false),
        Err(f) => {
            let made = match outcome.calls {
                0 => String::new(),
                1 => "\n(it had made 1 tool call)".into(),
                n => format!("\n(it had made {n} tool calls)"),
            };
            text_result(format!("{}{made}", failure_text(f, limits)), true)
        }
    };
    if !outcome.logs.is_empty()
        && let Some(parts) = result.get_mut("content").and_then(Value::as_array_mut)
    {
        parts.push(json!({"type": "text", "text": format!("console.log:\n{}", outcome.logs)}));
    }
    result
}

fn failure_text(f: &Failure, limits: &Limits) -> String {
    let at = |line: &Option<u32>| line.map(|l| format!(" at line {l}")).unwrap_or_default();
    match f {
        Failure::Syntax { message, line } => {
            format!("the script does not parse{}: {message}", at(line))
        }
        Failure::Thrown { message, line } => format!("the script threw{}: {message}", at(line)),
        Failure::NeverSettled => "the script awaited a promise that can never settle (only \
                                  tools.* calls and the script's own promises settle)"
            .into(),
        Failure::Limit(limit) => {
            let why = match limit {
                Limit::Time => format!(
                    "ran longer than codeMode.timeoutMs ({} ms)",
                    limits.run_time.as_millis()
                ),
                Limit::Memory => format!(
                    "used more memory than codeMode.memoryMb ({} MB)",
                    limits.memory_bytes / (1024 * 1024)
                ),
                Limit::Stack => format!(
                    "recursed deeper than the sandbox's {} KB stack allows",
                    STACK_BYTES / 1024
                ),
                Limit::Calls => format!(
                    "made more tool calls than codeMode.maxCalls ({})",
                    limits.max_calls
                ),
                Limit::Output => format!(
                    "returned more than codeMode.maxOutputBytes ({} bytes); return a smaller \
                     summary",
                    limits.max_output_bytes
                ),
            };
            format!("the script was stopped: it {why}.")
        }
    }
}
