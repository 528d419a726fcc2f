//! Memory of `mws serve` against a hostile upstream whose `tools/list` never ends (every page
//! has a new `nextCursor`): the listing caps (`MAX_LISTING_TOOLS`, `MAX_LISTING_BYTES`) stop it,
//! and this prints the proxy's peak RSS once it has, for pages of many small tools and of few
//! large ones. The target is a peak under 100 MB. Run: `cargo bench --bench endless_cursor`.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

/// How long one case may take to reach a cap; raising it only matters on a very slow machine.
const CAP_WITHIN: Duration = Duration::from_secs(120);

/// (label, tools per page, description bytes per tool).
const CASES: &[(&str, usize, usize)] = &[
    ("100 tools of 200 B a page (the tool cap)", 100, 200),
    ("50 tools of 20 KB a page (the byte cap)", 50, 20_000),
    (
        "10 tools of 3 MB a page (30 MB pages, near the one-message cap)",
        10,
        3_000_000,
    ),
];

fn main() {
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/it/support/hostile_stdio.py"
    );
    println!("endless nextCursor: peak RSS of mws serve once the listing cap stopped it");
    for (label, tools, desc) in CASES {
        let dir = tempfile::tempdir().unwrap();
        let config = json!({
            "upstream": {"command": "python3", "args": [script, "endless"],
                "env": {"ENDLESS_TOOLS": tools.to_string(), "ENDLESS_DESC": desc.to_string()}},
            "transcripts": [],
            "timeouts": {"listMs": 60000, "firstStartMs": 60000},
        });
        let path = dir.path().join("config.json");
        std::fs::write(&path, config.to_string()).unwrap();
        let mut child = common::Child(
            Command::new(common::mws_bin())
                .args(["--config", path.to_str().unwrap(), "serve", "--port"])
                .arg(common::free_port().to_string())
                .arg("--state-dir")
                .arg(dir.path().join("state"))
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start mws serve"),
        );
        let start = Instant::now();
        let stderr = BufReader::new(child.0.stderr.take().unwrap());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                if line.contains("the cap on one server") {
                    let _ = tx.send(());
                }
            }
        });
        let stopped = rx.recv_timeout(CAP_WITHIN).is_ok();
        let took = start.elapsed();
        let (rss, peak) = common::rss_mb(child.0.id());
        if stopped {
            println!(
                "  {label}: stopped after {:.1} s; RSS {rss:.1} MB, peak {peak:.1} MB",
                took.as_secs_f64()
            );
        } else {
            println!("  {label}: NOT stopped within {CAP_WITHIN:?}; peak {peak:.1} MB");
        }
    }
}
