//! `servers` as data: each bad input and the message a user sees; `${VAR}` expansion and the
//! plain-http refusal.

use std::collections::HashMap;

use super::*;
use crate::config::parse;

fn outcome(input: &str) -> String {
    match parse(input) {
        Ok(c) => format!("ok {}", c.servers.len()),
        Err(p) => format!("{}:{}: {}", p.line, p.column, p.message),
    }
}

#[test]
fn bad_servers_messages() {
    let cases = [
        (
            r#"{"servers": {"time": {"command": "uvx", "args": ["mcp-server-time"]}, "gh": {"url": "https://x.example/mcp", "headers": {"Authorization": "Bearer ${GH}"}}}}"#,
            "ok 2",
        ),
        (
            r#"{"servers": {"a": {"command": "x"}, "a": {"command": "y"}}}"#,
            "1:39: `servers`: server name \"a\" appears twice; each server needs its own name",
        ),
        (
            r#"{"servers": {"my server": {"command": "x"}}}"#,
            "1:24: `servers`: server name \"my server\" cannot be used: a server name is 1 to 24 of \
             A-Z a-z 0-9 _ -, starts with a letter or digit and has no \"__\" (it becomes the tool \
             name prefix <server>__)",
        ),
        (
            r#"{"servers": {"a__b": {"command": "x"}}}"#,
            "1:19: `servers`: server name \"a__b\" cannot be used: a server name is 1 to 24 of \
             A-Z a-z 0-9 _ -, starts with a letter or digit and has no \"__\" (it becomes the tool \
             name prefix <server>__)",
        ),
        (
            r#"{"servers": {"a": {"command": "x", "argz": []}}}"#,
            "1:41: `servers.a.argz`: unknown field, did you mean `args`?",
        ),
        (
            r#"{"servers": {"a": {"url": "https://h/mcp", "allowInsecureHTTP": true}}}"#,
            "1:62: `servers.a.allowInsecureHTTP`: unknown field, did you mean `allowInsecureHttp`?",
        ),
        (
            r#"{"servers": {"a": {"url": "https://h/mcp", "command": "x"}}}"#,
            "1:59: `servers`: server \"a\": set either `url` (Streamable HTTP) or `command` (a \
             stdio child), not both",
        ),
        (
            r#"{"servers": {"a": {"command": "x", "headers": {"A": "b"}}}}"#,
            "1:58: `servers`: server \"a\": `headers` belongs to an HTTP server (`url`), not to \
             `command`",
        ),
        (
            r#"{"servers": {"gh": {"url": "https://x.example/mcp", "oauth": {"clientId": "c", "clientSecret": "${S}", "scopes": ["repo"]}}}}"#,
            "ok 1",
        ),
        (
            r#"{"servers": {"a": {"command": "x", "oauth": {}}}}"#,
            "1:48: `servers`: server \"a\": `oauth` belongs to an HTTP server (`url`), not to \
             `command`",
        ),
        (
            r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {"clientId": "c", "redirectUri": "http://127.0.0.1:8976/callback"}}}}"#,
            "ok 1",
        ),
        (
            r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {"redirectUri": "http://example.com:8976/cb"}}}}"#,
            "1:97: `servers.a.oauth.redirectUri`: \"http://example.com:8976/cb\" is not on \
             loopback: mws listens for the redirect on 127.0.0.1, [::1] or localhost only",
        ),
        (
            r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {"redirectUri": "http://localhost:0/cb"}}}}"#,
            "1:92: `servers.a.oauth.redirectUri`: \"http://localhost:0/cb\" has port 0; the port \
             must be 1–65535; write the redirect URI registered with the client, as in \
             http://127.0.0.1:8976/callback",
        ),
        (
            r#"{"servers": {"a": {"url": "https://h/mcp", "oauth": {"clientID": "c"}}}}"#,
            "1:63: `servers.a.oauth.clientID`: unknown field, did you mean `clientId`?",
        ),
        (
            r#"{"servers": {"a": {"url": "ftp://h/x"}}}"#,
            "1:39: `servers`: server \"a\": `url`: a URL with scheme \"ftp\" is not supported: \
             expected http:// or https:// and a host",
        ),
        (
            r#"{"servers": {"a": {"command": "x", "adoptsUpstreamHistory": true}, "b": {"command": "y", "adoptsUpstreamHistory": true}}}"#,
            "1:120: `servers`: `adoptsUpstreamHistory` is set on both \"a\" and \"b\"; only the \
             server that was `upstream` takes over its history",
        ),
        (
            r#"{"servers": {"a": {"command": "x", "description": "notes and facts I told you"}}}"#,
            "ok 1",
        ),
        (
            r#"{"servers": {"a": {"command": "x", "description": "line one\nline two"}}}"#,
            "1:72: `servers`: server \"a\": `description` holds a control character (a newline, a \
             tab…)",
        ),
        (
            &format!(
                r#"{{"servers": {{"a": {{"command": "x", "description": "{}"}}}}}}"#,
                "x".repeat(501)
            ),
            "1:555: `servers`: server \"a\": `description` is 501 characters long; the most is 500",
        ),
        (
            r#"{"servers": {}}"#,
            "1:14: `servers`: expected at least one server (or leave `servers` out and use \
             `upstream`)",
        ),
        (
            r#"{"servers": []}"#,
            "1:12: `servers`: expected an object of server name to server, found an array",
        ),
        (
            r#"{"upstream": {"command": "x"}, "servers": {"a": {"command": "y"}}}"#,
            "0:0: set either `upstream` (one server, tool names as it names them) or `servers` \
             (several, tool names `<server>__<tool>`), not both",
        ),
    ];
    let mut failed = Vec::new();
    for (input, want) in cases {
        let got = outcome(input);
        if got != want {
            failed.push(format!("{input}\n  want {want}\n  got  {got}"));
        }
    }
    assert!(failed.is_empty(), "\n{}", failed.join("\n"));
}

