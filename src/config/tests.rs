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
        (
            "{\"search\": {\"semantic\": {\"url\": \"http://127.0.0.1:11434/v1/embeddings\"}}}",
            "1:72: `search.semantic`: expected `model`: a local model directory, or with `url` \
             the model name the endpoint serves",
        ),
        (
            "{\"search\": {\"semantic\": {\"model\": \"~/m\", \"headers\": {}}}}",
            "1:56: `search.semantic`: `headers` and `timeoutMs` belong to an endpoint (`url`), \
             not to a local model directory",
        ),
        (
            "{\"search\": {\"semantic\": {\"modle\": \"x\"}}}",
            "1:32: `search.semantic.modle`: unknown field, did you mean `model`?",
        ),
        // `searchAliases` within its bounds: every search index build reads all of it.
        ("{\"searchAliases\": {\"ticket\": [\"jira\"]}}", "ok"),
        (
            "{\"searchAliases\": {\"\": [\"a\"]}}",
            "1:30: `searchAliases`: a word is empty",
        ),
        (
            "{\"searchAliases\": {\"ticket\": [\" \"]}}",
            "1:36: `searchAliases`: an expansion of \"ticket\" is empty",
        ),
        (
            &format!(
                "{{\"searchAliases\": {{\"w\": [{}]}}}}",
                ["\"a\""; 33].join(",")
            ),
            "1:159: `searchAliases`: \"w\" has 33 expansions; at most 32",
        ),
        (
            &format!("{{\"searchAliases\": {{\"{}\": [\"a\"]}}}}", "é".repeat(40)),
            "1:110: `searchAliases`: a word is 80 bytes long (\"éééééééééééééééé…\"); at most 64",
        ),
        (
            &format!(
                "{{\"searchAliases\": {{{}}}}}",
                (0..1001)
                    .map(|i| format!("\"w{i}\": []"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            "1:10922: `searchAliases`: 1001 words; at most 1000",
        ),
        (
            "{\n  \"promote\": {\"schedule\": \"weekly\"}\n}",
            "2:35: `promote.schedule`: \"weekly\" is not a schedule: expected \"off\", \"daily \
             HH:MM\" (local time) or \"every N\" with a unit s, m or h, like \"every 6h\"",
        ),
        (
            "{\n  \"listing\": \"some\"\n}",
            "2:19: `listing`: unknown value \"some\", expected one of `auto`, `working-set`, `all`",
        ),
        (
            "{\"listingUpdates\": \"always\"}",
            "1:27: `listingUpdates`: unknown value \"always\", expected one of `session`, `live`",
        ),
        ("", "1:1: invalid JSON: EOF while parsing a value"),
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
            "1:6: `zzz`: unknown field, expected one of `upstream`, `servers`, `listen`, `stateDir`, \
             `serverName`, `backendHints`, `pins`, `pinFiles`, `promote`, `transcripts`, \
             `timeouts`, `compactDescriptions`, `searchAliases`, `listing`, `listAllBelowTokens`, `listingUpdates`, `validation`, `policy`, `search`, `results`, `codeMode`, `store`, `user`, `historyDays`",
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
            "1:15: `upstream`: expected `url` (Streamable HTTP) or `command` (a stdio child)",
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
            "{\"validation\": \"strict\"}",
            "1:23: `validation`: unknown value \"strict\", expected one of `enforce`, `warn`, `off`",
        ),
        (
            "{\"policy\": {\"deny\": [\"*\", \"a[\"]}}",
            "0:0: `policy.deny[1]`: \"a[\" is not a valid glob: Pattern syntax error near \
             position 1: invalid range pattern",
        ),
        (
            "{\"policy\": {\"readonly\": true}}",
            "1:22: `policy.readonly`: unknown field, did you mean `readOnly`?",
        ),
        (
            "{\"policy\": {\"readOnly\": \"yes\"}}",
            "1:30: `policy.readOnly`: expected true, false or a list of server names (config \
             `servers`)",
        ),
        (
            "{\"policy\": {\"readOnly\": [\"github\"]}}",
            "0:0: `policy.readOnly[0]`: \"github\" is not a server: a list of servers needs \
             `servers`; with a single `upstream` write true or false",
        ),
        (
            "{\"servers\": {\"github\": {\"command\": \"gh\"}}, \"policy\": {\"readOnly\": [\"gitlab\"]}}",
            "0:0: `policy.readOnly[0]`: \"gitlab\" is not a server in `servers` (known: github)",
        ),
        (
            "{\"servers\": {\"github\": {\"command\": \"gh\"}}, \"policy\": {\"readOnly\": [\"github\"]}}",
            "ok",
        ),
        (
            "{\"results\": {\"keepMinutes\": 0}}",
            "0:0: `results.keepMinutes`: 0 is not a positive number of minutes",
        ),
        (
            "{\"results\": {\"memoryMb\": -1}}",
            "0:0: `results.memoryMb`: -1 is not a positive number of megabytes",
        ),
        (
            "{\"results\": {\"maxTokens\": -5}}",
            "1:28: `results.maxTokens`: expected a whole number from 0 to 4294967295, found \
             integer `-5`",
        ),
        (
            "{\"results\": {\"maxtokens\": 5}}",
            "1:24: `results.maxtokens`: unknown field, did you mean `maxTokens`?",
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

/// Inputs the types alone let through: each is refused with the field, the place and the reason.
#[test]
fn checked_values() {
    let http =
        |extra: &str| format!("{{\"upstream\": {{\"url\": \"http://127.0.0.1:1/mcp\"{extra}}}}}");
    let header = |name: &str, value: &str| {
        http(&format!(
            ", \"headers\": {{{}: {}}}",
            json(name),
            json(value)
        ))
    };
    let cases: Vec<(String, &str)> = vec![
        (
            "[{\"url\": \"http://127.0.0.1:1/mcp\"}, {\"host\": \"::1\"}]".into(),
            "1:1: the config must be a JSON object, found an array",
        ),
        (
            "\"x\"".into(),
            "1:3: the config must be a JSON object, found string \"x\"",
        ),
        (
            "{\"listen\": [\"::1\", 80]}".into(),
            "1:11: `listen`: expected an object, found an array",
        ),
        (
            "{\"transcripts\": [[\"codex\", \"~/c\"]]}".into(),
            "1:17: `transcripts[0]`: expected an object, found an array",
        ),
        (
            "{\"upstream\": [\"http://127.0.0.1:1/mcp\"]}".into(),
            "1:13: `upstream`: expected an object, found an array",
        ),
        ("\u{feff}{\"pins\": [\"a\"]}".into(), "ok"),
        (
            "{\"store\": {\"postgres\": \"mysql://u:pw@127.0.0.1/db\"}}".into(),
            "1:51: `store.postgres`: expected a postgres:// URL, found a mysql:// one",
        ),
        (
            "{\"store\": {\"postgres\": \"postgres://u@127.0.0.1/db\"}, \"user\": \"ada\"}".into(),
            "ok",
        ),
        (
            "{\"stateDir\": \"\"}".into(),
            "1:16: `stateDir`: expected a directory path, found an empty string",
        ),
        (
            "{\"timeouts\": {\"callMs\": 0}}".into(),
            "1:26: `timeouts.callMs`: 0 is too short: the minimum is 1 (milliseconds)",
        ),
        (
            "{\"timeouts\": {\"listMs\": 0}}".into(),
            "1:26: `timeouts.listMs`: 0 is too short: the minimum is 1 (milliseconds)",
        ),
        (
            "{\"timeouts\": {\"firstStartMs\": 0}}".into(),
            "1:32: `timeouts.firstStartMs`: 0 is too short: the minimum is 1 (milliseconds)",
        ),
        ("{\"timeouts\": {\"catalogTtlMs\": 0}}".into(), "ok"),
        (
            "{\"upstream\": {\"url\": \"file:///etc/passwd\"}}".into(),
            "1:42: `upstream.url`: a URL with scheme \"file\" is not supported: expected \
             http:// or https:// and a host",
        ),
        (
            "{\"upstream\": {\"url\": \"ftp://127.0.0.1/mcp\"}}".into(),
            "1:43: `upstream.url`: a URL with scheme \"ftp\" is not supported: expected \
             http:// or https:// and a host",
        ),
        (
            "{\"upstream\": {\"url\": \"javascript:alert(1)\"}}".into(),
            "1:43: `upstream.url`: a URL with scheme \"javascript\" is not supported: expected \
             http:// or https:// and a host",
        ),
        (
            "{\"upstream\": {\"url\": \"127.0.0.1:4483/mcp\"}}".into(),
            "1:42: `upstream.url`: not a URL (relative URL without a base): expected \
             http:// or https:// and a host",
        ),
        (
            "{\"upstream\": {\"url\": \"http://\"}}".into(),
            "1:31: `upstream.url`: not a URL (empty host): expected http:// or https:// and a host",
        ),
        (http(""), "ok"),
        (
            "{\"upstream\": {\"url\": \"http://mcp.example.com/mcp\", \"headers\": {\"A\": \"b\"}}}"
                .into(),
            "1:73: `upstream`: refusing to send `headers` over plain http:// to a host that is \
             not loopback (a token would cross the network in clear); use https://, or set \
             \"allowInsecureHttp\": true on `upstream` if the network is trusted",
        ),
        (
            "{\"upstream\": {\"url\": \"http://mcp.example.com/mcp\", \"headers\": {\"A\": \"b\"}, \
             \"allowInsecureHttp\": true}}"
                .into(),
            "ok",
        ),
        (
            "{\"upstream\": {\"command\": \"x\", \"allowInsecureHttp\": true}}".into(),
            "1:56: `upstream`: `allowInsecureHttp` belongs to an HTTP upstream (`url`), not to \
             `command`",
        ),
        (header("Authorization", "Bearer ${TOKEN}"), "ok"),
        (header("Authorization", "Bearer ${TOKEN:-none}"), "ok"),
        (
            header("X-A\r\nX-B", "v"),
            "1:78: `upstream.headers`: header name \"X-A\\r\\nX-B\" is not valid in HTTP",
        ),
        (
            header("", "v"),
            "1:68: `upstream.headers`: header name \"\" is not valid in HTTP",
        ),
        (
            header("Authorization", "Bearer s3cret\r\nX-Evil: 1"),
            "1:106: `upstream.headers`: the value of header \"Authorization\" holds a character \
             not allowed in HTTP (a line break or another control character); the value is not shown",
        ),
        (
            header("Authorization", "Bearer ${}"),
            "1:90: `upstream.headers`: empty ${} in header \"Authorization\": write ${NAME} with \
             the name of an environment variable",
        ),
        (
            header("Authorization", "Bearer ${TOKEN"),
            "1:94: `upstream.headers`: unclosed ${ in header \"Authorization\": write ${NAME} with \
             the name of an environment variable",
        ),
        (
            header("Authorization", "Bearer ${MY-TOKEN}"),
            "1:98: `upstream.headers`: ${...} in header \"Authorization\" is not an environment \
             variable name (letters, digits and _, not starting with a digit); the value is not shown",
        ),
    ];
    let mut wrong = Vec::new();
    for (input, want) in cases {
        let got = outcome(&input);
        assert!(!got.contains("s3cret"), "a header value was printed: {got}");
        if got != want {
            wrong.push(format!("input: {input}\n  got:  {got}\n  want: {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

fn json(s: &str) -> String {
    serde_json::to_string(s).unwrap()
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
