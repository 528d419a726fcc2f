//! The command line as a user meets it: help, unbuilt commands, exit codes.

pub use crate::support::run::mws;

#[test]
fn help_lists_every_command() {
    let out = mws().arg("--help").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for c in [
        "init", "serve", "ingest", "promote", "report", "search", "doctor",
    ] {
        assert!(text.contains(c), "--help lacks {c}:\n{text}");
    }
    assert!(!text.contains("demo-upstream"), "hidden command shown");
}

#[test]
fn every_command_shows_examples() {
    for c in [
        "init",
        "serve",
        "ingest",
        "promote",
        "report",
        "search",
        "doctor",
        "setup",
        "completions",
    ] {
        let out = mws().args([c, "--help"]).output().unwrap();
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains(&format!("Examples:\n  mws {c}")),
            "{c} --help:\n{text}"
        );
    }
}

#[test]
fn completions_name_the_commands_in_each_shell() {
    for (shell, marker) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef mws"),
        ("fish", "complete -c mws"),
    ] {
        let out = mws().args(["completions", shell]).output().unwrap();
        assert!(out.status.success(), "{shell}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.contains(marker), "{shell}: no {marker:?}");
        for c in ["promote", "report", "completions"] {
            assert!(text.contains(c), "{shell} script lacks {c}");
        }
    }
    let out = mws().args(["completions", "tcsh"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("invalid value 'tcsh'") && err.contains("bash"),
        "{err}"
    );
}