#[test]
fn servers_keep_file_order() {
    let c = parse(r#"{"servers": {"zeta": {"command": "z"}, "alpha": {"command": "a"}}}"#).unwrap();
    let names: Vec<&str> = c.servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["zeta", "alpha"]);
}

fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let m: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k: &str| m.get(k).cloned()
}

fn server(json: &str) -> Server {
    let c = parse(&format!(r#"{{"servers": {{"s": {json}}}}}"#)).unwrap();
    c.servers.into_iter().next().unwrap()
}

#[test]
fn expansion_and_refusals() {
    let vars = env(&[
        ("TOKEN", "t0k"),
        ("HOST", "mcp.example.com"),
        ("DIR", "/data"),
    ]);
    let cases = [
        (
            r#"{"command": "srv", "args": ["--root", "${DIR}/x"], "env": {"K": "${TOKEN}"}}"#,
            "stdio srv [\"--root\", \"/data/x\"] {\"K\": \"t0k\"}",
        ),
        (
            r#"{"command": "srv", "args": ["${NOPE}"]}"#,
            "server \"s\": environment variable NOPE is not set (in `args[0]`)",
        ),
        (
            r#"{"command": "srv", "env": {"K": "${MISSING}"}}"#,
            "server \"s\": environment variable MISSING is not set (in `env.K`)",
        ),
        (
            r#"{"url": "https://${HOST}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}"#,
            "http https://mcp.example.com/mcp 1",
        ),
        (
            r#"{"url": "https://${NOHOST}/mcp"}"#,
            "server \"s\": environment variable NOHOST is not set (in `url`)",
        ),
        (
            r#"{"url": "https://h/mcp", "headers": {"Authorization": "Bearer ${UNSET_TOKEN}"}}"#,
            "server \"s\": environment variable UNSET_TOKEN is not set (in `headers.Authorization`)",
        ),
        (
            r#"{"url": "http://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}"#,
            "server \"s\": refusing to send `headers` over plain http:// to a host that is not \
             loopback (a token would cross the network in clear); use https://, or set \
             \"allowInsecureHttp\": true on this server if the network is trusted",
        ),
        (
            r#"{"url": "http://mcp.example.com/mcp", "headers": {"A": "b"}, "allowInsecureHttp": true}"#,
            "http http://mcp.example.com/mcp 1",
        ),
        (
            r#"{"url": "http://127.0.0.1:9/mcp", "headers": {"A": "b"}}"#,
            "http http://127.0.0.1:9/mcp 1",
        ),
        (
            r#"{"url": "http://mcp.example.com/mcp"}"#,
            "http http://mcp.example.com/mcp 0",
        ),
    ];
    for (json, want) in cases {
        let got = match expand(&server(json), &vars) {
            Ok(Upstream::Stdio(s)) => format!("stdio {} {:?} {:?}", s.command, s.args, s.env),
            Ok(Upstream::Http(h)) => format!("http {} {}", h.url, h.headers.len()),
            Err(e) => e.to_string(),
        };
        assert_eq!(got, want, "{json}");
    }
}

#[test]
fn dollar_without_brace_stays() {
    let none = env(&[]);
    assert_eq!(expand_text("a$b $ {c}", &none).unwrap(), "a$b $ {c}");
    assert_eq!(
        expand_text("${", &none).unwrap_err(),
        "unclosed ${: write ${NAME} or ${NAME:-default} (a default cannot hold })"
    );
}

/// `${NAME:-default}` as Claude Code and the shell read it: the default when the variable is unset
/// or empty, the value otherwise; a default ends at the first `}`.
#[test]
fn defaults_stand_in_for_unset_or_empty_variables() {
    let vars = env(&[("SET", "v"), ("EMPTY", "")]);
    let cases = [
        ("${SET:-d}", Ok("v")),
        ("${UNSET:-d}", Ok("d")),
        ("${EMPTY:-d}", Ok("d")),
        ("${EMPTY}", Ok("")),
        ("${UNSET:-}", Ok("")),
        ("a ${UNSET:-http://x:1/p} b", Ok("a http://x:1/p b")),
        ("${UNSET:-a}b}", Ok("ab}")),
        ("${UNSET}", Err("environment variable UNSET is not set")),
        (
            "${:-d}",
            Err("empty ${}: write ${NAME} or ${NAME:-default} (a default cannot hold })"),
        ),
        (
            "${UNSET:-${SET}}",
            Err(
                "the default of ${UNSET:-...} holds ${: ${NAME:-default} (a default cannot hold }) ends at the first }",
            ),
        ),
        (
            "${UNSET:-x",
            Err("unclosed ${: write ${NAME} or ${NAME:-default} (a default cannot hold })"),
        ),
    ];
    for (text, want) in cases {
        let got = expand_text(text, &vars);
        assert_eq!(got.as_deref().map_err(String::as_str), want, "{text}");
    }
}

#[test]
fn a_stdio_command_is_expanded_too() {
    let vars = env(&[("BIN", "/opt/bin")]);
    let s = server(r#"{"command": "${BIN}/srv", "args": ["${PORT:-80}"]}"#);
    let Ok(Upstream::Stdio(got)) = expand(&s, &vars) else {
        panic!("{:?}", expand(&s, &vars));
    };
    assert_eq!(
        (got.command.as_str(), got.args),
        ("/opt/bin/srv", vec!["80".to_string()])
    );
}

#[test]
fn unprefixed_pins_go_to_the_heir() {
    let c = parse(
        r#"{"servers": {"gh": {"command": "x", "adoptsUpstreamHistory": true}, "time": {"command": "y"}},
            "pins": ["create_issue", "time__now", "gh__list"]}"#,
    )
    .unwrap();
    let mut pins = c.pins.clone();
    prefix_pins(&mut pins, &c.servers);
    assert_eq!(pins, ["gh__create_issue", "time__now", "gh__list"]);
}
