//! Working sets per project (docs/working-set.md#per-project), end to end: Claude Code
//! transcripts of three project folders ingested by `mws promote`, each call stored with its
//! project; each project's own tools promoted from its sessions; and `mws serve --stdio` started
//! in each folder (as a client starts it) listing the tools used everywhere plus that project's
//! own, while a folder with no history of its own, and `perProject: false`, list the user-wide set.

use std::path::Path;

use serde_json::{Value, json};

use crate::support::run::mws_config;
use crate::support::serve::StdioServed;
use crate::support::{self};

/// The upstream's tools: every one the history uses, and one nobody uses.
const TOOLS: [&str; 6] = [
    "sentry_issues",
    "db_query",
    "browser_open",
    "git_status",
    "note_take",
    "unused",
];

fn ago(days: i64) -> String {
    mws::clock::fmt(mws::clock::now() - time::Duration::days(days))
}

/// One Claude Code session in `cwd`: a successful call of each of `tools`, a day apart from
/// `days` ago.
fn session(root: &Path, cwd: &Path, id: &str, days: i64, tools: &[&str]) {
    let folder = root.join(cwd.to_str().unwrap().replace(['/', '.'], "-"));
    std::fs::create_dir_all(&folder).unwrap();
    let mut text = String::new();
    for (n, tool) in tools.iter().enumerate() {
        let use_id = format!("{id}-{n}");
        let line = json!({"type": "assistant", "sessionId": id, "cwd": cwd, "timestamp": ago(days),
            "message": {"content": [{"type": "tool_use", "id": use_id,
                "name": format!("mcp__toolbox__{tool}"), "input": {}}]}});
        let result = json!({"type": "user", "sessionId": id, "cwd": cwd, "timestamp": ago(days),
            "message": {"content": [{"type": "tool_result", "tool_use_id": use_id,
                "content": [{"type": "text", "text": "ok"}]}]}});
        text.push_str(&format!("{line}\n{result}\n"));
    }
    std::fs::write(folder.join(format!("{id}.jsonl")), text).unwrap();
}

struct World {
    dir: tempfile::TempDir,
    config: Value,
}

impl World {
    fn folder(&self, name: &str) -> std::path::PathBuf {
        self.dir.path().join("work").join(name)
    }

    fn config_path(&self) -> std::path::PathBuf {
        let path = self.dir.path().join("config.json");
        std::fs::write(&path, self.config.to_string()).unwrap();
        path
    }

    /// `tools/list` of a `--stdio` session started in `folder`, upstream tools only.
    fn listed_in(&self, folder: &Path) -> Vec<String> {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async {
            let mut s = StdioServed::start_in_folder(self.dir.path(), &self.config, folder);
            s.initialize("test").await;
            s.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
                .await;
            let reply = s.reply(2).await;
            s.close().await;
            let tools = reply["result"]["tools"].as_array().cloned().unwrap();
            tools
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_string())
                .filter(|n| !matches!(n.as_str(), "search_tools" | "call_tool" | "run_script"))
                .collect()
        })
    }
}

/// api uses sentry and the database, web the browser, both git once; notes takes one note.
fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("transcripts");
    for name in ["api", "web", "notes"] {
        std::fs::create_dir_all(dir.path().join("work").join(name)).unwrap();
    }
    let work = dir.path().join("work");
    let (api, web, notes) = (work.join("api"), work.join("web"), work.join("notes"));
    session(
        &root,
        &api,
        "a1",
        3,
        &["sentry_issues", "db_query", "git_status"],
    );
    session(&root, &api, "a2", 2, &["sentry_issues", "db_query"]);
    session(&root, &web, "w1", 3, &["browser_open", "git_status"]);
    session(&root, &web, "w2", 1, &["browser_open"]);
    session(&root, &notes, "n1", 1, &["note_take"]);
    let tools_file = dir.path().join("tools.json");
    let tools: Vec<Value> = TOOLS
        .iter()
        .map(|t| {
            json!({"name": t, "description": format!("The {t} tool."),
                        "inputSchema": {"type": "object"}})
        })
        .collect();
    std::fs::write(&tools_file, Value::Array(tools).to_string()).unwrap();
    let script = support::root().join("tests/it/support/catalog_stdio.py");
    let python = support::root().join(".venv/bin/python");
    let config = json!({
        "upstream": {"command": python, "args": [script, tools_file]},
        "stateDir": dir.path().join("state"),
        "transcripts": [{"type": "claude-code", "root": root}],
        "listing": "working-set",
        "promote": {"schedule": "off"},
    });
    World { dir, config }
}

