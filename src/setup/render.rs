//! The plan for people (tables) and machines (JSON), with every secret masked: header and env
//! values, URL query values and credentials, and arguments that follow a secret-looking flag are
//! printed as `***`. Pure; must never print the unmasked `servers` map.

use std::collections::BTreeMap;
use std::path::Path;

use comfy_table::presets::UTF8_FULL_CONDENSED;
use comfy_table::{ContentArrangement, Table};
use serde_json::{Value, json};

use super::plan::{Plan, ServerConfig};
use super::{Found, Origin, Transport};

/// What is printed instead of a secret.
pub const MASK: &str = "***";

/// Words that make a flag's value (`--api-key V`, `--token=V`, `TOKEN=V`) count as a secret.
const SECRET_WORDS: [&str; 7] = [
    "token", "key", "secret", "password", "auth", "header", "bearer",
];

/// What the dry run says about writing.
pub const APPLY_NOTE: &str = "dry run: nothing was written; `mws setup import --apply` backs up \
                              every file it changes, writes `servers` into mws's config and \
                              registers mws in each client instead (`mws setup undo` puts the \
                              files back)";

/// The plan as one JSON object, masked.
pub fn json(plan: &Plan) -> String {
    let servers: BTreeMap<&String, ServerConfig> = plan
        .servers
        .iter()
        .map(|(k, v)| (k, mask_config(v)))
        .collect();
    let found: Vec<Found> = plan.found.iter().map(mask_found).collect();
    let stays: Vec<Value> = plan
        .stays
        .iter()
        .map(|s| {
            let mut v = serde_json::to_value(mask_found(&s.found)).expect("serializes");
            v["reason"] = json!(s.reason);
            v
        })
        .collect();
    let v = json!({
        "dryRun": true,
        "note": APPLY_NOTE,
        "servers": servers,
        "imported": plan.imported,
        "stays": stays,
        "skipped": plan.skipped,
        "errors": plan.errors,
        "found": found,
        "files": plan.files,
    });
    let mut s = serde_json::to_string_pretty(&v).expect("the plan always serializes");
    s.push('\n');
    s
}

/// The plan as tables: behind mws, staying, skipped entries. Unreadable files are talk (stderr),
/// printed by the command.
pub fn text(plan: &Plan, home: &Path) -> String {
    let mut out = String::new();
    let files: std::collections::BTreeSet<&Path> =
        plan.found.iter().map(|f| f.origin.file.as_path()).collect();
    out += &format!(
        "{} server registration(s) found in {} file(s).\n\n",
        plan.found.len(),
        files.len()
    );
    if plan.imported.is_empty() {
        out += "Nothing to put behind mws";
        if plan.found.is_empty() {
            out += ": no server registrations in the configs of Claude Code, Codex, Claude \
                    Desktop, Cursor, VS Code or Gemini CLI (looked under HOME and from the \
                    working directory upward)";
        }
        out += ".\n";
    } else {
        out += "Behind mws (the `servers` of mws's config):\n";
        let mut t = table(&["server", "transport", "target", "from"]);
        for i in &plan.imported {
            let (kind, target) = describe(&plan.servers[&i.name]);
            let mut from: Vec<String> = i
                .sources
                .iter()
                .map(|s| {
                    let mut name = s.name.clone();
                    for f in &s.flags {
                        name += &format!("; {f}");
                    }
                    format!("{} ({name})", where_(&s.origin, home))
                })
                .collect();
            let projects: std::collections::BTreeSet<&Path> = i
                .sources
                .iter()
                .filter_map(|s| s.origin.project.as_deref())
                .collect();
            for p in projects {
                from.push(format!(
                    "from the project {}: behind mws it is available in every project",
                    p.display()
                ));
            }
            if let Some(why) = &i.renamed {
                from.push(format!("renamed: {why}"));
            }
            if i.needs_login {
                from.push(format!("signs in with OAuth: run `mws login {}`", i.name));
            }
            let p = &i.policy;
            if !p.deny.is_empty() {
                from.push(format!(
                    "tools switched off → `policy.deny`: {}",
                    p.deny.join(", ")
                ));
            }
            if let Some(only) = &p.only {
                from.push(format!(
                    "only these tools used → `policy.allow`: {} (a new allow list also gets \
                     `<name>__*` for each other server)",
                    only.join(", ")
                ));
            }
            for n in &p.not_carried {
                from.push(format!("not carried over: {n}"));
            }
            t.add_row(vec![i.name.clone(), kind.into(), target, from.join("\n")]);
        }
        out += &format!("{t}\n");
        let login: Vec<&str> = plan
            .imported
            .iter()
            .filter(|i| i.needs_login)
            .map(|i| i.name.as_str())
            .collect();
        if !login.is_empty() {
            out += &format!(
                "These sign in with OAuth; the clients' logins are not copied: after --apply, run \
                 `mws login <name>` for each of {}.\n",
                login.join(", ")
            );
        }
    }
    if !plan.stays.is_empty() {
        out += "\nStays with its client:\n";
        let mut t = table(&["server", "where", "why"]);
        for s in &plan.stays {
            let f = &s.found;
            t.add_row(vec![
                f.name.clone(),
                where_(&f.origin, home),
                s.reason.clone(),
            ]);
        }
        out += &format!("{t}\n");
    }
    if !plan.skipped.is_empty() {
        out += "\nSkipped entries (not understood):\n";
        let mut t = table(&["entry", "where", "why"]);
        for s in &plan.skipped {
            t.add_row(vec![
                s.name.clone(),
                where_(&s.origin, home),
                s.reason.clone(),
            ]);
        }
        out += &format!("{t}\n");
    }
    out += &format!("\n{APPLY_NOTE}.\n");
    out
}

