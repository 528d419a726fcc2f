//! Numbers, sizes, shares and times as the report writes them: `1,234,567`, `516.7 KB`,
//! `87.3%`, `3h ago`, `2026-11-29 21:58`. Pure.

use time::OffsetDateTime;

use crate::clock;

/// `1234567` → `1,234,567`.
pub fn num(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `529113` → `516.7 KB` (1 KB = 1024 bytes).
pub fn bytes(n: u64) -> String {
    const KB: f64 = 1024.0;
    let f = n as f64;
    if f < KB {
        format!("{n} B")
    } else if f < KB * KB {
        format!("{:.1} KB", f / KB)
    } else {
        format!("{:.1} MB", f / KB / KB)
    }
}

/// `0.8734` → `87.3%`.
pub fn pct(share: f64) -> String {
    format!("{:.1}%", share * 100.0)
}

/// How long before `now`: `5m ago`, `3h ago`, `2d ago`; `never` for none.
pub fn ago(ts: Option<&str>, now: OffsetDateTime) -> String {
    let Some(t) = ts.and_then(clock::parse) else {
        return "never".into();
    };
    let d = now - t;
    if d.is_negative() {
        short_time(ts.unwrap_or(""))
    } else if d.whole_minutes() < 1 {
        "just now".into()
    } else if d.whole_hours() < 1 {
        format!("{}m ago", d.whole_minutes())
    } else if d.whole_days() < 1 {
        format!("{}h ago", d.whole_hours())
    } else {
        format!("{}d ago", d.whole_days())
    }
}

/// `2026-11-29T21:58:06.123Z` → `2026-11-29 21:58`.
pub fn short_time(ts: &str) -> String {
    if ts.len() >= 16 {
        format!("{} {}", &ts[..10], &ts[11..16])
    } else {
        ts.to_string()
    }
}

/// `2026-11-29T21:58:06.123Z` → `2026-11-29`.
pub fn short_date(ts: &str) -> String {
    ts.get(..10).unwrap_or(ts).to_string()
}
