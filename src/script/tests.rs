//! The sandbox's tests: scripts against a fake host, each bad input with what the model would
//! read. Must not reach anything but the fake host.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;

fn limits() -> Limits {
    Limits {
        run_time: Duration::from_secs(5),
        memory_bytes: 16 * 1024 * 1024,
        max_calls: 50,
        max_output_bytes: 10_000,
    }
}

/// A host with two tools: `add` sums `a` and `b`; `fail` errors; anything else is unknown. It
/// records the names called.
fn host(seen: Rc<RefCell<Vec<String>>>) -> Host {
    Box::new(move |name, args, _left| {
        seen.borrow_mut().push(name.to_string());
        match name {
            "add" => Reply::Value(
                json!({"sum": args["a"].as_i64().unwrap_or(0) + args["b"].as_i64().unwrap_or(0)}),
            ),
            "fail" => Reply::Error("the upstream said no".into()),
            other => Reply::Error(format!("unknown tool '{other}'")),
        }
    })
}

fn run_with(code: &str, limits: &Limits) -> (Outcome, Vec<String>) {
    let seen = Rc::new(RefCell::new(Vec::new()));
    let out = run(code, limits, host(seen.clone()));
    let seen = seen.borrow().clone();
    (out, seen)
}

fn ok(code: &str) -> Returned {
    let (out, _) = run_with(code, &limits());
    out.result.unwrap_or_else(|e| panic!("{code}: {e:?}"))
}

fn thrown(code: &str) -> (String, Option<u32>) {
    match run_with(code, &limits()).0.result {
        Err(Failure::Thrown { message, line }) => (message, line),
        other => panic!("{code}: expected a throw, got {other:?}"),
    }
}

fn limit(code: &str, limits: &Limits) -> Limit {
    match run_with(code, limits).0.result {
        Err(Failure::Limit(l)) => l,
        other => panic!("{code}: expected a limit, got {other:?}"),
    }
}

