//! Working sets per project with the real Claude Code CLI (docs/working-set.md#per-project): mws
//! registered as a stdio server (`mws serve --stdio`, which Claude Code starts in its project
//! folder), two project folders each using its own tool through `call_tool` in two sessions,
//! then `mws promote`: each project's next session gets its own tool up front, not the other's.

use serde_json::json;

use super::clients::Claude;
use super::model::{self, MockModel};
use super::mws::Mws;
use super::peers::server_everything;
use super::{SERIAL, SERVER, Scratch, anthropic_tools, first_main_request, marker, script};

/// (folder, tool it uses, the tool's arguments).
const PROJECTS: [(&str, &str); 2] = [("api", "echo"), ("web", "get-sum")];

fn args(tool: &str, mark: &str) -> serde_json::Value {
    match tool {
        "echo" => json!({"message": mark}),
        _ => json!({"a": 17, "b": 25}),
    }
}

#[test]
fn claude_code_in_two_projects_gets_each_projects_tools_up_front() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = Scratch::new("claude-projects");
    let (_upstream, upstream_url) = server_everything(dir.path());
    let mock = MockModel::start(script("call_tool", json!({})), &model::log_path(dir.path()));
    let home = dir.path().join("claude-home");
    let claude =
        |folder: &str| Claude::in_home(&home, &dir.path().join(folder), dir.path(), &mock.url());
    let roots = home.join(".claude/projects");
    // The HTTP proxy is not used by Claude Code here; its config and commands are.
    let mws = Mws::start(dir.path(), &upstream_url, &[], &[("claude-code", &roots)]);
    let bin = env!("CARGO_BIN_EXE_mws");
    let config = mws.config.to_str().unwrap();
    claude("api").mcp(
        "claude-mcp-add-stdio",
        &[
            "add", "-s", "user", SERVER, "--", bin, "--config", config, "serve", "--stdio",
        ],
    );

    for n in 1..=2 {
        for (folder, tool) in PROJECTS {
            let mark = marker(&format!("{folder}-{n}"));
            mock.set_script(script(
                "call_tool",
                json!({"name": tool, "arguments": args(tool, &mark)}),
            ));
            let run = claude(folder).print(
                &format!("claude-{folder}-{n}"),
                &format!("use the {tool} tool"),
                "mcp__toolbox__call_tool",
            );
            let answer = run.result["result"].as_str().unwrap_or_default();
            let want = if tool == "echo" {
                format!("Echo: {mark}")
            } else {
                "42".into()
            };
            assert!(answer.contains(&want), "{folder} {n}: {}", run.result);
        }
    }
    let (rows, user_wide) = mws.promote("promote-projects");
    // Each tool was used in one project only: listed user-wide and in its project.
    for (_, tool) in PROJECTS {
        assert!(user_wide.iter().any(|t| t == tool), "{user_wide:?}");
    }
    let real = |folder: &str| std::fs::canonicalize(dir.path().join(folder)).unwrap();
    for (folder, tool) in PROJECTS {
        let p = real(folder);
        let own: Vec<&str> = rows
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["project"] == p.to_str().unwrap() && r["after"] == true)
            .filter_map(|r| r["tool"].as_str())
            .collect();
        assert_eq!(own, [tool], "{folder}: {rows}");
    }

    // A third session in each folder: its own tool up front, the other project's not listed.
    for (folder, tool) in PROJECTS {
        let other = PROJECTS.iter().find(|(f, _)| *f != folder).unwrap().1;
        let mark = marker(&format!("{folder}-3"));
        mock.set_script(script(tool, args(tool, &mark)));
        let before = mock.requests().len();
        claude(folder).print(
            &format!("claude-{folder}-3"),
            &format!("use the {tool} tool"),
            &format!("mcp__toolbox__{tool}"),
        );
        let reqs = mock.requests().split_off(before);
        let tools = anthropic_tools(first_main_request(&reqs));
        let has = |t: &str| {
            tools
                .iter()
                .any(|(n, d)| *n == format!("mcp__{SERVER}__{t}") && !d)
        };
        assert!(has(tool), "{folder}: {tool} not up front: {tools:?}");
        assert!(
            !has(other),
            "{folder}: {other} listed, it is another project's: {tools:?}"
        );
        assert!(has("search_tools") && has("call_tool"), "{tools:?}");
    }
}
