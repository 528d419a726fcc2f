//! Tests of the report's number, size, share and time formats.

use super::*;

#[test]
fn number_formats() {
    for (n, want) in [
        (0, "0"),
        (999, "999"),
        (1000, "1,000"),
        (1234567, "1,234,567"),
    ] {
        assert_eq!(num(n), want);
    }
    for (n, want) in [
        (900, "900 B"),
        (1024, "1.0 KB"),
        (529_113, "516.7 KB"),
        (3 << 20, "3.0 MB"),
    ] {
        assert_eq!(bytes(n), want);
    }
    assert_eq!(pct(0.8734), "87.3%");
    let now = clock::parse("2026-11-29T12:00:00Z").unwrap();
    for (ts, want) in [
        (None, "never"),
        (Some("2026-11-29T11:59:30.000Z"), "just now"),
        (Some("2026-11-29T11:15:00.000Z"), "45m ago"),
        (Some("2026-11-29T02:00:00.000Z"), "10h ago"),
        (Some("2026-11-26T12:00:00.000Z"), "3d ago"),
        (Some("2026-11-30T12:00:00.000Z"), "2026-11-30 12:00"),
    ] {
        assert_eq!(ago(ts, now), want, "{ts:?}");
    }
}
