//! The Codex rollout adapter on an arbitrary file name stem and arbitrary bytes (lines split at
//! `\n`): never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mws::ingest::codex::Codex;
use mws::ingest::names::Names;

fuzz_target!(|input: (&str, &[u8])| {
    let (stem, bytes) = input;
    let names = Names::new(&["toolbox"], &["get-sum"]);
    let mut adapter = Codex::new(&names, stem, "2026-11-29T00:00:00Z");
    let _ = mws::ingest::parse_all(&mut adapter, bytes);
});
