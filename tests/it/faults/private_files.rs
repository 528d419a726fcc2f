//! The files mws writes in its state dir, attacked as another user of a shared directory would:
//! links planted at the temp names the writers once used are not followed, and a state dir
//! others can write to is refused with the command that fixes it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use super::live_db::{listed, promote_pinning};
use crate::support::serve::start_in;

/// Plants `<state>/<name>.tmp -> <victim>` for each name; returns the victim.
fn plant(state: &Path, names: &[&str]) -> std::path::PathBuf {
    let victim = state.parent().unwrap().join("victim");
    std::fs::write(&victim, "precious\n").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o644)).unwrap();
    for n in names {
        std::os::unix::fs::symlink(&victim, state.join(format!("{n}.tmp"))).unwrap();
    }
    victim
}

fn assert_untouched(victim: &Path) {
    assert_eq!(std::fs::read_to_string(victim).unwrap(), "precious\n");
    let mode = std::fs::metadata(victim).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o644);
}

fn assert_private_file(path: &Path) {
    let m = std::fs::symlink_metadata(path).unwrap();
    assert!(m.is_file(), "{} is not a plain file", path.display());
    assert_eq!(m.permissions().mode() & 0o777, 0o600, "{}", path.display());
}

/// Before the fix `mws serve` opened `catalog.json.tmp` and `upstream.json.tmp` with
/// create+truncate, following the links: the victim was overwritten with the catalog; `mws
/// promote` did the same through `working-set.json.tmp`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_at_temp_names_are_not_followed_by_serve_or_promote() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    let victim = plant(
        &state,
        &["catalog.json", "upstream.json", "working-set.json"],
    );
    let mut served = start_in(dir, &json!({}), &["--demo"]);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !state.join("catalog.json").exists() || listed(&served).await.len() <= 2 {
        assert!(Instant::now() < deadline, "demo catalog never arrived");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    served.stop();
    assert_untouched(&victim);
    assert_private_file(&state.join("catalog.json"));

    promote_pinning(&state, "drive_read_file");
    assert_untouched(&victim);
    assert_private_file(&state.join("working-set.json"));
    let ws = std::fs::read_to_string(state.join("working-set.json")).unwrap();
    assert!(ws.contains("drive_read_file"), "{ws}");
}

/// A state dir with mode 0777: `mws serve` and `mws promote` refuse it and say how to fix it.
#[test]
fn a_state_dir_others_can_write_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o777)).unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(&config, json!({"stateDir": state}).to_string()).unwrap();
    let s = state.display();
    let want = format!(
        "state dir {s} is writable by other users (mode 777): they could replace the files mws \
         keeps there; run `chmod go-w {s}` (or `chmod 700 {s}`)"
    );
    let state_arg = state.to_str().unwrap();
    for args in [
        &["serve", "--demo", "--port", "0", "--state-dir", state_arg][..],
        &["promote", "--no-ingest"][..],
    ] {
        // Bounded: a serve that accepted the dir would otherwise run until killed.
        let out = std::process::Command::new("timeout")
            .arg("30")
            .arg(env!("CARGO_BIN_EXE_mws"))
            .arg("--config")
            .arg(&config)
            .args(args)
            .env("HOME", dir.path())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} accepted it: {err}");
        assert!(err.contains(&want), "{args:?}: {err}");
    }
    assert!(!state.join("state.db").exists());
}
