//! Tests of the import plan: where each kind of registration goes, merging and renaming.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;
use crate::setup::{Client, Scope};

fn found(client: Client, name: &str, transport: Transport, flags: Vec<Flag>) -> Found {
    Found {
        origin: Origin::new(client, Path::new("/f"), Scope::User),
        name: name.into(),
        transport,
        flags,
    }
}

fn stdio(command: &str) -> Transport {
    Transport::Stdio {
        command: command.into(),
        args: vec!["a".into()],
        env: BTreeMap::from([("TOKEN".into(), "secret".into())]),
        cwd: None,
    }
}

fn http(url: &str, headers: &[(&str, &str)]) -> Transport {
    Transport::Http {
        url: url.into(),
        headers: headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    }
}

fn run(found: Vec<Found>) -> Plan {
    plan(Findings {
        found,
        ..Findings::default()
    })
}

#[test]
fn same_name_same_definition_is_merged() {
    let p = run(vec![
        found(Client::ClaudeCode, "time", stdio("uvx"), vec![]),
        found(Client::Codex, "time", stdio("uvx"), vec![]),
    ]);
    assert_eq!(p.servers.len(), 1);
    assert_eq!(p.imported[0].sources.len(), 2);
    assert_eq!(p.imported[0].renamed, None);
}

/// The same server under another name in some client: one server; the other name is an alias
/// (`apply` writes it as `aliases`). mws's own endpoint is not a server to put behind mws.
#[test]
fn same_definition_other_name_is_one_server_and_mws_stays() {
    let own = "http://127.0.0.1:4484/mcp";
    let p = plan_for(
        Findings {
            found: vec![
                found(Client::ClaudeCode, "github", stdio("gh-srv"), vec![]),
                found(Client::Codex, "gh", stdio("gh-srv"), vec![]),
                found(
                    Client::Cursor,
                    "toolbox",
                    http("http://localhost:4484/mcp/", &[]),
                    vec![],
                ),
            ],
            ..Findings::default()
        },
        Some(own),
    );
    let names: Vec<_> = p.servers.keys().map(String::as_str).collect();
    assert_eq!(names, ["github"]);
    let sources: Vec<_> = p.imported[0]
        .sources
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(sources, ["github", "gh"]);
    assert_eq!(p.stays[0].reason, "this is mws itself");
}

#[test]
fn same_name_other_definition_is_renamed() {
    let p = run(vec![
        found(Client::ClaudeCode, "github", stdio("a"), vec![]),
        found(Client::Codex, "github", stdio("b"), vec![]),
        found(Client::Cursor, "github", stdio("c"), vec![]),
        found(Client::VsCode, "github", stdio("b"), vec![]),
    ]);
    let names: Vec<_> = p.servers.keys().map(String::as_str).collect();
    assert_eq!(names, ["github", "github-2", "github-3"]);
    assert_eq!(p.imported[1].sources.len(), 2, "{:?}", p.imported[1]);
    assert!(
        p.imported[1]
            .renamed
            .as_deref()
            .unwrap()
            .contains("different server")
    );
}

#[test]
fn what_stays_with_the_client() {
    let sse = Transport::Sse {
        url: "https://x/sse".into(),
        headers: BTreeMap::new(),
    };
    let cases = [
        (
            found(Client::ClaudeCode, "s", sse, vec![]),
            "legacy HTTP+SSE",
        ),
        (
            found(
                Client::VsCode,
                "i",
                stdio("x"),
                vec![Flag::Input("key".into())],
            ),
            "input `key`",
        ),
        (
            found(Client::Codex, "d", stdio("x"), vec![Flag::Disabled]),
            "switched off",
        ),
        (
            found(Client::Codex, "m", stdio("/usr/bin/mws"), vec![]),
            "mws itself",
        ),
        (
            found(
                Client::ClaudeCode,
                "h",
                http("https://x", &[]),
                vec![Flag::HeadersHelper],
            ),
            "command claude-code runs",
        ),
    ];
    for (f, want) in cases {
        let name = f.name.clone();
        let p = run(vec![f]);
        assert!(p.servers.is_empty(), "{name} went behind mws");
        assert!(
            p.stays[0].reason.contains(want),
            "{name}: {}",
            p.stays[0].reason
        );
    }
}

#[test]
fn oauth_servers_go_behind_mws_needing_a_login() {
    let p = run(vec![
        found(
            Client::Cursor,
            "o",
            http("https://x/mcp", &[]),
            vec![Flag::Oauth],
        ),
        found(
            Client::VsCode,
            "gh",
            http("https://api.githubcopilot.com/mcp/", &[]),
            vec![],
        ),
        found(
            Client::ClaudeCode,
            "plain",
            http("https://y/mcp", &[]),
            vec![],
        ),
    ]);
    assert!(p.stays.is_empty(), "{:?}", p.stays);
    let login: Vec<(&str, bool)> = p
        .imported
        .iter()
        .map(|i| (i.name.as_str(), i.needs_login))
        .collect();
    assert_eq!(login, [("o", true), ("gh", true), ("plain", false)]);
    // Only the URL is carried over: no client token.
    assert_eq!(
        p.servers["gh"],
        ServerConfig::Http {
            url: "https://api.githubcopilot.com/mcp/".into(),
            headers: BTreeMap::new()
        }
    );
}

#[test]
fn a_hosted_server_with_a_token_goes_behind_mws() {
    let t = http(
        "https://api.githubcopilot.com/mcp/",
        &[("Authorization", "Bearer x")],
    );
    let p = run(vec![found(Client::ClaudeCode, "gh", t, vec![])]);
    assert!(p.stays.is_empty());
    assert_eq!(
        p.servers["gh"],
        ServerConfig::Http {
            url: "https://api.githubcopilot.com/mcp/".into(),
            headers: BTreeMap::from([("Authorization".into(), "Bearer x".into())]),
        }
    );
}

#[test]
fn servers_map_has_the_config_shape_with_secrets() {
    let p = run(vec![found(Client::ClaudeCode, "t", stdio("uvx"), vec![])]);
    let v = serde_json::to_value(&p.servers).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"t": {"command": "uvx", "args": ["a"], "env": {"TOKEN": "secret"}}})
    );
}

#[test]
fn a_project_relative_cwd_is_made_absolute() {
    let t = Transport::Stdio {
        command: "python".into(),
        args: vec![],
        env: BTreeMap::new(),
        cwd: Some("./srv".into()),
    };
    let mut f = found(Client::GeminiCli, "py", t, vec![]);
    f.origin.scope = Scope::Project;
    f.origin.project = Some("/w/proj".into());
    let options = Options {
        include_project_files: true,
        ..Options::default()
    };
    let p = plan_with(
        Findings {
            found: vec![f],
            ..Findings::default()
        },
        &options,
    );
    let ServerConfig::Stdio { cwd, .. } = &p.servers["py"] else {
        panic!("{:?}", p.servers);
    };
    assert_eq!(cwd.as_deref(), Some(Path::new("/w/proj/srv")));
}

#[path = "plan_trust_tests.rs"]
mod trust;
