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

/// Every name a client may use becomes one mws's config accepts, and says why it changed.
#[test]
fn hostile_names_become_names_the_config_accepts() {
    let long = "a".repeat(40);
    let names = [
        "_lead",
        "my__srv",
        long.as_str(),
        "---",
        "ünïcødé",
        "",
        "x.y",
        "x-y",
        "ok_",
        "__",
    ];
    let p = run(names
        .iter()
        .enumerate()
        .map(|(i, n)| found(Client::Codex, n, stdio(&format!("c{i}")), vec![]))
        .collect());
    let got: Vec<(&str, Option<&str>)> = p
        .imported
        .iter()
        .map(|i| (i.name.as_str(), i.renamed.as_deref()))
        .collect();
    let long_why = format!("`{long}` cannot be a server name: it is longer than 24 characters");
    assert_eq!(
        got,
        [
            (
                "lead",
                Some("`_lead` cannot be a server name: it starts with `_` or `-`")
            ),
            (
                "my_srv",
                Some(
                    "`my__srv` cannot be a server name: it holds `__`, which separates the \
                     server from the tool"
                )
            ),
            (&long[..21], Some(long_why.as_str())),
            (
                "server",
                Some(
                    "`---` cannot be a server name: it has no letter or digit a server name can keep"
                )
            ),
            (
                "n-c-d-",
                Some(
                    "`ünïcødé` cannot be a server name: it has characters a tool name cannot \
                     hold, starts with `_` or `-`"
                )
            ),
            (
                "server-2",
                Some(
                    "an empty name cannot be a server name; another registration has a \
                     different server named `server`"
                )
            ),
            (
                "x-y",
                Some("`x.y` cannot be a server name: it has characters a tool name cannot hold")
            ),
            (
                "x-y-2",
                Some("another registration has a different server named `x-y`")
            ),
            (
                "ok",
                Some("`ok_` cannot be a server name: it ends with `_`")
            ),
            (
                "server-3",
                Some(
                    "`__` cannot be a server name: it has no letter or digit a server name can \
                     keep; another registration has a different server named `server`"
                )
            ),
        ]
    );
    for name in p.servers.keys() {
        crate::config::servers::check_name(name).unwrap();
    }
}

/// A long name that collides keeps room for its suffix within the limit.
#[test]
fn a_shortened_name_that_collides_takes_a_suffix_within_the_limit() {
    let a = format!("{}a", "x".repeat(30));
    let b = format!("{}b", "x".repeat(30));
    let p = run(vec![
        found(Client::Codex, &a, stdio("1"), vec![]),
        found(Client::Codex, &b, stdio("2"), vec![]),
    ]);
    let names: Vec<_> = p.servers.keys().map(String::as_str).collect();
    assert_eq!(names, ["xxxxxxxxxxxxxxxxxxxxx", "xxxxxxxxxxxxxxxxxxxxx-2"]);
    for name in p.servers.keys() {
        crate::config::servers::check_name(name).unwrap();
    }
}

fn project(client: Client, name: &str, transport: Transport, flags: Vec<Flag>) -> Found {
    let mut f = found(client, name, transport, flags);
    f.origin.scope = Scope::Project;
    f.origin.project = Some("/w/proj".into());
    f
}

/// Trust follows the client: what a project's file holds moves only when its client would run
/// it, or when asked.
#[test]
fn project_servers_move_only_when_their_client_trusts_them_or_when_asked() {
    let unapproved = Flag::Unapproved("the folder's trust dialog was never accepted".into());
    let tracked = Flag::Tracked("/w".into());
    let findings = || Findings {
        found: vec![
            project(
                Client::ClaudeCode,
                "unapproved",
                stdio("a"),
                vec![unapproved.clone()],
            ),
            project(
                Client::ClaudeCode,
                "tracked",
                stdio("b"),
                vec![tracked.clone()],
            ),
            project(Client::Cursor, "cursor", stdio("c"), vec![]),
            project(Client::VsCode, "vscode", stdio("d"), vec![]),
            project(Client::GeminiCli, "gemini", stdio("e"), vec![]),
            project(Client::ClaudeCode, "approved", stdio("f"), vec![]),
        ],
        ..Findings::default()
    };
    let stays = |p: &Plan| -> Vec<(String, String)> {
        p.stays
            .iter()
            .map(|s| (s.found.name.clone(), s.reason.clone()))
            .collect()
    };
    let project_file = |client: &str| {
        format!(
            "in the {client} project file of /w/proj: project files move only with \
             `--include-project-files`"
        )
    };
    let p = plan(findings());
    assert_eq!(
        stays(&p),
        [
            (
                "unapproved".into(),
                "not approved in Claude Code for /w/proj: the folder's trust dialog was never \
                 accepted"
                    .into()
            ),
            (
                "tracked".into(),
                "tracked by git in /w: every teammate would lose it (`--edit-tracked` moves it \
                 anyway)"
                    .into()
            ),
            ("cursor".into(), project_file("cursor")),
            ("vscode".into(), project_file("vs-code")),
            ("gemini".into(), project_file("gemini-cli")),
        ]
    );
    assert_eq!(p.servers.keys().collect::<Vec<_>>(), ["approved"]);
    // Asked: tracked files and the editors' project files move; an unapproved server never does.
    let asked = Options {
        include_project_files: true,
        edit_tracked: true,
        ..Options::default()
    };
    let p = plan_with(findings(), &asked);
    let names: Vec<_> = p.stays.iter().map(|s| s.found.name.as_str()).collect();
    assert_eq!(names, ["unapproved"]);
    assert_eq!(p.servers.len(), 5);
}