fn table(header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(UTF8_FULL_CONDENSED)
        .set_content_arrangement(ContentArrangement::Dynamic)
        .set_header(header.to_vec());
    t
}

/// "claude-code user ~/.claude.json", with the project for local scope.
fn where_(o: &Origin, home: &Path) -> String {
    let tilde = |p: &Path| match p.strip_prefix(home) {
        Ok(rest) => format!("~/{}", rest.display()),
        Err(_) => p.display().to_string(),
    };
    let mut s = format!(
        "{} {} {}",
        o.client.as_str(),
        o.scope.as_str(),
        tilde(&o.file)
    );
    if let (super::Scope::Local, Some(p)) = (o.scope, &o.project) {
        s += &format!(" [{}]", tilde(p));
    }
    s
}

/// ("stdio", "cmd args; env K=***") or ("http", "url; headers K: ***"), masked.
fn describe(c: &ServerConfig) -> (&'static str, String) {
    match mask_config(c) {
        ServerConfig::Stdio {
            command, args, env, ..
        } => {
            let mut s = std::iter::once(command)
                .chain(args)
                .collect::<Vec<_>>()
                .join(" ");
            if !env.is_empty() {
                let keys: Vec<_> = env.keys().map(|k| format!("{k}={MASK}")).collect();
                s += &format!("; env {}", keys.join(" "));
            }
            ("stdio", s)
        }
        ServerConfig::Http { url, headers } => {
            let mut s = url;
            if !headers.is_empty() {
                let keys: Vec<_> = headers.keys().map(|k| format!("{k}: {MASK}")).collect();
                s += &format!("; headers {}", keys.join(", "));
            }
            ("http", s)
        }
    }
}

fn mask_found(f: &Found) -> Found {
    let mut f = f.clone();
    f.transport = match f.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => Transport::Stdio {
            command,
            args: mask_args(&args),
            env: mask_values(&env),
            cwd,
        },
        Transport::Http { url, headers } => Transport::Http {
            url: mask_url(&url),
            headers: mask_values(&headers),
        },
        Transport::Sse { url, headers } => Transport::Sse {
            url: mask_url(&url),
            headers: mask_values(&headers),
        },
        Transport::Ws { url, headers } => Transport::Ws {
            url: mask_url(&url),
            headers: mask_values(&headers),
        },
    };
    f
}

/// A `servers` entry with its secrets masked.
pub fn mask_config(c: &ServerConfig) -> ServerConfig {
    match c {
        ServerConfig::Stdio {
            command,
            args,
            env,
            cwd,
        } => ServerConfig::Stdio {
            command: command.clone(),
            args: mask_args(args),
            env: mask_values(env),
            cwd: cwd.clone(),
        },
        ServerConfig::Http { url, headers } => ServerConfig::Http {
            url: mask_url(url),
            headers: mask_values(headers),
        },
    }
}

