//! One name for a rule, through the real `mws serve` in front of `support/named_stdio.py`
//! (server `gh`): a tool whose name mws shortened and a pair of case twins (`delete_repo`,
//! `Delete_Repo`) under `policy.deny`, `allow` and `readOnly`, called directly, through
//! `call_tool` and through `call_read_only_tool`, in both protocol eras and over `--stdio`. A
//! rule written for either name of a tool catches it, only an exact name runs, and the fixture's
//! log shows which tool ran.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::clients;
use crate::support::serve::{self, Served, StdioServed, post_modern};
use crate::support::wire::LegacyClient;

/// 57 characters: `gh__` and it pass the 50 a client's `mcp__toolbox__` leaves.
const LONG: &str = "delete_every_repository_of_the_organisation_and_its_forks";

fn full() -> String {
    format!("gh__{LONG}")
}

/// The name clients see for `LONG`, as `catalog::exposed` shortens it.
fn short() -> String {
    let budget = mws::catalog::exposed::name_budget("toolbox");
    mws::catalog::exposed::shorten(&full(), budget).into_owned()
}

fn tools() -> Value {
    let ro = |name: &str, read_only: bool| {
        json!({"name": name, "description": format!("the {name} tool"),
               "inputSchema": {"type": "object"},
               "annotations": {"readOnlyHint": read_only}})
    };
    json!([
        ro("delete_repo", false),
        ro("Delete_Repo", false),
        ro("list_repos", true),
        ro("read_file", true),
        ro("Read_File", false),
        ro(LONG, false),
    ])
}

/// A config with `policy`; every tool pinned (the long one by its full name).
fn config(dir: &Path, policy: Value) -> (Value, PathBuf) {
    let tools_file = dir.join("tools.json");
    std::fs::write(&tools_file, tools().to_string()).unwrap();
    let log = dir.join("ran.log");
    let fixture = crate::support::root().join("tests/it/support/named_stdio.py");
    let pins: Vec<String> = [
        "delete_repo",
        "Delete_Repo",
        "list_repos",
        "read_file",
        "Read_File",
        LONG,
    ]
    .iter()
    .map(|t| format!("gh__{t}"))
    .collect();
    let config = json!({
        "servers": {"gh": {"command": "python3", "args": [fixture, tools_file, &log]}},
        "listing": "working-set",
        "pins": pins,
        "timeouts": {"listMs": 20000, "callMs": 20000, "catalogTtlMs": 60000},
        "policy": policy,
        "transcripts": [],
    });
    (config, log)
}

fn start(policy: Value) -> (Served, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (config, log) = config(dir.path(), policy);
    (serve::start_in(dir, &config, &[]), log)
}

/// The tools that ran, in order.
fn ran(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim_start_matches("tools/call ").to_string())
        .collect()
}

/// The policy's refusal as the model reads it.
fn refused(tool: &str, why: &str) -> String {
    format!(
        "{tool} may not be called: the policy in mws's config excludes it ({why}), so mws \
         neither lists, searches nor runs it"
    )
}

fn not_read_only(tool: &str) -> String {
    format!(
        "call_read_only_tool did not run {tool}: its server does not mark it read-only \
         (readOnlyHint: true), and call_read_only_tool runs only tools that are. Run it with \
         call_tool instead, with the same name and arguments."
    )
}

/// A client of one era.
enum Client {
    Modern(String),
    Legacy(LegacyClient),
}

impl Client {
    async fn both(url: &str) -> [Client; 2] {
        let legacy = LegacyClient::open(url, "names-test", json!({})).await;
        [Client::Modern(url.to_string()), Client::Legacy(legacy)]
    }

    async fn rpc(&self, method: &str, params: Value) -> Value {
        match self {
            Client::Modern(url) => post_modern(url, 5, method, params).await,
            Client::Legacy(c) => c.rpc(method, params).await,
        }
    }

    /// The result of `tools/call` of `name` (never a JSON-RPC error).
    async fn call(&self, name: &str, arguments: Value) -> Value {
        let r = self
            .rpc("tools/call", json!({"name": name, "arguments": arguments}))
            .await;
        assert!(r.get("error").is_none(), "{r}");
        r["result"].clone()
    }

    /// The text of `runner {name}`'s result, and whether it is an error.
    async fn via(&self, runner: &str, name: &str) -> (String, bool) {
        let r = self
            .call(runner, json!({"name": name, "arguments": {}}))
            .await;
        (clients::text(&r), r["isError"] == json!(true))
    }

    async fn direct(&self, name: &str) -> (String, bool) {
        let r = self.call(name, json!({})).await;
        (clients::text(&r), r["isError"] == json!(true))
    }

    async fn listed(&self) -> Vec<String> {
        serve::names(&self.rpc("tools/list", json!({})).await)
    }

    fn era(&self) -> &'static str {
        match self {
            Client::Modern(_) => "2026-07-28",
            Client::Legacy(_) => "2025-11-25",
        }
    }
}

fn error(text: String) -> (String, bool) {
    (text, true)
}

fn ok(tool: &str) -> (String, bool) {
    (format!("ran {tool}"), false)
}

