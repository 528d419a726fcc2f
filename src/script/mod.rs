//! Code mode's sandbox: one JavaScript script run in an embedded QuickJS engine (`rquickjs`),
//! where every upstream tool is `tools.<name>(args)` and each call goes out through the `Host`
//! callback the caller gives. The script gets no file system, network, clock, environment,
//! process or module loader: the context has only the language's own objects (no `Date`, no
//! `performance`), plus `tools` and `console.log`. Limits on run time, memory, stack, tool calls
//! and output stop it with the limit named (`Limit`). Must not do I/O, read the wall clock, or
//! log or keep the script's text, its arguments or its results.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::context::intrinsic;
use rquickjs::{CatchResultExt, CaughtError, Context, Ctx, Function, Runtime, Value as JsValue};
use serde_json::{Value, json};

use crate::config::CodeMode;

pub mod signature;

/// The file name errors and stack traces give the script; a line number follows it.
const SCRIPT_FILE: &str = "script";
/// Most bytes of `console.log` output kept. Raising it lets a script's logs use more of the
/// model's context.
pub const MAX_LOG_BYTES: usize = 4096;
/// The native stack a script's JavaScript may use. Raising it allows deeper recursion before
/// "stack" stops the script; the thread's own stack (2 MiB for a blocking task) bounds it.
pub const STACK_BYTES: usize = 512 * 1024;

/// A script's memory is measured at every this many tool calls (and at the end): measuring walks
/// the engine's heap. Lowering it measures more often and costs each call more.
pub const MEMORY_SAMPLE_EVERY: u32 = 8;

/// What `tools`, `console` and the call bridge are made of; run before the script, in a file of
/// its own so that its frames never carry the script's line numbers.
const PRELUDE: &str = include_str!("prelude.js");

/// The limits a script runs under (`codeMode` in the config).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    pub run_time: Duration,
    pub memory_bytes: usize,
    pub max_calls: u32,
    pub max_output_bytes: usize,
}

impl Limits {
    pub fn of(config: &CodeMode) -> Limits {
        Limits {
            run_time: Duration::from_millis(config.timeout_ms),
            memory_bytes: (config.memory_mb * 1024.0 * 1024.0) as usize,
            max_calls: config.max_calls,
            max_output_bytes: config.max_output_bytes,
        }
    }
}

/// The limit a script broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Time,
    Memory,
    Stack,
    Calls,
    Output,
}

impl Limit {
    /// The `script_runs.outcome` value.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Time => "time",
            Limit::Memory => "memory",
            Limit::Stack => "stack",
            Limit::Calls => "calls",
            Limit::Output => "output",
        }
    }
}

/// A tool call's answer, as the script sees it: a value, or an error it throws.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Value(Value),
    Error(String),
}

/// Makes one tool call for the script: the tool's name as the script wrote it, its arguments
/// (checked to be an object), and how long the script may still run.
pub type Host = Box<dyn FnMut(&str, Value, Duration) -> Reply>;

/// What the script returned.
#[derive(Debug, Clone, PartialEq)]
pub enum Returned {
    /// `undefined`: the script has no `return`.
    Nothing,
    /// A string, as is.
    Text(String),
    /// Anything else, as JSON text.
    Json(String),
}

/// Why a script failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The script does not parse: the engine's message and the line.
    Syntax { message: String, line: Option<u32> },
    /// The script threw (a tool's error it did not catch, or its own): the message and the line.
    Thrown { message: String, line: Option<u32> },
    /// The script broke a limit and was stopped.
    Limit(Limit),
    /// The script awaited something that can never settle.
    NeverSettled,
}

/// A run: its result, the tool calls it made, and the most memory the engine held (at a tool call
/// or at the end).
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub result: Result<Returned, Failure>,
    pub logs: String,
    pub calls: u32,
    pub memory_bytes: u64,
}

impl Outcome {
    /// The `script_runs.outcome` value.
    pub fn kind(&self) -> &'static str {
        match &self.result {
            Ok(_) => "ok",
            Err(Failure::Syntax { .. }) => "syntax",
            Err(Failure::Thrown { .. }) => "error",
            Err(Failure::NeverSettled) => "never_settled",
            Err(Failure::Limit(l)) => l.as_str(),
        }
    }
}

/// What the run shares between the engine's callbacks.
struct Shared {
    deadline: Instant,
    stop: Cell<Option<Limit>>,
    calls: Cell<u32>,
    logs: RefCell<String>,
    /// The most memory the engine held at a sampled tool call (`MEMORY_SAMPLE_EVERY`).
    peak: Cell<u64>,
}

