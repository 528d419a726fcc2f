//! Tests of what the plan lets leave a client: names the config accepts, trust of project files,
//! missing CLIs, the directory a project server runs in, variables mws cannot expand.

use std::collections::BTreeMap;
use std::path::Path;

use super::*;

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