#[test]
fn a_loop_of_calls_returns_only_its_answer() {
    let (out, seen) = run_with(
        "let total = 0;\n\
         for (let i = 0; i < 10; i++) {\n\
           const r = await tools.add({a: i, b: 1});\n\
           total += r.sum;\n\
         }\n\
         return {total};",
        &limits(),
    );
    assert_eq!(out.result, Ok(Returned::Json(r#"{"total":55}"#.into())));
    assert_eq!(out.calls, 10);
    assert_eq!(seen.len(), 10);
    assert!(out.memory_bytes > 0);
    assert_eq!(
        ok("return 'plain text'"),
        Returned::Text("plain text".into())
    );
    assert_eq!(ok("const x = 1;"), Returned::Nothing);
    assert_eq!(
        ok("return await Promise.all([tools.add({a: 1, b: 2}), tools.add({a: 3})])"),
        Returned::Json(r#"[{"sum":3},{"sum":3}]"#.into())
    );
}

#[test]
fn memory_held_at_a_tool_call_is_measured() {
    let (out, _) = run_with(
        "const big = 'x'.repeat(2_000_000); await tools.add({a: 1}); return big.length",
        &limits(),
    );
    assert_eq!(out.result, Ok(Returned::Json("2000000".into())));
    assert!(out.memory_bytes > 2_000_000, "{}", out.memory_bytes);
}

#[test]
fn a_failing_tool_throws_its_message_where_it_was_called() {
    assert_eq!(
        thrown("const a = 1;\nawait tools.fail({});\nreturn a;"),
        ("Error: the upstream said no".into(), Some(2))
    );
    assert_eq!(
        ok("try { await tools.fail({}) } catch (e) { return 'caught: ' + e.message }"),
        Returned::Text("caught: the upstream said no".into())
    );
    assert_eq!(
        thrown("return await tools.nope({})").0,
        "Error: unknown tool 'nope'"
    );
    assert_eq!(
        thrown("return await tools.add([1, 2])").0,
        "Error: tools.add: the arguments must be an object, got an array"
    );
    assert_eq!(
        thrown("return await tools.add(() => 1)").0,
        "TypeError: tools.add: the arguments must be an object"
    );
    assert_eq!(
        thrown("\n\nthrow new RangeError('mine')"),
        ("RangeError: mine".into(), Some(3))
    );
}

#[test]
fn a_syntax_error_names_its_line() {
    let (out, seen) = run_with("const a = 1;\nconst b = ;\nreturn a", &limits());
    match out.result {
        Err(Failure::Syntax { message, line }) => {
            assert!(message.starts_with("SyntaxError: "), "{message}");
            assert_eq!(line, Some(2));
        }
        other => panic!("{other:?}"),
    }
    assert!(seen.is_empty());
}

#[test]
fn limits_stop_the_script_and_are_named() {
    let short = Limits {
        run_time: Duration::from_millis(200),
        ..limits()
    };
    assert_eq!(limit("while (true) {}", &short), Limit::Time);
    assert_eq!(
        limit("while (true) { try { for (;;) {} } catch (e) {} }", &short),
        Limit::Time
    );
    assert_eq!(
        limit(
            "const a = []; while (true) a.push('x'.repeat(1000) + a.length);",
            &limits()
        ),
        Limit::Memory
    );
    assert_eq!(
        limit("const f = (n) => f(n + 1) + 1; return f(0);", &limits()),
        Limit::Stack
    );
    let (out, seen) = run_with(
        "for (let i = 0; ; i++) { try { await tools.add({a: i}) } catch (e) {} }",
        &limits(),
    );
    assert_eq!(out.result, Err(Failure::Limit(Limit::Calls)));
    assert_eq!(seen.len(), 50);
    assert_eq!(limit("return 'x'.repeat(10_001)", &limits()), Limit::Output);
    assert_eq!(
        ok("return 'x'.repeat(10_000)"),
        Returned::Text("x".repeat(10_000))
    );
}

#[test]
fn a_promise_that_never_settles_is_named() {
    let (out, _) = run_with("await new Promise(() => {}); return 1", &limits());
    assert_eq!(out.result, Err(Failure::NeverSettled));
}

#[test]
fn the_script_reaches_nothing_but_tools() {
    for (code, message) in [
        (
            "return require('fs')",
            "ReferenceError: require is not defined",
        ),
        (
            "return await fetch('http://127.0.0.1/')",
            "ReferenceError: fetch is not defined",
        ),
        (
            "return process.env",
            "ReferenceError: process is not defined",
        ),
        ("return Date.now()", "ReferenceError: Date is not defined"),
        (
            "return performance.now()",
            "ReferenceError: performance is not defined",
        ),
        (
            "return eval('require')('fs')",
            "ReferenceError: require is not defined",
        ),
        (
            "return (async () => {}).constructor('return process')()",
            "ReferenceError: process is not defined",
        ),
        (
            "return Object.getPrototypeOf(tools.add).constructor('return __mws_call')()",
            "ReferenceError: __mws_call is not defined",
        ),
    ] {
        let got = thrown(code).0;
        assert_eq!(got, message, "{code}");
    }
    let imported = thrown("return await import('fs')").0;
    assert!(imported.contains("fs"), "{imported}");
    assert_eq!(
        ok("return Object.getOwnPropertyNames(globalThis).filter(n => n.startsWith('__')).length"),
        Returned::Json("0".into())
    );
    assert_eq!(
        ok("tools.x = 1; return typeof tools.x"),
        Returned::Text("function".into())
    );
    assert_eq!(
        ok("globalThis.tools = 2; return typeof tools"),
        Returned::Text("object".into())
    );
}

#[test]
fn console_log_is_kept_and_capped() {
    let (out, _) = run_with(
        "console.log('a', {b: 1}); console.log('x'.repeat(9000)); return 1",
        &limits(),
    );
    assert!(out.logs.starts_with("a {\"b\":1}\n"), "{}", out.logs);
    assert!(out.logs.len() <= MAX_LOG_BYTES + 2);
    let value: Value = serde_json::from_str("1").unwrap();
    assert_eq!(out.result, Ok(Returned::Json(value.to_string())));
}