/// Runs `code` under `limits`, each tool call through `host`. Blocks: run it off the async
/// workers.
pub fn run(code: &str, limits: &Limits, host: Host) -> Outcome {
    let shared = Rc::new(Shared {
        deadline: Instant::now() + limits.run_time,
        stop: Cell::new(None),
        calls: Cell::new(0),
        logs: RefCell::new(String::new()),
        peak: Cell::new(0),
    });
    let (result, memory_bytes) = match engine(limits) {
        Ok((rt, cx)) => {
            let watch = shared.clone();
            rt.set_interrupt_handler(Some(Box::new(move || {
                if watch.stop.get().is_some() {
                    return true;
                }
                if Instant::now() >= watch.deadline {
                    watch.stop.set(Some(Limit::Time));
                    return true;
                }
                false
            })));
            let result = cx.with(|ctx| run_in(&ctx, code, limits, host, &shared));
            let used = rt.memory_usage().malloc_size.max(0) as u64;
            (result, used.max(shared.peak.get()))
        }
        Err(_) => (Err(Failure::Limit(Limit::Memory)), 0),
    };
    let result = match (result, shared.stop.get()) {
        // A limit hit is the reason, whatever the script made of the error it saw.
        (_, Some(limit)) => Err(Failure::Limit(limit)),
        (r, None) => r,
    };
    Outcome {
        result,
        logs: shared.logs.take(),
        calls: shared.calls.get(),
        memory_bytes,
    }
}

/// A runtime under the memory and stack limits, with a context of the language's own objects.
fn engine(limits: &Limits) -> rquickjs::Result<(Runtime, Context)> {
    let rt = Runtime::new()?;
    rt.set_memory_limit(limits.memory_bytes);
    rt.set_max_stack_size(STACK_BYTES);
    let cx = Context::custom::<(
        intrinsic::Eval,
        intrinsic::RegExpCompiler,
        intrinsic::RegExp,
        intrinsic::Json,
        intrinsic::Proxy,
        intrinsic::MapSet,
        intrinsic::Promise,
    )>(&rt)?;
    Ok((rt, cx))
}

fn run_in(
    ctx: &Ctx<'_>,
    code: &str,
    limits: &Limits,
    host: Host,
    shared: &Rc<Shared>,
) -> Result<Returned, Failure> {
    install(ctx, limits, host, shared).map_err(|e| thrown(ctx, e))?;
    let mut options = rquickjs::context::EvalOptions::default();
    options.strict = false;
    options.filename = Some(SCRIPT_FILE.into());
    // On the script's first line, so that the engine's line numbers are the script's.
    let wrapped = format!("(async () => {{{code}\n}})()");
    let promise: rquickjs::Promise = ctx
        .eval_with_options(wrapped, options)
        .catch(ctx)
        .map_err(|e| failure(e, true))?;
    loop {
        if let Some(settled) = promise.result::<JsValue>() {
            let value = settled.catch(ctx).map_err(|e| failure(e, false))?;
            return returned(ctx, value, limits);
        }
        // A job that throws (the interrupt) leaves the promise pending: the limit is the reason.
        if !ctx.execute_pending_job() {
            return Err(shared
                .stop
                .get()
                .map_or(Failure::NeverSettled, Failure::Limit));
        }
    }
}

/// `__mws_call` and `__mws_log`, then the prelude, which hides them behind `tools` and `console`.
fn install(
    ctx: &Ctx<'_>,
    limits: &Limits,
    host: Host,
    shared: &Rc<Shared>,
) -> rquickjs::Result<()> {
    let max_calls = limits.max_calls;
    let s = shared.clone();
    // The engine never calls back into the host while the host runs: one borrow at a time.
    let host = RefCell::new(host);
    let call = Function::new(
        ctx.clone(),
        move |ctx: Ctx<'_>, name: String, args: String| {
            if s.calls.get().is_multiple_of(MEMORY_SAMPLE_EVERY) {
                s.peak.set(s.peak.get().max(memory_now(&ctx)));
            }
            let reply = bridge(&s, max_calls, &mut host.borrow_mut(), &name, &args);
            match reply {
                Reply::Value(v) => json!({"v": v}).to_string(),
                Reply::Error(e) => json!({"e": e}).to_string(),
            }
        },
    )?;
    let s = shared.clone();
    let log = Function::new(ctx.clone(), move |line: String| {
        let mut logs = s.logs.borrow_mut();
        if logs.len() < MAX_LOG_BYTES {
            let room = MAX_LOG_BYTES - logs.len();
            let cut = floor_char_boundary(&line, room);
            logs.push_str(&line[..cut]);
            logs.push('\n');
        }
    })?;
    let globals = ctx.globals();
    globals.set("__mws_call", call)?;
    globals.set("__mws_log", log)?;
    let mut options = rquickjs::context::EvalOptions::default();
    options.filename = Some("mws".into());
    ctx.eval_with_options::<(), _>(PRELUDE, options)
}

