//! The SSE decoder fed arbitrary bytes cut at arbitrary places: never panics, and the events do
//! not depend on where the stream was cut.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mws::mcp::sse::Decoder;

fuzz_target!(|input: (Vec<u8>, Vec<u8>)| {
    let (bytes, cuts) = input;
    let whole = Decoder::new().feed(&bytes);
    let mut dec = Decoder::new();
    let mut chunked = Vec::new();
    let mut rest = &bytes[..];
    for c in cuts {
        if rest.is_empty() {
            break;
        }
        let n = (c as usize % 7).min(rest.len());
        chunked.extend(dec.feed(&rest[..n]));
        rest = &rest[n..];
    }
    chunked.extend(dec.feed(rest));
    assert_eq!(whole, chunked);
});
