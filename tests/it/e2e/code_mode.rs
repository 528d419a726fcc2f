//! Code mode with the real Claude Code CLI: the mock model calls `run_script` through `mws serve`
//! in front of server-everything with a script that calls two of its tools; the answer the model
//! reads holds what the script returned (the upstream's echo of a per-run marker), and each call
//! the script made is a `calls` row with via 'script'.

use serde_json::json;

use super::clients::Claude;
use super::model::{self, FINAL_PREFIX, MockModel};
use super::mws::{Mws, calls_in};
use super::peers::server_everything;
use super::{SERIAL, SERVER, Scratch, anthropic_tools, first_main_request, marker, script};

#[test]
fn claude_code_runs_a_script_through_mws() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("claude-script");
    let (_upstream, upstream_url) = server_everything(dir.path());
    let mark = marker("claude-script");
    let code = format!(
        "const echoed = await tools.echo({{message: \"{mark}\"}});\n\
         const sum = await tools[\"get-sum\"]({{a: 2, b: 3}});\n\
         return JSON.stringify({{echoed, sum}});"
    );
    let mock = MockModel::start(
        script("run_script", json!({"code": code})),
        &model::log_path(dir.path()),
    );
    let claude = Claude::new(dir.path(), &mock.url());
    let mws = Mws::start_code_mode(dir.path(), &upstream_url);
    claude.add_http_server(SERVER, &mws.url);
    let run = claude.print("claude-script", "use a script", "mcp__toolbox__run_script");

    let answer = run.result["result"].as_str().unwrap_or_default();
    assert!(
        answer.starts_with(FINAL_PREFIX)
            && answer.contains(&format!("Echo: {mark}"))
            && answer.contains("[is_error=false]"),
        "the answer lacks what the script returned: {}",
        run.result
    );
    let tools = anthropic_tools(first_main_request(&mock.requests()));
    assert!(
        tools
            .iter()
            .any(|(t, d)| t == &format!("mcp__{SERVER}__run_script") && !d),
        "run_script not sent up front: {tools:?}"
    );
    // The call log is written off the request path, in batches: wait (bounded) for the rows.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while ["echo", "get-sum"].iter().any(|t| mws.calls(t).is_empty())
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    drop(mws);
    for tool in ["echo", "get-sum"] {
        let rows = calls_in(&dir.path().join("mws-state"), tool);
        assert_eq!(rows.len(), 1, "{tool}: {rows:?}");
        assert_eq!(rows[0].via, "script", "{tool}: {rows:?}");
        assert!(rows[0].ok, "{tool}: {rows:?}");
        assert_eq!(rows[0].client_call_id, None, "{tool}: {rows:?}");
    }
}
