//! Config files the types alone let through, through the real binary: `mws serve --config F`
//! refuses each before it starts (exit 2, the file, place and reason on stderr, no header value;
//! a history shorter than a promotion window among them), and a file that starts with a UTF-8
//! byte order mark is read.

use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::run::mws_in;

/// Longest a refused `mws serve` may take to exit. Raising it only slows a failing test.
const EXIT_WITHIN: Duration = Duration::from_secs(20);

/// Runs `mws serve --config c.json --port 0` on `config`; kills it (and fails) if it is still
/// serving after `EXIT_WITHIN`.
fn serve_with(config: &[u8]) -> Output {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("c.json"), config).unwrap();
    let mut child = mws_in(dir.path())
        .args(["serve", "--config", "c.json", "--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > EXIT_WITHIN {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "mws serve accepted the config {:?}; stderr: {}",
                String::from_utf8_lossy(config),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn serve_refuses_configs_the_types_let_through() {
    let http =
        |extra: &str| format!(r#"{{"upstream": {{"url": "http://127.0.0.1:9/mcp"{extra}}}}}"#);
    let cases = [
        (
            r#"[{"url": "http://127.0.0.1:9/mcp"}, {"host": "::1"}]"#.to_string(),
            "c.json:1:1: the config must be a JSON object, found an array",
        ),
        (
            r#"{"stateDir": ""}"#.to_string(),
            "c.json:1:16: `stateDir`: expected a directory path, found an empty string",
        ),
        (
            r#"{"timeouts": {"callMs": 0}}"#.to_string(),
            "c.json:1:26: `timeouts.callMs`: 0 is too short: the minimum is 1 (milliseconds)",
        ),
        (
            r#"{"upstream": {"url": "file:///etc/passwd"}}"#.to_string(),
            "c.json:1:42: `upstream.url`: a URL with scheme \"file\" is not supported: expected \
             http:// or https:// and a host",
        ),
        (
            http(r#", "headers": {"Authorization": "Bearer s3cret\r\nX-Evil: 1"}"#),
            "c.json:1:106: `upstream.headers`: the value of header \"Authorization\" holds a \
             character not allowed in HTTP (a line break or another control character); the \
             value is not shown",
        ),
        (
            http(r#", "headers": {"Authorization": "Bearer ${}"}"#),
            "c.json:1:90: `upstream.headers`: empty ${} in header \"Authorization\": write \
             ${NAME} with the name of an environment variable",
        ),
        (
            r#"{"historyDays": 30}"#.to_string(),
            "c.json: `historyDays`: 30 is shorter than `promote.keepDays` (60); the history must \
             cover every window promotion reads: set historyDays to at least 60 (0 keeps \
             everything)",
        ),
    ];
    for (config, want) in cases {
        let out = serve_with(config.as_bytes());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err, format!("mws: {want}\n"), "config: {config}");
        assert_eq!(out.status.code(), Some(2), "config: {config}");
        assert!(!err.contains("s3cret"), "a header value was printed: {err}");
    }
}

#[test]
fn a_config_with_a_byte_order_mark_is_read() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("c.json"),
        "\u{feff}{\"pins\": [\"bom_pin\"], \"upstream\": {\"url\": \"http://127.0.0.1:9/mcp\"}, \
         \"timeouts\": {\"listMs\": 200}}",
    )
    .unwrap();
    let out = mws_in(dir.path())
        .args(["promote", "--dry-run", "--config", "c.json"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("bom_pin"), "{stdout}");
}
