//! `servers`: the real `mws serve` in front of several real servers at once — server-everything and
//! mcp-server-time over stdio, the rmcp fixture over HTTP — plus one that cannot start (an unset
//! `${VAR}`) and one whose command does not exist: prefixed names listed and searched, calls routed
//! and logged under them, and one server killed while the others keep answering.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::clients::{self, PYTHON_MODES};
use crate::support::run::{config_in, http_and_time, json_run, mws_config};
use crate::support::serve::{self, post_modern};
use crate::support::{mcp_server_time, rmcp_upstream, server_everything};

/// Bounded retries while a killed server comes back.
const COME_BACK_TRIES: usize = 100;

fn config(web: &str) -> Value {
    json!({
        "servers": {
            "everything": {"command": "node", "args": [server_everything(), "stdio"]},
            "time": {"command": mcp_server_time()},
            "web": {"url": web},
            "vault": {"command": "node", "args": ["${MWS_TEST_FLEET_UNSET}"]},
            "ghost": {"command": "/nonexistent/mcp-ghost-server"}
        },
        "timeouts": {"listMs": 20000},
        "transcripts": []
    })
}

async fn call(url: &str, id: i64, name: &str, args: Value) -> Value {
    post_modern(
        url,
        id,
        "tools/call",
        json!({"name": name, "arguments": args}),
    )
    .await
}

/// The text a call's reply carries: its result's text, or its JSON-RPC error message.
fn said(reply: &Value) -> String {
    match reply.get("error") {
        Some(e) => e["message"].as_str().unwrap_or_default().to_string(),
        None => clients::text(&reply["result"]),
    }
}

fn failed(reply: &Value) -> bool {
    reply.get("error").is_some() || reply["result"]["isError"] == true
}

