//! The fleet over in-memory servers: merged names, routing, a server down or hung, a server that
//! was never started.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::*;
use crate::upstream::CatalogSource;
use crate::upstream::fake::FakeUpstream;

fn tools(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}))
        .collect()
}

fn fleet(members: Vec<(&str, Arc<dyn Upstream>)>) -> Arc<dyn Upstream> {
    let members = members
        .into_iter()
        .map(|(n, up)| Member::new(n, up, None))
        .collect();
    Fleet::assemble(members, 50, Duration::from_millis(200), None)
}

fn names(snap: &CatalogSnapshot) -> Vec<String> {
    snap.catalog.names().map(String::from).collect()
}

async fn call(f: &Arc<dyn Upstream>, name: &str) -> Result<Value, UpstreamError> {
    f.request(
        "tools/call",
        json!({"name": name, "arguments": {}}),
        &CallContext::default(),
    )
    .await
}

#[tokio::test]
async fn merged_names_and_calls_routed_to_their_server() {
    let a = FakeUpstream::new(tools(&["create_issue", "search_tools"]));
    let b = FakeUpstream::new(tools(&["get_time"]));
    let f = fleet(vec![("github", a.clone()), ("time", b.clone())]);
    let snap = f.catalog().await;
    assert_eq!(
        names(&snap),
        [
            "github__create_issue",
            "github__search_tools",
            "time__get_time"
        ]
    );
    assert_eq!(snap.source, CatalogSource::Live);
    let r = call(&f, "time__get_time").await.unwrap();
    assert_eq!(r["content"][0]["text"], "get_time ran with {}");
    assert_eq!(b.seen()[0].params["name"], "get_time");
    call(&f, "github__search_tools").await.unwrap();
    assert_eq!(a.seen()[0].params["name"], "search_tools");
    // Not listed (yet): routed by its prefix; the server's own error comes back.
    let e = call(&f, "time__later").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "upstream error -32602: server \"time\": Unknown tool: later"
    );
    let e = call(&f, "nobody__x").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "upstream error -32602: unknown tool \"nobody__x\": names are <server>__<name>, with \
         server one of github, time"
    );
}

#[tokio::test]
async fn a_server_down_fails_its_calls_at_once_and_the_others_work() {
    let a = FakeUpstream::new(tools(&["create_issue"]));
    let b = FakeUpstream::new(tools(&["get_time"]));
    let f = fleet(vec![("github", a.clone()), ("time", b.clone())]);
    f.catalog().await;
    b.set_up(false);
    let e = call(&f, "time__get_time").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "upstream unavailable: server \"time\": connection refused"
    );
    assert!(call(&f, "github__create_issue").await.is_ok());
    let st = f.status();
    assert_eq!(st.servers.len(), 2);
    assert_eq!(st.servers[0].tools, 1);
}

/// An upstream that never answers anything; counts the catalogs asked of it.
struct Hung(
    tokio::sync::watch::Sender<u64>,
    std::sync::atomic::AtomicUsize,
);

#[async_trait::async_trait]
impl Upstream for Hung {
    async fn catalog(&self) -> CatalogSnapshot {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::future::pending().await
    }
    async fn request(&self, _: &str, _: Value, _: &CallContext) -> Result<Value, UpstreamError> {
        std::future::pending().await
    }
    async fn notify(&self, _: &str, _: Option<Value>) -> Result<(), UpstreamError> {
        Ok(())
    }
    fn status(&self) -> UpstreamStatus {
        UpstreamStatus::default()
    }
    fn changes(&self) -> tokio::sync::watch::Receiver<u64> {
        self.0.subscribe()
    }
}

#[tokio::test]
async fn a_hung_server_is_waited_for_only_while_starting() {
    let a = FakeUpstream::new(tools(&["create_issue"]));
    let hung = Arc::new(Hung(
        tokio::sync::watch::channel(0).0,
        std::sync::atomic::AtomicUsize::new(0),
    ));
    let f = fleet(vec![("github", a), ("slow", hung.clone())]);
    // Bounded by the startup budget (200 ms) although one server never answers.
    let first = f.catalog().await;
    assert_eq!(names(&first), ["github__create_issue"]);
    // Only the background watcher asked the hung server; the lists never do.
    for _ in 0..3 {
        assert_eq!(names(&f.catalog().await), ["github__create_issue"]);
    }
    assert_eq!(hung.1.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_server_never_started_serves_its_stored_catalog_and_says_why() {
    let dir = std::env::temp_dir().join(format!("mws-fleet-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("catalog.json");
    std::fs::write(&path, json!({"tools": tools(&["query"])}).to_string()).unwrap();
    let why = "environment variable DB_URL is not set (in `env.DB`)".to_string();
    let stopped = Stopped::serving(path, why.clone(), false);
    let members = vec![
        Member::new("db", stopped, Some(why)),
        Member::new("time", FakeUpstream::new(tools(&["get_time"])), None),
    ];
    let f = Fleet::assemble(members, 50, Duration::from_millis(200), None);
    assert_eq!(names(&f.catalog().await), ["db__query", "time__get_time"]);
    let e = call(&f, "db__query").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "upstream unavailable: server \"db\": not started: environment variable DB_URL is not \
         set (in `env.DB`)"
    );
    let st = f.status();
    assert!(st.servers[0].down() && !st.servers[1].down());
    let _ = std::fs::remove_dir_all(dir);
}

#[tokio::test]
async fn resources_merge_and_prompts_route_by_prefix() {
    let a = FakeUpstream::new(tools(&["x"]));
    let b = FakeUpstream::new(tools(&["y"]));
    let f = fleet(vec![("one", a.clone()), ("two", b.clone())]);
    let ctx = CallContext::default();
    let r = f.request("resources/list", json!({}), &ctx).await.unwrap();
    assert_eq!(r["resources"].as_array().unwrap().len(), 2);
    // Both list mem://a: the first server owns it.
    let _ = f
        .request("resources/read", json!({"uri": "mem://a"}), &ctx)
        .await;
    assert_eq!(a.seen().last().unwrap().method, "resources/read");
    assert!(b.seen().iter().all(|s| s.method != "resources/read"));
    let _ = f
        .request("prompts/get", json!({"name": "two__greet"}), &ctx)
        .await;
    let last = b.seen().last().unwrap().clone();
    assert_eq!(
        (last.method.as_str(), &last.params["name"]),
        ("prompts/get", &json!("greet"))
    );
    let e = f
        .request("resources/read", json!({"uri": "file:///nowhere"}), &ctx)
        .await
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "upstream error -32602: no server lists resource \"file:///nowhere\" or a template it \
         matches"
    );
}

#[test]
fn a_timeout_names_its_server() {
    let e = UpstreamError::Timeout {
        after: Duration::from_secs(30),
        server: None,
    };
    assert_eq!(e.to_string(), "upstream did not answer within 30s");
    assert_eq!(
        named("slow", e).to_string(),
        "server \"slow\" did not answer within 30s"
    );
}
