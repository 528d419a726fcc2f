//! Compressed Codex rollouts (`rollout-….jsonl.zst`): read like plain ones, the plain twin wins
//! while both exist, the plain → compressed switch adds no rows, and a corrupt one is one error.

use std::path::{Path, PathBuf};

use super::env::Env;

/// The Codex rollouts of `Env::real()`.
fn rollouts(env: &Env) -> Vec<PathBuf> {
    let day = env.path("codex/sessions/2026/11/29");
    let mut files: Vec<PathBuf> = std::fs::read_dir(day)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// Writes `plain` compressed beside it as `….jsonl.zst`, the way Codex stores it.
fn compress(plain: &Path) -> PathBuf {
    let zst = PathBuf::from(format!("{}.zst", plain.display()));
    let bytes = zstd::encode_all(std::fs::read(plain).unwrap().as_slice(), 3).unwrap();
    std::fs::write(&zst, bytes).unwrap();
    zst
}

fn codex_calls(env: &Env) -> Vec<(String, String, String, bool, Option<String>)> {
    env.calls()
        .into_iter()
        .filter(|c| c.0.starts_with("codex:"))
        .map(|(k, s, t, ok, kind, _)| (k, s, t, ok, kind))
        .collect()
}

#[test]
fn compressed_rollouts_give_the_same_calls_as_plain_ones() {
    let plain = Env::real();
    plain.ingest();
    let want = codex_calls(&plain);
    assert_eq!(want.len(), 2, "{want:?}");

    let env = Env::real();
    for f in rollouts(&env) {
        compress(&f);
        std::fs::remove_file(f).unwrap();
    }
    let s = env.ingest();
    assert!(s.errors.is_empty() && s.skipped_lines == 0, "{s:?}");
    assert_eq!(codex_calls(&env), want);
    // Unchanged on the next run: nothing is decompressed again.
    let again = env.ingest();
    assert_eq!((again.files_read, again.new_calls), (0, 0), "{again:?}");
}

#[test]
fn the_plain_twin_wins_and_the_switch_to_compressed_adds_no_rows() {
    let env = Env::real();
    let files = rollouts(&env);
    let zst: Vec<PathBuf> = files.iter().map(|f| compress(f)).collect();
    let first = env.ingest();
    // Both representations exist: only the plain files count (and are read).
    assert_eq!(first.files, 5, "{first:?}");
    let before = env.calls();
    for f in &files {
        std::fs::remove_file(f).unwrap();
    }
    let s = env.ingest();
    assert_eq!(
        (s.files_read, s.new_calls, s.duplicates),
        (2, 0, 2),
        "{s:?}"
    );
    assert!(s.errors.is_empty(), "{s:?}");
    assert_eq!(env.calls(), before);
    assert!(zst.iter().all(|z| z.exists()));
}

#[test]
fn a_corrupt_compressed_rollout_is_one_error_and_the_rest_is_read() {
    let env = Env::real();
    let files = rollouts(&env);
    let zst = compress(&files[0]);
    std::fs::remove_file(&files[0]).unwrap();
    let bytes = std::fs::read(&zst).unwrap();
    // Cut in the middle: the frame never ends.
    std::fs::write(&zst, &bytes[..bytes.len() / 2]).unwrap();
    let s = env.ingest();
    assert_eq!(s.errors.len(), 1, "{s:?}");
    assert_eq!(s.errors[0].0, zst.display().to_string());
    assert_eq!(s.errors[0].1, "cannot decompress (zstd): incomplete frame");
    // The other rollout and both Claude Code files were read.
    assert_eq!(s.new_calls, 3, "{s:?}");
    // Nothing was recorded for the corrupt file: the next run tries it again.
    let again = env.ingest();
    assert_eq!(again.errors.len(), 1, "{again:?}");
}