/// Child processes of `parent` whose command line contains `needle` (from /proc).
fn children(parent: u32, needle: &str) -> Vec<u32> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // ppid is the 2nd field after the parenthesised command name.
        let ppid = stat
            .rsplit_once(") ")
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        if ppid == Some(parent) && String::from_utf8_lossy(&cmd).contains(needle) {
            out.push(pid);
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_behind_one_mws_are_prefixed_routed_logged_and_independent() {
    let web = rmcp_upstream::start(false).await;
    let mut served = serve::start(
        &config(&web.url),
        &["everything__echo", "time__get_current_time"],
    );
    let url = served.url.clone();

    // The listing: meta-tools plus the working set, under prefixed names.
    let list = post_modern(&url, 1, "tools/list", json!({})).await;
    assert_eq!(
        serve::names(&list),
        [
            "search_tools",
            "call_tool",
            "call_read_only_tool",
            "run_script",
            "everything__echo",
            "time__get_current_time"
        ]
    );

    // Every server's tools are found by search, under their prefixes.
    let all = call(&url, 2, "search_tools", json!({"query": ""})).await;
    let text = said(&all);
    for name in [
        "everything__get-sum",
        "time__convert_time",
        "web__add",
        "web__echo",
    ] {
        assert!(text.contains(name), "{name} not in {text}");
    }

    // The real Python SDK client in each mode: a listed tool, an unlisted one, call_tool, search.
    for (mode, want_version) in PYTHON_MODES {
        let echo = json!({"message": "hi"});
        let utc = json!({"timezone": "UTC"});
        let calls = [
            ("everything__echo", &echo),
            ("time__get_current_time", &utc),
        ];
        let r = clients::python(&url, mode, calls, "current time in a timezone").await;
        assert_eq!(r["protocol_version"], want_version, "mode {mode}");
        for k in ["direct_listed", "direct_unlisted", "via_call_tool"] {
            assert_eq!(r[k]["isError"], false, "mode {mode} {k}: {r}");
        }
        assert!(
            r["direct_listed"]["text"].as_str().unwrap().contains("hi"),
            "{r}"
        );
        assert!(
            r["direct_unlisted"]["text"]
                .as_str()
                .unwrap()
                .contains("UTC"),
            "{r}"
        );
        assert!(
            r["search"]["text"]
                .as_str()
                .unwrap()
                .contains("time__get_current_time"),
            "{r}"
        );
    }

    // The HTTP server, directly and through call_tool.
    let r = call(&url, 3, "web__echo", json!({"message": "over http"})).await;
    assert!(!failed(&r) && said(&r).contains("over http"), "{r}");
    let r = call(
        &url,
        4,
        "call_tool",
        json!({"name": "web__add", "arguments": {"a": 2, "b": 3}}),
    )
    .await;
    assert!(!failed(&r), "{r}");

    // A server that cannot start, and one whose command does not exist: named in their errors.
    let r = call(&url, 5, "vault__anything", json!({})).await;
    assert!(r.get("error").is_none() && failed(&r), "{r}");
    assert_eq!(
        said(&r),
        "mws could not complete the call to 'vault__anything': upstream unavailable: server \
         \"vault\": not started: environment variable MWS_TEST_FLEET_UNSET is not set (in \
         `args[0]`)"
    );
    let r = call(&url, 6, "ghost__anything", json!({})).await;
    assert!(failed(&r) && said(&r).contains("ghost"), "{r}");
    let discover = post_modern(&url, 7, "server/discover", json!({})).await;
    let instructions = discover["result"]["instructions"]
        .as_str()
        .unwrap_or_default();
    assert!(
        instructions.contains("Down right now:")
            && instructions.contains("vault")
            && instructions.contains("ghost"),
        "{instructions}"
    );

    // Kill the time server: the others keep answering, its calls fail naming it or succeed once
    // it is back, and it comes back.
    let pid = served.child.0.id();
    let killed = children(pid, "mcp-server-time");
    assert_eq!(killed.len(), 1, "one mcp-server-time child of mws");
    let status = std::process::Command::new("kill")
        .args(["-KILL", &killed[0].to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let r = call(
        &url,
        8,
        "everything__echo",
        json!({"message": "still here"}),
    )
    .await;
    assert!(!failed(&r) && said(&r).contains("still here"), "{r}");
    let r = call(&url, 9, "web__echo", json!({"message": "me too"})).await;
    assert!(!failed(&r), "{r}");
    let mut back = false;
    for i in 0..COME_BACK_TRIES {
        let r = call(
            &url,
            100 + i as i64,
            "time__get_current_time",
            json!({"timezone": "UTC"}),
        )
        .await;
        if !failed(&r) {
            back = true;
            break;
        }
        assert!(
            said(&r).contains("\"time\""),
            "error does not name the server: {r}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(back, "the time server did not come back");

    served.stop();
    let rows = served.calls();
    let tools: Vec<&str> = rows.iter().map(|(t, _, _, _)| t.as_str()).collect();
    for name in [
        "everything__echo",
        "time__get_current_time",
        "web__echo",
        "web__add",
        "ghost__anything",
    ] {
        assert!(tools.contains(&name), "no calls row for {name}: {tools:?}");
    }
    assert!(
        tools
            .iter()
            .all(|t| t.contains("__") || *t == "search_tools"),
        "a row without its server prefix: {tools:?}"
    );
    // Each server's catalog is stored under its own name.
    for s in ["everything", "time", "web"] {
        let p = served
            .dir
            .path()
            .join(format!("state/servers/{s}/catalog.json"));
        assert!(p.exists(), "{} missing", p.display());
    }
}

/// A tool name that would pass 64 characters once a client adds `mcp__toolbox__` and the server
/// prefix: listed shortened, callable under the short name (the server gets its own name), and
/// named in `mws doctor` and `mws report`; a server that cannot start is a failed doctor check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_names_are_shortened_callable_and_reported() {
    let long = "a_tool_with_a_name_long_enough_to_pass_the_clients_limit";
    let web = rmcp_upstream::start(false).await;
    web.shared.extra.lock().unwrap().push(long.to_string());
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "servers": {
            "web": {"url": web.url},
            "vault": {"url": "https://${MWS_TEST_FLEET_UNSET}/mcp"}
        },
        "stateDir": dir.path().join("state"),
        "transcripts": []
    });
    let path = config_in(dir.path(), config.clone());

    let out = mws_config(&path).arg("doctor").output().unwrap();
    let doctor = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{doctor}");
    let web_line = format!("web ({}): reachable", web.url);
    assert!(doctor.contains(&web_line), "{doctor}");
    let full = format!("web__{long}");
    assert!(
        doctor.contains(&format!(
            "{full} is exposed as web__a_tool_with_a_name_long_enough_"
        )),
        "{doctor}"
    );
    assert!(
        doctor.contains("vault (https://${MWS_TEST_FLEET_UNSET}/mcp): not started"),
        "{doctor}"
    );
    assert!(
        doctor.contains("environment variable MWS_TEST_FLEET_UNSET is not set (in `url`)"),
        "{doctor}"
    );

    // The same server as the single `upstream`: doctor says which names pass the limit.
    let single = json!({"upstream": {"url": web.url}, "stateDir": dir.path().join("single"), "transcripts": []});
    let single_path = dir.path().join("single.json");
    std::fs::write(&single_path, single.to_string()).unwrap();
    let out = serve::mws()
        .args(["--config", single_path.to_str().unwrap(), "doctor"])
        .output()
        .unwrap();
    let doctor = String::from_utf8_lossy(&out.stdout);
    assert!(
        doctor.contains("1 name(s) too long for Claude's and OpenAI's APIs"),
        "{doctor}"
    );
    assert!(
        doctor.contains(&format!(
            "tool \"{long}\" is 70 characters with the client's mcp__toolbox__ (limit 64)"
        )),
        "{doctor}"
    );
    assert!(
        doctor.contains("move the upstream into \"servers\""),
        "{doctor}"
    );

    let mut served = serve::start_in(dir, &config, &[]);
    let all = call(&served.url, 1, "search_tools", json!({"query": ""})).await;
    let text = said(&all);
    let short = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
        .find(|w| w.starts_with("web__a_tool_with"))
        .unwrap_or_else(|| panic!("no shortened name in {text}"))
        .to_string();
    assert!(short.len() + "mcp__toolbox__".len() <= 64, "{short}");
    assert!(
        !text.contains(&full),
        "the full name is not exposed: {text}"
    );
    // The server receives its own name for it (the fixture answers that it has no such tool).
    let r = call(&served.url, 2, &short, json!({})).await;
    assert!(said(&r).contains(&format!("unknown tool {long}")), "{r}");
    served.stop();

    let report = json_run(mws_config(&path).args(["report", "--json"]));
    let servers = &report["upstream"]["servers"];
    assert_eq!(servers[0]["name"], "web");
    assert_eq!(servers[0]["status"], "up");
    assert_eq!(servers[0]["shortened"][0]["exposed"], json!(short));
    assert_eq!(servers[0]["shortened"][0]["name"], json!(full));
    assert_eq!(servers[1]["status"], "not started");
}

/// Moving a config from `upstream` to `servers`: the server marked `adoptsUpstreamHistory` takes
/// over the working set and pins stored under the old unprefixed names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_former_upstreams_working_set_and_pins_carry_over() {
    let web = rmcp_upstream::start(false).await;
    let config = json!({
        "servers": {"web": {"url": web.url, "adoptsUpstreamHistory": true}},
        "pins": ["add"],
        "transcripts": []
    });
    let mut served = serve::start(&config, &["echo"]);
    let list = post_modern(&served.url, 1, "tools/list", json!({})).await;
    assert_eq!(
        serve::names(&list),
        [
            "search_tools",
            "call_tool",
            "run_script",
            "web__echo",
            "web__add"
        ]
    );
    let r = call(&served.url, 2, "web__echo", json!({"message": "moved"})).await;
    assert!(!failed(&r), "{r}");
    served.stop();
    let stderr = served.stderr.lock().unwrap().join("\n");
    assert!(
        stderr.contains("history row(s) without a server prefix now count for server \"web\""),
        "{stderr}"
    );
}

/// `mws serve --stdio` in front of two servers (the rmcp fixture over HTTP and mcp-server-time
/// over stdio): a legacy session lists and calls a tool of each under its prefixed name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_serving_reaches_every_server() {
    let web = rmcp_upstream::start(false).await;
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "servers": http_and_time("web", &web.url),
        "pins": ["web__echo"],
        "transcripts": []
    });
    let mut mws = serve::StdioServed::start(dir.path(), &config);
    mws.initialize("fleet-test").await;
    mws.send(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))
        .await;
    let list = mws.next().await;
    assert_eq!(
        serve::names(&list),
        [
            "search_tools",
            "call_tool",
            "call_read_only_tool",
            "run_script",
            "web__echo"
        ]
    );
    let calls = [
        (3, "web__echo", json!({"message": "via stdio"}), "via stdio"),
        (
            4,
            "time__get_current_time",
            json!({"timezone": "UTC"}),
            "UTC",
        ),
    ];
    for (id, name, args, want) in calls {
        mws.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": args}}))
            .await;
        let r = mws.reply(id).await;
        assert!(!failed(&r) && said(&r).contains(want), "{name}: {r}");
    }
    mws.close().await;
}
