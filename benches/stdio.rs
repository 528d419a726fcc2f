//! The stdio proxy benchmark (prints a table; not a test): `tools/call` over stdio with a raw
//! client (one JSON line out, one line in; no SDK) to the demo upstream (`mws demo-upstream`, a
//! synchronous line server) three ways, in alternating rounds so machine load hits all alike:
//! `direct` (the client spawns the upstream), `floor` (a bare byte relay between them: this same
//! bench binary re-run as `relay`, copying lines both ways and parsing nothing), and `mws`
//! (`mws serve --stdio` in front of the upstream, every call logged to its database). Prints p50
//! and p99 at one client, the latency each relay adds over direct, and the CPU each relay process
//! alone spends per call (from /proc, so the upstream's own work is not counted).
//!
//! Run: `cargo bench --bench stdio`. `MWS_BENCH_CALLS` sets the calls per path (default 4,000).
//! With `MWS_BENCH_BASELINE=<path to another mws binary>` that build runs too, in the same rounds.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::lines::LineClient;
use common::{cpu_secs, ms, quantile};
use serde_json::json;

/// Calls per path when `MWS_BENCH_CALLS` is unset.
const DEFAULT_CALLS: usize = 4_000;
/// Alternations of the paths; more spreads load spikes more evenly.
const ROUNDS: usize = 10;
/// The argument that makes this binary the floor's relay.
const RELAY_ARG: &str = "--relay";
/// The tool every call asks for, with arguments its schema accepts.
const TOOL: &str = "calendar_list_calendars";

/// One path: a raw stdio client of its first process.
struct Path {
    client: LineClient,
    /// The process whose CPU is the relay's own (`None`: the direct path, nothing between).
    relay_pid: Option<u32>,
    _dir: Option<tempfile::TempDir>,
}

impl Path {
    fn spawn(name: &str, cmd: Command, relay: bool, dir: Option<tempfile::TempDir>) -> Path {
        let client = LineClient::spawn(name, cmd);
        let relay_pid = relay.then(|| client.pid());
        Path {
            client,
            relay_pid,
            _dir: dir,
        }
    }

    /// `n` sequential calls; their latencies and how many failed.
    fn run(&mut self, n: usize) -> (Vec<Duration>, usize) {
        let mut lat = Vec::with_capacity(n);
        let mut failed = 0;
        for _ in 0..n {
            let args = json!({"name": TOOL, "arguments": {}});
            let t0 = Instant::now();
            let r = self.client.round("tools/call", args);
            lat.push(t0.elapsed());
            if r["result"]["isError"] == true || r.get("result").is_none() {
                failed += 1;
            }
        }
        (lat, failed)
    }
}

/// The floor's relay: spawns the command after `--relay` and copies lines between it and this
/// process's stdio, one thread per direction, parsing nothing.
fn relay(cmd: &[String]) -> ! {
    let mut child = Command::new(&cmd[0])
        .args(&cmd[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("relay: start the upstream");
    let mut to_child = child.stdin.take().unwrap();
    let mut from_child = BufReader::new(child.stdout.take().unwrap());
    std::thread::spawn(move || {
        let mut out = std::io::stdout().lock();
        let mut buf = Vec::new();
        while from_child.read_until(b'\n', &mut buf).unwrap_or(0) > 0 {
            if out.write_all(&buf).and_then(|()| out.flush()).is_err() {
                break;
            }
            buf.clear();
        }
    });
    let mut input = std::io::stdin().lock();
    let mut buf = Vec::new();
    while input.read_until(b'\n', &mut buf).unwrap_or(0) > 0 {
        if to_child
            .write_all(&buf)
            .and_then(|()| to_child.flush())
            .is_err()
        {
            break;
        }
        buf.clear();
    }
    let _ = child.kill();
    std::process::exit(0)
}

fn upstream_cmd() -> Command {
    let mut c = Command::new(common::mws_bin());
    c.arg("demo-upstream");
    c
}

/// `bin serve --stdio` in front of the demo upstream, with its own state dir.
fn mws_path(name: &str, bin: &str) -> Path {
    let dir = tempfile::tempdir().unwrap();
    let config = json!({
        "upstream": {"command": common::mws_bin(), "args": ["demo-upstream"]},
        "stateDir": dir.path().join("state"),
        "transcripts": [],
        "pins": [TOOL],
    });
    let path = dir.path().join("config.json");
    std::fs::write(&path, config.to_string()).unwrap();
    let mut c = Command::new(bin);
    c.args(["--config", path.to_str().unwrap(), "serve", "--stdio"]);
    Path::spawn(name, c, true, Some(dir))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == RELAY_ARG) {
        relay(&args[i + 1..]);
    }
    let calls: usize = std::env::var("MWS_BENCH_CALLS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_CALLS);
    let baseline = std::env::var("MWS_BENCH_BASELINE")
        .ok()
        .filter(|s| !s.is_empty());
    let mut paths = vec![Path::spawn("direct", upstream_cmd(), false, None)];
    let mut floor = Command::new(std::env::current_exe().unwrap());
    floor.args([RELAY_ARG, common::mws_bin(), "demo-upstream"]);
    paths.push(Path::spawn("floor", floor, true, None));
    paths.push(mws_path("mws", common::mws_bin()));
    if let Some(bin) = &baseline {
        paths.push(mws_path("baseline", bin));
    }
    // Warm-up: allocators, the call log's writer, the upstream's first answers.
    for p in &mut paths {
        let (_, failed) = p.run(200);
        assert_eq!(failed, 0, "{}: warm-up calls failed", p.client.name);
    }
    let cpu0: Vec<f64> = paths
        .iter()
        .map(|p| p.relay_pid.map_or(f64::NAN, cpu_secs))
        .collect();
    let per_round = calls / ROUNDS;
    let mut lat: Vec<Vec<Duration>> = vec![Vec::new(); paths.len()];
    let mut failed = vec![0; paths.len()];
    for round in 0..ROUNDS {
        for k in 0..paths.len() {
            let i = (round + k) % paths.len();
            let (l, f) = paths[i].run(per_round);
            lat[i].extend(l);
            failed[i] += f;
        }
    }
    println!(
        "\nstdio benchmark: {} sequential tools/call per path, raw client, demo upstream, {ROUNDS} alternating rounds",
        per_round * ROUNDS
    );
    if let Some(bin) = &baseline {
        println!("baseline: {bin}");
    }
    println!(
        "{:<10} {:>11} {:>11} {:>12} {:>12} {:>14} {:>7}",
        "path", "p50", "p99", "added p50", "added p99", "CPU/call (µs)", "failed"
    );
    for l in &mut lat {
        l.sort();
    }
    let base = |q| quantile(&lat[0], q).as_secs_f64() * 1e3;
    for (i, p) in paths.iter().enumerate() {
        let q = |q| quantile(&lat[i], q).as_secs_f64() * 1e3;
        let cpu = p.relay_pid.map_or(f64::NAN, |pid| {
            (cpu_secs(pid) - cpu0[i]) * 1e6 / lat[i].len() as f64
        });
        println!(
            "{:<10} {:>11} {:>11} {:>+11.3}ms {:>+11.3}ms {:>14.1} {:>7}",
            p.client.name,
            ms(quantile(&lat[i], 0.5)),
            ms(quantile(&lat[i], 0.99)),
            q(0.5) - base(0.5),
            q(0.99) - base(0.99),
            cpu,
            failed[i]
        );
    }
    drop(paths);
}