/// The memory the engine holds now, by its own count.
fn memory_now(ctx: &Ctx<'_>) -> u64 {
    let mut usage = std::mem::MaybeUninit::<rquickjs::qjs::JSMemoryUsage>::zeroed();
    // SAFETY: `ctx` is a live context of this thread's runtime, and computing the usage only
    // reads the runtime's own counters into `usage`, which it fills whole.
    let usage = unsafe {
        let rt = rquickjs::qjs::JS_GetRuntime(ctx.as_raw().as_ptr());
        rquickjs::qjs::JS_ComputeMemoryUsage(rt, usage.as_mut_ptr());
        usage.assume_init()
    };
    usage.malloc_size.max(0) as u64
}

/// One tool call from the script, under the call and time limits.
fn bridge(s: &Shared, max_calls: u32, host: &mut Host, name: &str, args: &str) -> Reply {
    if s.stop.get().is_some() {
        return Reply::Error("the script was stopped".into());
    }
    if s.calls.get() >= max_calls {
        s.stop.set(Some(Limit::Calls));
        return Reply::Error(format!(
            "the script may make at most {max_calls} tool calls"
        ));
    }
    let left = s.deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        s.stop.set(Some(Limit::Time));
        return Reply::Error("the script ran out of time".into());
    }
    let args = match serde_json::from_str::<Value>(args) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => {
            return Reply::Error(format!(
                "tools.{name}: the arguments must be an object, got {}",
                kind(&other)
            ));
        }
        Err(e) => return Reply::Error(format!("tools.{name}: arguments are not JSON: {e}")),
    };
    s.calls.set(s.calls.get() + 1);
    let reply = host(name, args, left);
    if Instant::now() >= s.deadline {
        s.stop.set(Some(Limit::Time));
    }
    reply
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The returned value as text, within `max_output_bytes`.
fn returned<'js>(
    ctx: &Ctx<'js>,
    value: JsValue<'js>,
    limits: &Limits,
) -> Result<Returned, Failure> {
    let out = if value.is_undefined() {
        Returned::Nothing
    } else if let Some(s) = value.as_string() {
        Returned::Text(s.to_string().map_err(|e| thrown(ctx, e))?)
    } else {
        match ctx.json_stringify(value).catch(ctx) {
            Ok(Some(s)) => Returned::Json(s.to_string().map_err(|e| thrown(ctx, e))?),
            Ok(None) => Returned::Nothing,
            Err(e) => {
                return Err(match failure(e, false) {
                    Failure::Thrown { message, line } => Failure::Thrown {
                        message: format!("the returned value cannot be made JSON: {message}"),
                        line,
                    },
                    other => other,
                });
            }
        }
    };
    let len = match &out {
        Returned::Nothing => 0,
        Returned::Text(s) | Returned::Json(s) => s.len(),
    };
    if len > limits.max_output_bytes {
        return Err(Failure::Limit(Limit::Output));
    }
    Ok(out)
}

/// An error while setting up or converting: the exception it carries, if any.
fn thrown(ctx: &Ctx<'_>, e: rquickjs::Error) -> Failure {
    match e {
        rquickjs::Error::Exception => failure(CaughtError::from_error(ctx, e), false),
        other => Failure::Thrown {
            message: other.to_string(),
            line: None,
        },
    }
}

/// What the script threw: its message and line, or the limit the engine's own error names.
fn failure(e: CaughtError<'_>, parsing: bool) -> Failure {
    let (name, message, stack) = match &e {
        CaughtError::Exception(ex) => (
            ex.as_object()
                .get::<_, String>("name")
                .unwrap_or_else(|_| "Error".into()),
            ex.message().unwrap_or_default(),
            ex.stack().unwrap_or_default(),
        ),
        // The engine throws `null` when it runs out of memory while making its own error.
        CaughtError::Value(v) if v.is_null() => return Failure::Limit(Limit::Memory),
        CaughtError::Value(v) => (
            "Error".into(),
            v.ctx()
                .json_stringify(v.clone())
                .ok()
                .flatten()
                .and_then(|s| s.to_string().ok())
                .unwrap_or_else(|| "a value that is not JSON".into()),
            String::new(),
        ),
        CaughtError::Error(err) => ("Error".into(), err.to_string(), String::new()),
    };
    if message == "out of memory" {
        return Failure::Limit(Limit::Memory);
    }
    if message.contains("stack overflow") || message.contains("call stack size exceeded") {
        return Failure::Limit(Limit::Stack);
    }
    let line = line_of(&stack);
    let message = format!("{name}: {message}");
    if parsing && name == "SyntaxError" {
        Failure::Syntax { message, line }
    } else {
        Failure::Thrown { message, line }
    }
}

/// The script's innermost line in a stack trace (`script:3:5`).
fn line_of(stack: &str) -> Option<u32> {
    let at = stack.find(&format!("{SCRIPT_FILE}:"))? + SCRIPT_FILE.len() + 1;
    let digits: String = stack[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// The largest index at most `at` that is a char boundary of `s`.
fn floor_char_boundary(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    (0..=at).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0)
}

#[cfg(test)]
mod tests;
