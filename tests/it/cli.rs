//! The command line as a user meets it: help, unbuilt commands, exit codes.

use std::process::Command;

pub fn mws() -> Command {
    Command::new(env!("CARGO_BIN_EXE_mws"))
}

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