/// The did-you-mean for an inexact name: an error that runs nothing and names `first` first.
fn assert_did_you_mean(got: &(String, bool), given: &str, first: &str) {
    let want = format!("unknown tool '{given}'. Did you mean: {first}");
    assert!(got.1 && got.0.starts_with(&want), "{got:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_catches_a_shortened_name_and_never_runs_a_case_twin_in_both_eras() {
    let policy = json!({"deny": ["gh__delete_repo", "*_forks", "gh__read_file"]});
    let (mut mws, log) = start(policy);
    let (short, full) = (short(), full());
    for c in Client::both(&mws.url).await {
        let era = c.era();
        assert_eq!(
            c.listed().await,
            [
                "search_tools",
                "call_tool",
                "call_read_only_tool",
                "run_script",
                "gh__Delete_Repo",
                "gh__list_repos",
                "gh__Read_File"
            ],
            "{era}"
        );
        let all = c
            .call("search_tools", json!({"query": ""}))
            .await
            .to_string();
        assert!(!all.contains(&short), "{era}: search shows it: {all}");
        assert!(!all.contains("gh__delete_repo"), "{era}: {all}");

        let by_full = "config `policy.deny` has \"*_forks\"";
        let shortened = format!("{by_full}, matching its full name \"{full}\"");
        assert_eq!(
            c.direct(&short).await,
            error(refused(&short, &shortened)),
            "{era}"
        );
        assert_eq!(
            c.direct(&full).await,
            error(refused(&full, by_full)),
            "{era}"
        );
        assert_eq!(
            c.via("call_tool", &short).await,
            error(refused(&short, &shortened)),
            "{era}"
        );
        let twin = refused(
            "gh__delete_repo",
            "config `policy.deny` has \"gh__delete_repo\"",
        );
        assert_eq!(
            c.direct("gh__delete_repo").await,
            error(twin.clone()),
            "{era}"
        );
        assert_eq!(
            c.via("call_tool", "gh__delete_repo").await,
            error(twin.clone()),
            "{era}"
        );
        assert_eq!(
            c.via("call_tool", "delete_repo").await,
            error(twin),
            "{era}"
        );
        let inexact = c.via("call_tool", "gh__DELETE_REPO").await;
        assert_did_you_mean(&inexact, "gh__DELETE_REPO", "gh__Delete_Repo");
        let read = refused(
            "gh__read_file",
            "config `policy.deny` has \"gh__read_file\"",
        );
        assert_eq!(
            c.via("call_read_only_tool", "gh__read_file").await,
            error(read),
            "{era}: a denied read-only tool"
        );
        assert_eq!(ran(&log), Vec::<String>::new(), "{era}: a refused call ran");
    }
    let c = Client::Modern(mws.url.clone());
    assert_eq!(
        c.via("call_tool", "gh__Delete_Repo").await,
        ok("Delete_Repo")
    );
    assert_eq!(ran(&log), ["Delete_Repo"]);
    mws.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_names_a_tool_by_either_name_and_only_exact_names_run_in_both_eras() {
    let (mut mws, log) = start(json!({"allow": ["gh__list_*", "gh__Delete_Repo", "*_forks"]}));
    let short = short();
    for c in Client::both(&mws.url).await {
        let era = c.era();
        let listed = c.listed().await;
        assert_eq!(
            listed[4..],
            ["gh__Delete_Repo", "gh__list_repos", short.as_str()],
            "{era}: a glob over the full name allows the shortened tool"
        );
        let unnamed = "config `policy.allow` does not name it";
        assert_eq!(
            c.direct("gh__delete_repo").await,
            error(refused("gh__delete_repo", unnamed)),
            "{era}"
        );
        assert_eq!(
            c.via("call_tool", "gh__delete_repo").await,
            error(refused("gh__delete_repo", unnamed)),
            "{era}"
        );
        let inexact = c.via("call_tool", "gh__delete_Repo").await;
        assert_did_you_mean(&inexact, "gh__delete_Repo", "gh__Delete_Repo");
        assert_eq!(
            c.via("call_tool", "gh__read_file").await,
            error(refused("gh__read_file", unnamed)),
            "{era}"
        );
        assert_eq!(ran(&log), Vec::<String>::new(), "{era}");
    }
    let c = Client::Modern(mws.url.clone());
    assert_eq!(c.direct(&short).await, ok(LONG));
    assert_eq!(
        c.via("call_tool", "gh__Delete_Repo").await,
        ok("Delete_Repo")
    );
    assert_eq!(ran(&log), [LONG, "Delete_Repo"]);
    mws.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_refuses_a_shortened_name_and_a_case_twin_in_both_eras() {
    let (mut mws, log) = start(json!({"readOnly": ["gh"]}));
    let short = short();
    let why = "config `policy.readOnly` names its server and the upstream does not annotate it \
               readOnlyHint: true";
    for c in Client::both(&mws.url).await {
        let era = c.era();
        assert_eq!(
            c.listed().await[4..],
            ["gh__list_repos", "gh__read_file"],
            "{era}"
        );
        assert_eq!(c.direct(&short).await, error(refused(&short, why)), "{era}");
        assert_eq!(
            c.via("call_tool", &full()).await,
            error(refused(&short, why)),
            "{era}: the full name runs the shortened tool, refused all the same"
        );
        assert_eq!(
            c.via("call_tool", "gh__Read_File").await,
            error(refused("gh__Read_File", why)),
            "{era}"
        );
        let inexact = c.via("call_tool", "gh__read_File").await;
        assert_did_you_mean(&inexact, "gh__read_File", "gh__read_file");
        assert_eq!(ran(&log), Vec::<String>::new(), "{era}");
    }
    let c = Client::Modern(mws.url.clone());
    assert_eq!(c.via("call_tool", "gh__read_file").await, ok("read_file"));
    assert_eq!(ran(&log), ["read_file"]);
    mws.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_read_only_tool_runs_read_only_tools_and_refuses_the_rest_in_both_eras() {
    let (mut mws, log) = start(json!({}));
    let short = short();
    for c in Client::both(&mws.url).await {
        let era = c.era();
        let listing = c.rpc("tools/list", json!({})).await;
        let meta = &listing["result"]["tools"][2];
        assert_eq!(meta["name"], "call_read_only_tool", "{era}: {listing}");
        assert_eq!(meta["annotations"]["readOnlyHint"], true, "{era}");
        let found = c
            .call("search_tools", json!({"query": "gh__list_repos"}))
            .await;
        let found: Value = serde_json::from_str(&clients::text(&found)).unwrap();
        assert_eq!(found["results"][0]["readOnly"], true, "{era}: {found}");
        let found = c
            .call("search_tools", json!({"query": "gh__Delete_Repo"}))
            .await;
        let found: Value = serde_json::from_str(&clients::text(&found)).unwrap();
        assert_eq!(found["results"][0].get("readOnly"), None, "{era}: {found}");

        for tool in ["gh__Delete_Repo", "gh__Read_File", short.as_str()] {
            assert_eq!(
                c.via("call_read_only_tool", tool).await,
                error(not_read_only(tool)),
                "{era}"
            );
        }
        assert_eq!(
            c.via("call_tool", "gh__DELETE_REPO").await,
            error(
                "unknown tool 'gh__DELETE_REPO'. Did you mean: gh__delete_repo, gh__Delete_Repo, \
                 gh__list_repos? Use search_tools(\"gh  DELETE REPO\") to find the right tool \
                 name."
                    .into()
            ),
            "{era}: the case twins both named, neither run"
        );
        let inexact = c.via("call_read_only_tool", "gh__List_Repos").await;
        assert_did_you_mean(&inexact, "gh__List_Repos", "gh__list_repos");
        assert_eq!(ran(&log).len(), usize::from(era == "2025-11-25"), "{era}");
        assert_eq!(
            c.via("call_read_only_tool", "gh__list_repos").await,
            ok("list_repos"),
            "{era}"
        );
    }
    assert_eq!(ran(&log), ["list_repos", "list_repos"]);
    mws.stop();
    let via: Vec<(String, String)> = mws
        .calls()
        .into_iter()
        .map(|(tool, via, _, _)| (tool, via))
        .collect();
    let row = ("gh__list_repos".to_string(), "call_tool".to_string());
    assert_eq!(via, [row.clone(), row]);
}

/// `--stdio`: the same refusals and the same read-only path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_shortened_and_case_twin_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (config, log) = config(dir.path(), json!({"deny": ["gh__delete_repo", "*_forks"]}));
    let mut mws = StdioServed::start(dir.path(), &config);
    mws.initialize("names-test").await;
    let mut ask = async |id: i64, name: &str, arguments: Value| {
        mws.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}))
            .await;
        let r = &mws.reply(id).await["result"];
        (clients::text(r), r["isError"] == json!(true))
    };
    let (short, full) = (short(), full());
    let shortened =
        format!("config `policy.deny` has \"*_forks\", matching its full name \"{full}\"");
    assert_eq!(
        ask(1, &short, json!({})).await,
        error(refused(&short, &shortened))
    );
    let via = |n: &str| json!({"name": n, "arguments": {}});
    assert_eq!(
        ask(2, "call_tool", via(&short)).await,
        error(refused(&short, &shortened))
    );
    let twin = refused(
        "gh__delete_repo",
        "config `policy.deny` has \"gh__delete_repo\"",
    );
    assert_eq!(
        ask(3, "call_tool", via("gh__delete_repo")).await,
        error(twin)
    );
    let inexact = ask(4, "call_tool", via("gh__DELETE_REPO")).await;
    assert_did_you_mean(&inexact, "gh__DELETE_REPO", "gh__Delete_Repo");
    assert_eq!(
        ask(5, "call_read_only_tool", via("gh__Delete_Repo")).await,
        error(not_read_only("gh__Delete_Repo"))
    );
    assert_eq!(ran(&log), Vec::<String>::new());
    assert_eq!(
        ask(6, "call_read_only_tool", via("gh__list_repos")).await,
        ok("list_repos")
    );
    assert_eq!(ran(&log), ["list_repos"]);
    mws.close().await;
}
