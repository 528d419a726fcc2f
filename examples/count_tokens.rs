//! Prints the size `mws report` gives a `tools/list` result holding the tools of each file (a JSON
//! array of tools): `<tokens>\t<bytes>\t<path>`, o200k tokens of the compact wire text. Used by
//! `scripts/bench-peers.sh` for the "tokens of what each lists" column.
//! Run: `cargo run --release --example count_tokens -- FILE...`.

use mws::report::tokens::{Tokenizer, TokenizerKind, list_size};

fn main() -> anyhow::Result<()> {
    let tok = Tokenizer::load(TokenizerKind::O200k);
    for path in std::env::args().skip(1) {
        let tools: Vec<serde_json::Value> = serde_json::from_str(&std::fs::read_to_string(&path)?)?;
        let size = list_size(&tok, &tools);
        println!("{}\t{}\t{path}", size.tokens, size.bytes);
    }
    Ok(())
}
