//! Writes the o200k_base vocabulary as two compact files for `src/results/count.rs`: every
//! token's bytes back to back in rank order (`o200k.bytes`), and where each ends as little-endian
//! u32s (`o200k.ends`). Taken from tiktoken-rs's own copy, so the counts are tiktoken's. Must not
//! touch anything outside OUT_DIR.
//!
//! On Linux with glibc it also links the `mws` binary with packed relative relocations (RELR):
//! the position-independent binary's table of addresses to fix at start shrinks from about
//! 870 KB, every page of it read at each start and resident for the process's life, to a few KB.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        // GNU ld before 2.38 ignores the option with a warning; lld has it since 15.
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
    let bpe = tiktoken_rs::o200k_base().expect("tiktoken-rs builds o200k_base");
    let mut bytes = Vec::new();
    let mut ends = Vec::new();
    let mut rank = 0;
    while let Ok(token) = bpe.decode_bytes(&[rank]) {
        bytes.extend_from_slice(&token);
        let end = u32::try_from(bytes.len()).expect("the vocabulary is under 4 GB");
        ends.extend_from_slice(&end.to_le_bytes());
        rank += 1;
    }
    assert!(
        rank > 199_000,
        "o200k_base has about 200,000 tokens, found {rank}"
    );
    let out = std::path::PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("o200k.bytes"), bytes).expect("writing o200k.bytes to OUT_DIR");
    std::fs::write(out.join("o200k.ends"), ends).expect("writing o200k.ends to OUT_DIR");
}
