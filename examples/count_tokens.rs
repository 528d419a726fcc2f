//! Prints the o200k token count of each file given (`<tokens>\t<path>`), for
//! `scripts/bench-peers.sh`'s "tokens of what each lists" column.
//! Run: `cargo run --release --example count_tokens -- FILE...`.

fn main() -> anyhow::Result<()> {
    let bpe = tiktoken_rs::o200k_base()?;
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path)?;
        println!("{}\t{path}", bpe.encode_ordinary(&text).len());
    }
    Ok(())
}
