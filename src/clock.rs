//! The only reader of the wall clock. Everything else takes `now` as a parameter so that it can be
//! tested with fixed times.

use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The current UTC time. The one call allowed past `clippy.toml`'s disallowed-methods.
#[allow(clippy::disallowed_methods)]
pub fn now() -> OffsetDateTime {
    OffsetDateTime::now_utc()
}

/// The local UTC offset now (from the C library's `localtime_r`, which reads `TZ` and
/// /etc/localtime); UTC when it cannot be told.
pub fn local_offset() -> time::UtcOffset {
    let t = now().unix_timestamp() as libc::time_t;
    // SAFETY: `localtime_r` writes only into `tm`, which lives on this stack frame.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&t, &mut tm).is_null() };
    let secs = if ok { tm.tm_gmtoff as i32 } else { 0 };
    time::UtcOffset::from_whole_seconds(secs).unwrap_or(time::UtcOffset::UTC)
}

/// Formats a time the way every timestamp is stored: RFC 3339 UTC with milliseconds,
/// `2026-11-29T21:58:06.123Z`. Fixed width, so text order is time order in SQL.
pub fn fmt(t: OffsetDateTime) -> String {
    let t = t.to_offset(time::UtcOffset::UTC);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.millisecond()
    )
}

/// Parses an RFC 3339 timestamp (any offset, any sub-second precision).
pub fn parse(s: &str) -> Option<OffsetDateTime> {
    OffsetDateTime::parse(s, &Rfc3339).ok()
}

/// Re-formats an RFC 3339 timestamp into the stored form; `None` when it does not parse.
pub fn normalize(s: &str) -> Option<String> {
    parse(s).map(fmt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_width_and_normalized() {
        assert_eq!(
            normalize("2026-01-02T03:04:05Z").as_deref(),
            Some("2026-01-02T03:04:05.000Z")
        );
        assert_eq!(
            normalize("2026-01-02T04:04:05.123456+01:00").as_deref(),
            Some("2026-01-02T03:04:05.123Z")
        );
        assert_eq!(normalize("yesterday"), None);
    }
}