fn mask_values(m: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    m.keys().map(|k| (k.clone(), MASK.to_string())).collect()
}

fn secret_word(s: &str) -> bool {
    let s = s.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| s.contains(w))
}

/// `--token V` → `--token ***`, `--api-key=V` / `API_KEY=V` → `--api-key=***`.
fn mask_args(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut after_flag = false;
    for a in args {
        if after_flag && !a.starts_with('-') {
            out.push(MASK.to_string());
            after_flag = false;
            continue;
        }
        after_flag = a.starts_with('-') && !a.contains('=') && secret_word(a);
        match a.split_once('=') {
            Some((k, _)) if secret_word(k) => out.push(format!("{k}={MASK}")),
            _ => out.push(a.clone()),
        }
    }
    out
}

/// Query values and a password in the URL are masked; the rest is kept.
fn mask_url(url: &str) -> String {
    let Ok(mut u) = reqwest::Url::parse(url) else {
        return url.to_string();
    };
    if u.password().is_some() {
        let _ = u.set_password(Some(MASK));
    }
    if u.query().is_some() {
        let pairs: Vec<String> = u
            .query_pairs()
            .map(|(k, _)| format!("{k}={MASK}"))
            .collect();
        u.set_query(Some(&pairs.join("&")));
    }
    // Keep the user's own spelling when nothing was masked (Url adds a trailing `/` to bare hosts).
    if u.password().is_none() && u.query().is_none() {
        return url.to_string();
    }
    u.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_that_carry_secrets_are_masked() {
        let args: Vec<String> = [
            "-y",
            "pkg",
            "--api-key",
            "s1",
            "--token=s2",
            "KEY=s3",
            "--port",
            "80",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            mask_args(&args),
            [
                "-y",
                "pkg",
                "--api-key",
                "***",
                "--token=***",
                "KEY=***",
                "--port",
                "80"
            ]
        );
    }

    /// Every fixture, read as if installed under HOME `/h` with the project `/h/proj`.
    fn fixtures_plan() -> Plan {
        use crate::setup::sources::{Kind, read};
        use crate::setup::{Findings, Scope, plan};
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/client-configs");
        let files = [
            (Kind::ClaudeUser, "claude.json", "/h/.claude.json"),
            (Kind::ClaudeMcpJson, "mcp.json", "/h/proj/.mcp.json"),
            (
                Kind::Codex(Scope::User),
                "codex.toml",
                "/h/.codex/config.toml",
            ),
            (
                Kind::ClaudeDesktop,
                "claude_desktop_config.json",
                "/h/.config/Claude/c.json",
            ),
            (
                Kind::Cursor(Scope::User),
                "cursor-mcp.json",
                "/h/.cursor/mcp.json",
            ),
            (
                Kind::VsCode(Scope::Project),
                "vscode-mcp.json",
                "/h/proj/.vscode/mcp.json",
            ),
            (
                Kind::Gemini(Scope::User),
                "gemini-settings.json",
                "/h/.gemini/settings.json",
            ),
        ];
        let mut out = Findings::default();
        for (kind, fixture, path) in files {
            let text = std::fs::read_to_string(dir.join(fixture)).unwrap();
            read(kind, &text, Path::new(path), &mut out);
        }
        plan::plan(out)
    }

    #[test]
    fn plan_of_every_fixture() {
        let p = fixtures_plan();
        insta::assert_snapshot!("setup_import_text", text(&p, Path::new("/h")));
        insta::assert_snapshot!("setup_import_json", json(&p));
        for secret in [
            "\"t\"",
            "Bearer u",
            "Bearer abc",
            "\"k1\"",
            "xxx",
            "Bearer your-api-token",
        ] {
            assert!(!json(&p).contains(secret), "{secret} printed");
            assert!(
                !text(&p, Path::new("/h")).contains(secret),
                "{secret} printed"
            );
        }
    }

    #[test]
    fn url_secrets_are_masked() {
        assert_eq!(
            mask_url("https://u:pw@x.com/mcp?key=s&a=b"),
            "https://u:***@x.com/mcp?key=***&a=***"
        );
        assert_eq!(mask_url("https://x.com"), "https://x.com");
    }
}
