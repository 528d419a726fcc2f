//! Header value decoding (the `=?base64?...?=` sentinel) on arbitrary strings: never panics, the
//! two decoders (upstream side, downstream side) agree, and encoding then decoding gives back the
//! value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mws::mcp::envelope::{decode_header_value, encode_header_value};
use mws::server::modern::decode_header;

fuzz_target!(|s: &str| {
    let a = decode_header_value(s);
    let b = decode_header(s).ok();
    assert_eq!(a, b, "the two decoders disagree on {s:?}");
    let encoded = encode_header_value(s);
    assert!(
        encoded.bytes().all(|c| (0x20..0x7f).contains(&c)),
        "{encoded:?}"
    );
    assert_eq!(
        decode_header_value(&encoded).as_deref(),
        Some(s),
        "round trip of {s:?}"
    );
});
