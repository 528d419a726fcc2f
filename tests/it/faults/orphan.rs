//! `mws serve` killed outright (SIGKILL, no chance to stop its children): its stdio upstream must
//! not outlive it. The upstream here is `sleep`, which never reads stdin, like a server with a
//! timer running that does not exit on EOF.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::serve;

/// How long the child may take to appear, and to go after mws is killed.
const WAIT: Duration = Duration::from_secs(15);

/// The pids of `pid`'s children, over all its threads.
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok())
        .flat_map(|s| {
            s.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

/// Alive and not a zombie.
fn running(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let state = s.rsplit(')').next().unwrap_or("").trim_start();
            !state.starts_with('Z')
        })
        .unwrap_or(false)
}

#[test]
fn a_killed_mws_takes_its_stdio_upstream_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "upstream": {"command": "sleep", "args": ["300"]},
        "stateDir": dir.path().join("state"),
        "timeouts": {"listMs": 500, "callMs": 500},
    });
    let path = dir.path().join("c.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let mut mws = Command::new(env!("CARGO_BIN_EXE_mws"))
        .args(["serve", "--port", "0", "--config"])
        .arg(Path::new(&path))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + WAIT;
    let child = loop {
        if let Some(&c) = children(mws.id()).first() {
            break c;
        }
        assert!(Instant::now() < deadline, "mws never started its upstream");
        std::thread::sleep(Duration::from_millis(20));
    };
    mws.kill().unwrap();
    mws.wait().unwrap();
    let deadline = Instant::now() + WAIT;
    while running(child) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let survived = running(child);
    if survived {
        let _ = Command::new("kill").arg(child.to_string()).status();
    }
    assert!(
        !survived,
        "the upstream (pid {child}) outlived a SIGKILLed mws"
    );
}

/// How long tokio keeps an idle blocking thread (its default `thread_keep_alive`), plus margin.
const BLOCKING_THREAD_GONE: Duration = Duration::from_secs(12);

/// The parent-death signal fires when the spawning *thread* ends, not the process. A search
/// index build must not retire the runtime thread that started the stdio upstream (as
/// `block_in_place` does: that thread then ends once idle in the blocking pool), or the upstream
/// gets SIGTERM in the middle of a session and calls fail while it restarts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_index_build_does_not_kill_the_stdio_upstream() {
    let config = json!({
        "upstream": {"command": env!("CARGO_BIN_EXE_mws"), "args": ["demo-upstream"]},
    });
    let mut served = serve::start(&config, &[]);
    let pid = served.child.0.id();
    let search = json!({"name": "search_tools", "arguments": {"query": "send an email"}});
    let deadline = Instant::now() + WAIT;
    loop {
        let reply = serve::post_modern(&served.url, 1, "tools/call", search.clone()).await;
        if reply["result"]["isError"] != true {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "search_tools never found tools: {reply}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let upstream = children(pid);
    assert_eq!(upstream.len(), 1, "one stdio upstream: {upstream:?}");
    tokio::time::sleep(BLOCKING_THREAD_GONE).await;
    let call = json!({"name": "mail_list_messages", "arguments": {}});
    let reply = serve::post_modern(&served.url, 2, "tools/call", call).await;
    assert!(reply["result"]["isError"] != true, "{reply}");
    assert_eq!(children(pid), upstream, "the stdio upstream was replaced");
    let stderr = served.stderr.lock().unwrap().join("\n");
    assert!(!stderr.contains("restarting"), "{stderr}");
    served.stop();
}
