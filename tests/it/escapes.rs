//! Names from outside (a client's `clientInfo.name`, tool names, catalog descriptions, pins) that
//! hold terminal controls are printed as visible escapes by every text command, never raw: no
//! ESC, C1 control or bidi override reaches the terminal.

use std::path::Path;
use std::process::Output;

use mws::store::Store;
use serde_json::json;

use crate::support::run::mws_in;

/// A tool name that clears the screen, sets the window title, starts an 8-bit CSI and reverses
/// the text after it.
const EVIL_TOOL: &str = "evil\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m\u{202e}tool";
const EVIL_TOOL_SHOWN: &str = "evil\\x1b[2J\\x1b]0;pwned\\x07\\u{9b}31m\\u{202e}tool";
const EVIL_CLIENT: &str = "client\u{1b}[31m\u{2066}x";
const EVIL_CLIENT_SHOWN: &str = "client\\x1b[31m\\u{2066}x";
const EVIL_PIN: &str = "pin\u{1b}[5m\nforged line";
const EVIL_PIN_SHOWN: &str = "pin\\x1b[5m\\nforged line";

/// A character a terminal acts on instead of showing (newline aside).
fn is_terminal_control(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

fn assert_clean(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_no_controls(what, out);
}

fn assert_no_controls(what: &str, out: &Output) {
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        let bad: Vec<String> = text
            .chars()
            .filter(|c| is_terminal_control(*c))
            .map(|c| format!("U+{:04X}", c as u32))
            .collect();
        assert!(bad.is_empty(), "{what} {stream} holds {bad:?}:\n{text}");
    }
}

/// True if `s` is a string somewhere in `v`.
fn holds(v: &serde_json::Value, s: &str) -> bool {
    match v {
        serde_json::Value::String(x) => x == s,
        serde_json::Value::Array(a) => a.iter().any(|x| holds(x, s)),
        serde_json::Value::Object(o) => o.values().any(|x| holds(x, s)),
        _ => false,
    }
}

/// A state dir whose database, catalog and config hold the hostile names; the upstream is down,
/// so every command falls back to `catalog.json`.
fn seeded(dir: &Path) {
    let state = dir.join("state");
    std::fs::create_dir_all(&state).unwrap();
    let config = json!({
        "upstream": {"url": "http://127.0.0.1:9/mcp"},
        "stateDir": state,
        "pins": [EVIL_PIN],
        "timeouts": {"listMs": 300},
    });
    std::fs::write(dir.join("c.json"), config.to_string()).unwrap();
    let store = Store::open(&state.join("state.db")).unwrap();
    let ts = mws::clock::fmt(mws::clock::now() - time::Duration::hours(1));
    // Written with SQL, as any older or other writer could have: the display must not rely on
    // what the proxy stores.
    for (n, session) in ["s1", "s2", "s3"].iter().enumerate() {
        store
            .conn()
            .execute(
                "INSERT INTO calls (ts, session_id, tool, via, ok, client, source_key) \
                 VALUES (?1, ?2, ?3, 'direct', 1, ?4, ?5)",
                rusqlite::params![ts, session, EVIL_TOOL, EVIL_CLIENT, format!("proxy:{n}")],
            )
            .unwrap();
    }
    store
        .conn()
        .execute(
            "INSERT INTO searches (ts, session_id, client, mode, result_count, reply_bytes) \
             VALUES (?1, 's1', ?2, 'ranked\u{1b}[8m', 1, 100)",
            rusqlite::params![ts, EVIL_CLIENT],
        )
        .unwrap();
    // The hostile name is left out of every catalog a command uses (clients would reject it);
    // the hostile description stays, on a tool with a valid name.
    let catalog = json!({"tools": [{
        "name": EVIL_TOOL,
        "description": "finds evil things",
        "inputSchema": {"type": "object"},
    }, {
        "name": "evil_finder",
        "description": "finds evil \u{1b}]0;title\u{7} things \u{202e}reversed",
        "inputSchema": {"type": "object"},
    }]});
    std::fs::write(state.join("catalog.json"), catalog.to_string()).unwrap();
}