#[test]
fn each_project_lists_its_own_tools_and_what_is_used_everywhere() {
    support::peers::ensure();
    let w = world();
    let out = mws_config(&w.config_path())
        .args(["promote", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Value = serde_json::from_slice(&out.stdout).unwrap();
    let listed = |project: Option<&Path>| -> Vec<String> {
        let p = project.map(|p| p.to_str().unwrap().to_string());
        let mut v: Vec<String> = rows
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["project"].as_str().map(str::to_string) == p && r["after"] == true)
            .map(|r| r["tool"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    let real = |name: &str| std::fs::canonicalize(w.folder(name)).unwrap();
    // User-wide: everything used in two sessions or more.
    assert_eq!(
        listed(None),
        ["browser_open", "db_query", "git_status", "sentry_issues"]
    );
    // Per project: two sessions of the project's own (git, once in each, is not enough).
    assert_eq!(listed(Some(&real("api"))), ["db_query", "sentry_issues"]);
    assert_eq!(listed(Some(&real("web"))), ["browser_open"]);
    assert_eq!(listed(Some(&real("notes"))), Vec::<String>::new());

    // Every call knows its project.
    let conn = rusqlite::Connection::open(w.dir.path().join("state/state.db")).unwrap();
    let unknown: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM calls WHERE project IS NULL",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(unknown, 0);

    // Served in each folder: git (used in two projects) everywhere, then the project's own.
    assert_eq!(
        w.listed_in(&w.folder("api")),
        ["git_status", "db_query", "sentry_issues"]
    );
    assert_eq!(
        w.listed_in(&w.folder("web")),
        ["git_status", "browser_open"]
    );
    // A folder with no history of its own, even through a symlink: what is used everywhere.
    assert_eq!(w.listed_in(&w.folder("notes")), ["git_status"]);
    let link = w.dir.path().join("link-to-notes");
    std::os::unix::fs::symlink(w.folder("notes"), &link).unwrap();
    assert_eq!(w.listed_in(&link), ["git_status"]);
    // A new folder is a project with no history yet: the same.
    let new = w.dir.path().join("new project (ü)");
    std::fs::create_dir_all(&new).unwrap();
    assert_eq!(w.listed_in(&new), ["git_status"]);
    // With perProject off: the user-wide set everywhere.
    let user_wide = ["browser_open", "db_query", "git_status", "sentry_issues"];
    let mut off = w;
    off.config["promote"]["perProject"] = json!(false);
    assert_eq!(off.listed_in(&off.folder("api")), user_wide);
}

/// A generated history in the style of the benchmarks' (a seeded generator, 90 days): three
/// projects, each worked on in its own weeks with its own tools, and one tool all use.
fn three_projects(store: &mws::store::Store) {
    use mws::call::{Call, Status};
    let projects = [
        (
            "/home/dev/src/api",
            [
                "mail_send_message",
                "mail_list_messages",
                "mail_get_message",
            ],
        ),
        (
            "/home/dev/src/web",
            ["browser_navigate", "browser_click", "browser_type_text"],
        ),
        (
            "/home/dev/src/docs",
            ["drive_read_file", "drive_search_files", "drive_list_files"],
        ),
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let now = mws::clock::now();
    let mut n = 0;
    for day in 0..90i64 {
        // Week w is project w % 3's.
        let (project, tools) = projects[(day / 7 % 3) as usize];
        for s in 0..2 {
            let session = format!("{project}:{day}:{s}");
            let mut called = vec![tools[(next() % 3) as usize], tools[(next() % 3) as usize]];
            called.push("calendar_list_events");
            for tool in called {
                let c = Call {
                    ts: mws::clock::fmt(
                        now - time::Duration::days(90 - day) + time::Duration::minutes(n % 600),
                    ),
                    session_id: session.clone(),
                    tool: tool.into(),
                    via: "direct".into(),
                    status: Some(Status::Ok),
                    source_key: format!("proxy:gen:{n}"),
                    project: Some(project.into()),
                    ..Call::default()
                };
                mws::store::log::insert_call(store.conn(), &c).unwrap();
                n += 1;
            }
        }
    }
}

/// `mws what-if` replays the generated history with one working set for all and per project:
/// per project lists fewer tokens at the same hit rate, and no one-for-all setting that lists
/// as few reaches its hit rate. `mws promote` then lists each project's tools in its rows only.
#[test]
fn what_if_shows_what_per_project_listing_pays() {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::support::run::offline_config(dir.path(), "catalog.json");
    let store = mws::store::Store::open(&dir.path().join("state/state.db")).unwrap();
    three_projects(&store);
    drop(store);
    let w = crate::support::run::json_run(mws_config(&config).args(["what-if", "--json"]));
    let p = &w["projects"];
    let (user, per) = (&p["userWide"], &p["perProject"]);
    let f = |v: &Value| v.as_f64().unwrap_or_else(|| panic!("not a number in {p}"));
    assert_eq!(p["projects"], 3, "{p}");
    assert_eq!(p["okCalls"], p["okCallsWithProject"], "{p}");
    assert!(
        f(&per["avgListedTokens"]) < f(&user["avgListedTokens"]) * 0.8,
        "per project should list far fewer tokens: {p}"
    );
    assert!(f(&per["hitRate"]) >= f(&user["hitRate"]), "{p}");
    let rival = &p["bestOneForAllWithinTokens"];
    assert!(
        rival.is_null() || f(&rival["hitRate"]) < f(&per["hitRate"]),
        "a single working set as cheap should hit less often: {p}"
    );
    // The table says the same in words.
    let out = mws_config(&config).args(["what-if"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("per project:"), "{text}");
    assert!(text.contains("one working set for all"), "{text}");

    let rows = crate::support::run::json_run(mws_config(&config).args(["promote", "--json"]));
    let listed_in = |project: &str| -> Vec<String> {
        let mut v: Vec<String> = rows
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["project"] == project && r["after"] == true)
            .map(|r| r["tool"].as_str().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        listed_in("/home/dev/src/web"),
        [
            "browser_click",
            "browser_navigate",
            "browser_type_text",
            "calendar_list_events"
        ]
    );
    assert!(
        listed_in("/home/dev/src/api")
            .iter()
            .all(|t| !t.starts_with("browser"))
    );
}

/// Runs `tests/peers/roots_client.py` against `url` with `root`; its JSON.
fn roots_client(url: &str, root: &str, tool: &str) -> Value {
    let out = std::process::Command::new(support::root().join(".venv/bin/python"))
        .arg(support::root().join("tests/peers/roots_client.py"))
        .args([url, root, tool])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "roots client ({root}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Over 2025 HTTP, a session's project is its client's first root: the official Python SDK
/// client answering `roots/list` with one project gets that project's tools, another project's
/// client gets its own, a client with no roots (or too slow to answer, or with a root that is no
/// local folder) the user-wide set; a session asks once and keeps its project and listing when
/// its roots change; its calls are stored under its project.
#[test]
fn over_http_a_sessions_project_is_its_first_root() {
    support::peers::ensure();
    let dir = tempfile::tempdir().unwrap();
    let tools_file = dir.path().join("tools.json");
    let tools: Vec<Value> = TOOLS
        .iter()
        .map(|t| {
            json!({"name": t, "description": format!("The {t} tool."),
                        "inputSchema": {"type": "object"}})
        })
        .collect();
    std::fs::write(&tools_file, Value::Array(tools).to_string()).unwrap();
    let script = support::root().join("tests/it/support/catalog_stdio.py");
    let python = support::root().join(".venv/bin/python");
    let config = json!({
        "upstream": {"command": python, "args": [script, tools_file]},
        "transcripts": [],
        "listing": "working-set",
        "promote": {"schedule": "off"},
    });
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    let db = state.join("state.db");
    crate::support::serve::write_working_set(&db, &["git_status", "sentry_issues", "browser_open"]);
    {
        let store = mws::store::Store::open(&db).unwrap();
        store
            .conn()
            .execute_batch(
                "UPDATE working_set SET projects = 1 WHERE tool <> 'git_status';
                 UPDATE working_set SET projects = 2 WHERE tool = 'git_status';
                 INSERT INTO project_tools (project, tool, position, reason, since) VALUES
                   ('/nowhere/api', 'sentry_issues', 0, 'promoted', '2026-11-29T00:00:00.000Z'),
                   ('/nowhere/web', 'browser_open', 0, 'promoted', '2026-11-29T00:00:00.000Z');",
            )
            .unwrap();
    }
    let served = crate::support::serve::start_in(dir, &config, &[]);
    let listed = |v: &Value, key: &str| -> Vec<String> {
        v[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap().to_string())
            .filter(|n| !matches!(n.as_str(), "search_tools" | "call_tool" | "run_script"))
            .collect()
    };
    let api = roots_client(&served.url, "file:///nowhere/api/", "git_status");
    assert_eq!(
        listed(&api, "tools"),
        ["git_status", "sentry_issues"],
        "{api}"
    );
    assert_eq!(listed(&api, "again"), listed(&api, "tools"));
    let web = roots_client(&served.url, "file:///nowhere/web", "git_status");
    assert_eq!(
        listed(&web, "tools"),
        ["git_status", "browser_open"],
        "{web}"
    );
    let user_wide = ["git_status", "sentry_issues", "browser_open"];
    for root in ["none", "slow", "https://example.invalid/x", "file:///a%zzb"] {
        let v = roots_client(&served.url, root, "git_status");
        assert_eq!(listed(&v, "tools"), user_wide, "{root}: {v}");
    }
    // The calls are stored under each session's project.
    let conn = rusqlite::Connection::open(served.db()).unwrap();
    let mut st = conn
        .prepare("SELECT project FROM calls WHERE tool = 'git_status' ORDER BY id")
        .unwrap();
    let projects: Vec<Option<String>> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        projects,
        [
            Some("/nowhere/api".to_string()),
            Some("/nowhere/web".to_string()),
            None,
            None,
            None,
            None
        ]
    );
}
