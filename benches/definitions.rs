//! What holding changed tool definitions costs (docs/tool-approval.md), in-process, 1,000 tools of
//! the gateway-shaped catalog: (1) each upstream listing, where `approvals::review` hashes every
//! definition and reads `definitions.json`, beside the `Catalog::checked` every listing does
//! anyway; (2) a client's `tools/list`, which reads only the catalog already reviewed: the listing
//! chosen from a catalog holding no tool and from one holding ten, rounds alternating. Prints a
//! table; not a test. Run: `cargo bench --bench definitions`.

mod common;

use std::time::{Duration, Instant};

use mws::catalog::Catalog;
use mws::catalog::definitions::{HeldTool, HeldWhy};
use mws::config::{Config, Listing};
use mws::upstream::approvals;

const TOOLS: usize = 1_000;
/// Timed repetitions per row and round; more steadies the medians.
const REPS: usize = 200;
const ROUNDS: usize = 5;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time(reps: usize, mut f: impl FnMut()) -> Vec<Duration> {
    (0..reps)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect()
}

fn us(d: Duration) -> String {
    format!("{:.1} µs", d.as_secs_f64() * 1e6)
}

fn main() {
    let tools = common::catalog(TOOLS);
    let dir = tempfile::tempdir().unwrap();
    let now = "2026-12-03T00:00:00.000Z";
    // The first listing records every definition; later ones find them all approved.
    approvals::review(dir.path(), tools.clone(), false, now);

    let config = Config {
        listing: Listing::All,
        ..Config::default()
    };
    let plain = Catalog::checked(tools.clone());
    let held: Vec<HeldTool> = (0..10)
        .map(|i| HeldTool {
            name: format!("backend{i}_held"),
            why: HeldWhy::Changed,
            fields: vec!["description"],
        })
        .collect();
    let holding = Catalog::checked(tools.clone()).with_held(held);

    let (mut checked, mut reviewed, mut list_plain, mut list_holding) =
        (vec![], vec![], vec![], vec![]);
    for _ in 0..ROUNDS {
        checked.extend(time(REPS / 10, || {
            std::hint::black_box(Catalog::checked(tools.clone()));
        }));
        reviewed.extend(time(REPS / 10, || {
            let r = approvals::review(dir.path(), tools.clone(), false, now);
            std::hint::black_box(Catalog::checked(r.serve));
        }));
        list_plain.extend(time(REPS, || {
            std::hint::black_box(mws::server::tools_list::choose(&plain, &[], &config));
        }));
        list_holding.extend(time(REPS, || {
            std::hint::black_box(mws::server::tools_list::choose(&holding, &[], &config));
        }));
    }
    let (c, r) = (median(checked), median(reviewed));
    let (lp, lh) = (median(list_plain), median(list_holding));
    println!(
        "tool definitions held for approval, {TOOLS} tools, medians of {ROUNDS} alternating rounds"
    );
    println!("| path | without | with definitions checked | added |");
    println!("|---|--:|--:|--:|");
    println!(
        "| one upstream listing (checked, then reviewed) | {} | {} | {} |",
        us(c),
        us(r),
        us(r.saturating_sub(c))
    );
    println!(
        "| one client tools/list (listing chosen; 0 vs 10 tools held) | {} | {} | {} |",
        us(lp),
        us(lh),
        us(lh.saturating_sub(lp))
    );
}
