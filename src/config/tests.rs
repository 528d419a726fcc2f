//! Config parsing as data: each bad input and the exact message a user sees.

use super::*;

/// Parses `input` and returns `line:column: message`, or "ok".
fn outcome(input: &str) -> String {
    match parse(input).and_then(|c| {
        validate(&c).map_err(|message| Problem {
            line: 0,
            column: 0,
            message,
        })
    }) {
        Ok(_) => "ok".into(),
        Err(p) => format!("{}:{}: {}", p.line, p.column, p.message),
    }
}

#[test]
fn messages() {
    let cases = [
        ("{}", "ok"),
        ("", "1:0: invalid JSON: EOF while parsing a value"),
        (
            "{\n  \"listen\": {\"port\": 1}\n  \"pins\": []\n}",
            "3:3: invalid JSON: expected `,` or `}`",
        ),
        (
            "{\"promote\": {\"minSesions\": 2}}",
            "1:25: `promote.minSesions`: unknown field, did you mean `minSessions`?",
        ),
        (
            "{\"pinfiles\": []}",
            "1:11: `pinfiles`: unknown field, did you mean `pinFiles`?",
        ),
        (
            "{\"zzz\": 1}",
            "1:6: `zzz`: unknown field, expected one of `upstream`, `listen`, `stateDir`, \
             `serverName`, `backendHints`, `pins`, `pinFiles`, `promote`, `transcripts`, \
             `timeouts`, `compactDescriptions`, `searchAliases`",
        ),
        (
            "{\"promote\": {\"minSessions\": \"two\"}}",
            "1:33: `promote.minSessions`: expected a whole number from 0 to 4294967295, \
             found string \"two\"",
        ),
        (
            "{\"listen\": {\"port\": 70000}}",
            "1:25: `listen.port`: expected a whole number from 0 to 65535, found integer `70000`",
        ),
        (
            "{\"pins\": \"mail_send\"}",
            "1:20: `pins`: expected an array, found string \"mail_send\"",
        ),
        (
            "{\"compactDescriptions\": 1}",
            "1:25: `compactDescriptions`: expected a boolean, found integer `1`",
        ),
        (
            "{\"transcripts\": [{\"type\": \"claude\", \"root\": \"~/x\"}]}",
            "1:34: `transcripts[0].type`: unknown value \"claude\", did you mean \"claude-code\"?",
        ),
        (
            "{\"transcripts\": [{\"type\": \"codex\"}]}",
            "1:34: `transcripts[0].root`: missing field",
        ),
        (
            "{\"upstream\": {\"url\": \"http://127.0.0.1:1/mcp\", \"comand\": \"x\"}}",
            "1:55: `upstream.comand`: unknown field, did you mean `command`?",
        ),
        (
            "{\"upstream\": {}}",
            "1:16: `upstream`: expected `url` (Streamable HTTP) or `command` (a stdio child)",
        ),
        (
            "{\"listen\": {\"host\": \"0.0.0.0\"}}",
            "0:0: `listen.host`: \"0.0.0.0\" is not a loopback address; mws listens on loopback \
             only (use 127.0.0.1, ::1 or localhost)",
        ),
        (
            "{\"pinFiles\": [\"a/[b\"]}",
            "0:0: `pinFiles[0]`: \"a/[b\" is not a valid glob: Pattern syntax error near position \
             2: invalid range pattern",
        ),
        (
            "// mws config\n{\n  /* block */ \"pins\": [\"a\",],\n  \"serverName\": \"tb\", // x\n}\n",
            "ok",
        ),
        (
            "{\"pins\": []} x",
            "1:14: invalid JSON: trailing characters",
        ),
    ];
    for (input, want) in cases {
        assert_eq!(outcome(input), want, "input: {input}");
    }
}

#[test]
fn loopback_hosts() {
    for (host, ok) in [
        ("127.0.0.1", true),
        ("127.1.2.3", true),
        ("localhost", true),
        ("LOCALHOST", true),
        ("::1", true),
        ("[::1]", true),
        ("0.0.0.0", false),
        ("::", false),
        ("192.168.1.2", false),
        ("example.test", false),
        ("", false),
    ] {
        assert_eq!(is_loopback(host), ok, "{host}");
    }
}

#[test]
fn fields_and_defaults() {
    let c = parse(
        r#"{"upstream": {"command": "npx", "args": ["-y", "x"], "cwd": "~/w"},
            "promote": {"keepDays": 90},
            "transcripts": [{"type": "codex", "root": "~/c", "serverNames": ["old"]}]}"#,
    )
    .unwrap();
    let Upstream::Stdio(s) = &c.upstream else {
        panic!("stdio expected")
    };
    assert_eq!(s.args, ["-y", "x"]);
    assert_eq!(c.promote.keep_days, 90);
    assert_eq!(c.promote.min_sessions, 2);
    assert_eq!(c.server_names(&c.transcripts[0]), ["old"]);
    assert_eq!(c.timeouts.list_ms, 5_000);
    assert_eq!(parse("{}").unwrap().upstream, Upstream::default());
}

#[test]
fn default_text_is_the_defaults() {
    assert_eq!(parse(DEFAULT_TEXT).unwrap(), Config::default());
}
