//! The name a registration gets in mws's `servers`: the client's own when mws's config accepts it
//! (`config::servers::check_name`), else the nearest name it does accept, with why. Pure; must
//! not decide which of two registrations keeps a name (the plan does).

use crate::config::servers::MAX_SERVER_NAME;

/// What a name is called when nothing of it can be kept (`---`, an empty or non-ASCII name).
const FALLBACK: &str = "server";

/// Room kept at the end of a shortened name for a `-N` suffix on a collision (`-2` to `-99`);
/// raising it shortens every name that had to be cut.
const SUFFIX_ROOM: usize = 3;

/// The name `check_name` accepts nearest to `name`, and why it differs (`None`: it is the same).
/// Characters a tool name cannot hold become `-`, `__` becomes `_`, leading `_`/`-` and a
/// trailing `_` go, and a name over `MAX_SERVER_NAME` keeps its head with room for a suffix.
pub fn clean(name: &str) -> (String, Option<String>) {
    let mut why: Vec<String> = Vec::new();
    let mut s: String = name
        .chars()
        .map(|c| if char_ok(c) { c } else { '-' })
        .collect();
    if s != name {
        why.push("has characters a tool name cannot hold".into());
    }
    if s.contains("__") {
        while s.contains("__") {
            s = s.replace("__", "_");
        }
        why.push("holds `__`, which separates the server from the tool".into());
    }
    let trimmed = s.trim_start_matches(['_', '-']);
    if trimmed.len() != s.len() && !trimmed.is_empty() {
        why.push("starts with `_` or `-`".into());
    }
    s = trimmed.to_string();
    if s.ends_with('_') {
        s = s.trim_end_matches('_').to_string();
        why.push("ends with `_`".into());
    }
    if s.len() > MAX_SERVER_NAME {
        s = shorten(&s, MAX_SERVER_NAME - SUFFIX_ROOM);
        why.push(format!("is longer than {MAX_SERVER_NAME} characters"));
    }
    if name.is_empty() {
        return (
            FALLBACK.into(),
            Some("an empty name cannot be a server name".into()),
        );
    }
    if s.is_empty() {
        s = FALLBACK.into();
        why = vec!["has no letter or digit a server name can keep".into()];
    }
    let why = (!why.is_empty())
        .then(|| format!("`{name}` cannot be a server name: it {}", why.join(", ")));
    (s, why)
}

/// `base` with `-n`, shortened so that the whole stays within `MAX_SERVER_NAME`.
pub fn with_suffix(base: &str, n: usize) -> String {
    let suffix = format!("-{n}");
    format!(
        "{}{suffix}",
        shorten(base, MAX_SERVER_NAME.saturating_sub(suffix.len()))
    )
}

/// The first `max` bytes of an ASCII name, without a trailing `_` (which would make `___`).
fn shorten(s: &str, max: usize) -> String {
    s[..s.len().min(max)].trim_end_matches('_').to_string()
}

/// Characters a server name may keep: it becomes part of tool names (`<server>__<tool>`), which
/// clients and model APIs limit to these.
fn char_ok(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-' || c == '_'
}