#[test]
fn report_promote_and_search_show_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    seeded(d);

    // A real run, so that the pin and the promoted tool are in the working set the report shows.
    let promote = mws_in(d)
        .args(["promote", "--no-ingest", "--config", "c.json"])
        .output()
        .unwrap();
    assert_clean("mws promote", &promote);
    let text = String::from_utf8_lossy(&promote.stdout);
    for shown in [EVIL_TOOL_SHOWN, EVIL_PIN_SHOWN] {
        assert!(text.contains(shown), "mws promote lacks {shown}:\n{text}");
    }

    let report = mws_in(d)
        .args(["report", "--config", "c.json"])
        .output()
        .unwrap();
    assert_clean("mws report", &report);
    let text = String::from_utf8_lossy(&report.stdout);
    for shown in [EVIL_TOOL_SHOWN, EVIL_CLIENT_SHOWN, "ranked\\x1b[8m 1"] {
        assert!(text.contains(shown), "mws report lacks {shown}:\n{text}");
    }

    // JSON is data: the names come back whole, written so that a terminal shows them inertly.
    for args in [
        &["report", "--json", "--config", "c.json"][..],
        &["promote", "--dry-run", "--json", "--config", "c.json"][..],
    ] {
        let out = mws_in(d).args(args).output().unwrap();
        assert_clean(&format!("mws {args:?}"), &out);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(
            holds(&v, EVIL_TOOL),
            "mws {args:?}: the name did not come back whole"
        );
        let raw = String::from_utf8_lossy(&out.stdout);
        assert!(
            raw.contains(r"evil\u001b[2J\u001b]0;pwned\u0007\u009b31m\u202etool"),
            "{raw}"
        );
    }

    let search = mws_in(d)
        .args(["search", "--config", "c.json", "evil", "things"])
        .output()
        .unwrap();
    assert_clean("mws search", &search);
    let text = String::from_utf8_lossy(&search.stdout);
    assert!(text.contains("evil_finder"), "mws search:\n{text}");
    assert!(!text.contains(EVIL_TOOL_SHOWN), "mws search:\n{text}");
    assert!(
        text.contains("finds evil \\x1b]0;title\\x07 things \\u{202e}reversed"),
        "mws search:\n{text}"
    );
}

/// Config values and keys with terminal controls: `mws doctor` (text and JSON), the warnings of
/// `mws promote` and the logs, and a config error, all show them escaped.
#[test]
fn doctor_logs_and_config_errors_show_control_characters_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let state = d.join("state\u{1b}[2J\u{202e}");
    let config = json!({
        "upstream": {"url": "http://127.0.0.1:9/mcp\u{202e}x"},
        "stateDir": state,
        "serverName": "tb\u{1b}]0;pwned\u{7}",
        "timeouts": {"listMs": 300},
    });
    std::fs::write(d.join("c.json"), config.to_string()).unwrap();

    for args in [
        &["doctor", "--config", "c.json"][..],
        &["doctor", "--json", "--config", "c.json"][..],
        &["promote", "--dry-run", "--config", "c.json"][..],
    ] {
        let out = mws_in(d).args(args).output().unwrap();
        let what = format!("mws {args:?}");
        assert!(matches!(out.status.code(), Some(0 | 1)), "{what}: {out:?}");
        assert_no_controls(&what, &out);
    }
    let doctor = mws_in(d)
        .args(["doctor", "--config", "c.json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&doctor.stdout);
    assert!(text.contains("tb\\x1b]0;pwned\\x07"), "{text}");

    // `mws init` prints the paths it wrote, here under a config home with controls in its name.
    let out = mws_in(d)
        .env("XDG_CONFIG_HOME", d.join("conf\u{1b}[2J"))
        .env("XDG_STATE_HOME", d.join("st\u{202e}"))
        .arg("init")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_no_controls("mws init", &out);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("conf\\x1b[2J/mcp-working-set/config.json"),
        "{out:?}"
    );

    std::fs::write(d.join("bad.json"), r#"{"\u001b]0;pwned\u0007\u202e": 1}"#).unwrap();
    let out = mws_in(d)
        .args(["serve", "--config", "bad.json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_no_controls("mws serve with a bad key", &out);
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .contains("`\\x1b]0;pwned\\x07\\u{202e}`: unknown field"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