/// The dry run knows what `--apply` will find: a client whose CLI is missing keeps its servers.
#[test]
fn a_missing_cli_keeps_its_clients_servers_in_the_plan() {
    let programs = Programs {
        claude: None,
        codex: Some("/usr/bin/codex".into()),
    };
    let options = Options {
        programs: Some(&programs),
        ..Options::default()
    };
    let p = plan_with(
        Findings {
            found: vec![
                found(Client::ClaudeCode, "cc", stdio("a"), vec![]),
                found(Client::Codex, "cx", stdio("b"), vec![]),
                found(Client::Cursor, "cu", stdio("c"), vec![]),
            ],
            ..Findings::default()
        },
        &options,
    );
    assert_eq!(p.servers.keys().collect::<Vec<_>>(), ["cu", "cx"]);
    assert_eq!(p.stays[0].found.name, "cc");
    assert_eq!(
        p.stays[0].reason,
        "`claude` is not on PATH, and mws changes claude-code's registrations only through it"
    );
}

/// A project's stdio server runs in its project, as its client starts it there.
#[test]
fn a_project_server_runs_in_its_project() {
    let t = |command: &str, args: &[&str], cwd: Option<&str>| Transport::Stdio {
        command: command.into(),
        args: args.iter().map(|a| a.to_string()).collect(),
        env: BTreeMap::new(),
        cwd: cwd.map(Into::into),
    };
    let cases = [
        (t("node", &["./server.js"], None), "node", Some("/w/proj")),
        (
            t("./server.js", &[], None),
            "/w/proj/server.js",
            Some("/w/proj"),
        ),
        (
            t("../bin/srv", &[], Some("sub")),
            "/w/proj/sub/../bin/srv",
            Some("/w/proj/sub"),
        ),
        (
            t("/abs/srv", &[], Some("/elsewhere")),
            "/abs/srv",
            Some("/elsewhere"),
        ),
    ];
    for (transport, command, cwd) in cases {
        let p = run(vec![project(
            Client::ClaudeCode,
            "s",
            transport.clone(),
            vec![],
        )]);
        let ServerConfig::Stdio {
            command: c, cwd: d, ..
        } = &p.servers["s"]
        else {
            panic!("{:?}", p.servers);
        };
        assert_eq!(
            (c.as_str(), d.as_deref()),
            (command, cwd.map(Path::new)),
            "{transport:?}"
        );
    }
    // Nothing relative: no `cwd`, so it stays the same server as a user-scope copy of it.
    let p = run(vec![project(Client::ClaudeCode, "s", stdio("uvx"), vec![])]);
    assert!(matches!(
        &p.servers["s"],
        ServerConfig::Stdio { cwd: None, .. }
    ));
    // A user-scope server keeps running where mws runs, as it ran where its client ran.
    let p = run(vec![found(Client::ClaudeCode, "u", stdio("./x"), vec![])]);
    assert!(
        matches!(&p.servers["u"], ServerConfig::Stdio { command, cwd: None, .. } if command == "./x")
    );
}

/// A variable syntax mws cannot expand keeps the server with its client, saying which.
#[test]
fn variables_mws_cannot_expand_keep_the_server_with_its_client() {
    let t = |arg: &str| Transport::Stdio {
        command: "node".into(),
        args: vec![arg.into()],
        env: BTreeMap::new(),
        cwd: None,
    };
    let p = run(vec![
        found(Client::ClaudeCode, "dflt", t("${PORT:-8080}"), vec![]),
        found(Client::ClaudeCode, "nested", t("${A:-${B}}"), vec![]),
        found(
            Client::Cursor,
            "ws",
            t("${workspaceFolder}"),
            vec![Flag::ClientVariable("workspaceFolder".into())],
        ),
    ]);
    let ServerConfig::Stdio { args, .. } = &p.servers["dflt"] else {
        panic!("{:?}", p.servers);
    };
    assert_eq!(
        args,
        &["${PORT:-8080}"],
        "carried verbatim, expanded at start"
    );
    let stays: Vec<_> = p
        .stays
        .iter()
        .map(|s| (s.found.name.as_str(), s.reason.as_str()))
        .collect();
    assert_eq!(
        stays,
        [
            (
                "nested",
                "`args[0]`: the default of ${A:-...} holds ${: ${NAME:-default} (a default \
                 cannot hold }) ends at the first }"
            ),
            (
                "ws",
                "uses the cursor variable `${workspaceFolder}`, which mws cannot express"
            ),
        ]
    );
}
