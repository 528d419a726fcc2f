//! Values in a request read as the kind of value they are: a URL, a file path, an email address,
//! coordinates, a clock time, a channel (`#general`), a handle (`@dana`), a repository
//! (`owner/name` after "in", "to", ...). "what does https://example.com/blog/rust say" is a
//! request for a tool that takes a URL, whatever words the address is made of; cut into words,
//! the address matches tools about blogs and Rust. `typed` replaces each such value by words a
//! tool's name, parameters or description use for it (`url`, `file path`, `latitude longitude`);
//! `takes.rs` reads which kinds each tool takes, so the ranking finds the tool by what it takes.
//! Pure.

use std::borrow::Cow;

/// What a value is, and the words that stand for it in the query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Url,
    Email,
    Path,
    Coordinates,
    Time,
    /// A chat channel: `#general`.
    Channel,
    /// A person by handle: `@dana`.
    Mention,
    /// A repository as `owner/name`, after "in", "on", "to", "from", "into", "of" or "for".
    Repo,
}

impl Kind {
    pub(super) const ALL: [Kind; 8] = [
        Kind::Url,
        Kind::Email,
        Kind::Path,
        Kind::Coordinates,
        Kind::Time,
        Kind::Channel,
        Kind::Mention,
        Kind::Repo,
    ];

    /// How `--explain` names it.
    pub(super) fn label(self) -> &'static str {
        match self {
            Kind::Url => "a URL",
            Kind::Email => "an email address",
            Kind::Path => "a file path",
            Kind::Coordinates => "coordinates",
            Kind::Time => "a time",
            Kind::Channel => "a channel",
            Kind::Mention => "a person",
            Kind::Repo => "a repository",
        }
    }

    pub(super) fn bit(self) -> u8 {
        1 << self as u8
    }

    /// The words of a parameter name (any case) that say it takes this kind of value.
    pub(super) fn names(self) -> &'static [&'static str] {
        match self {
            Kind::Url => &["url", "uri", "href", "urls"],
            Kind::Email => &["email", "emails", "recipient", "recipients"],
            Kind::Path => &[
                "path",
                "paths",
                "filename",
                "filepath",
                "file",
                "dir",
                "directory",
            ],
            Kind::Coordinates => &["lat", "latitude", "lng", "lon", "longitude", "coordinates"],
            Kind::Time => &["time", "datetime"],
            Kind::Channel => &["channel", "channels"],
            Kind::Mention => &[
                "user",
                "users",
                "username",
                "usernames",
                "assignee",
                "assignees",
                "reviewer",
                "reviewers",
                "member",
                "members",
            ],
            Kind::Repo => &["repo", "repos", "repository", "repositories"],
        }
    }

    /// The words the value is read as.
    pub fn words(self) -> &'static str {
        match self {
            Kind::Url => "url",
            Kind::Email => "email",
            Kind::Path => "file path",
            Kind::Coordinates => "latitude longitude coordinates",
            Kind::Time => "time",
            Kind::Channel => "channel",
            Kind::Mention => "user",
            Kind::Repo => "repository",
        }
    }
}

/// Extensions a bare name (no `/`) must end in to be read as a file: the usual documents, data,
/// configuration and source files. `js` is left out: "Node.js" and "Vue.js" name libraries.
const FILE_EXTENSIONS: &[&str] = &[
    "c", "cfg", "conf", "cpp", "cs", "css", "csv", "doc", "docx", "env", "gif", "go", "gz", "h",
    "html", "ini", "java", "jpeg", "jpg", "json", "jsonl", "kt", "lock", "log", "md", "mjs", "pdf",
    "php", "png", "ppt", "pptx", "py", "rb", "rs", "sh", "sql", "svg", "swift", "tar", "toml",
    "ts", "tsx", "txt", "xls", "xlsx", "xml", "yaml", "yml", "zip",
];

/// What a file of a well-known type is, in the words its tools use: `contract.docx` is a Word
/// document, and a catalog's Word server says so.
fn file_type(path: &str) -> Option<&'static str> {
    let (_, ext) = path.rsplit_once('.')?;
    Some(match ext.to_ascii_lowercase().as_str() {
        "doc" | "docx" => "word document",
        "xls" | "xlsx" => "excel spreadsheet",
        "csv" => "csv",
        "ppt" | "pptx" => "powerpoint presentation",
        "pdf" => "pdf",
        "md" => "markdown",
        "png" | "jpg" | "jpeg" | "gif" | "svg" => "image",
        _ => return None,
    })
}

/// `query` with each value it holds replaced by the words of its kind; borrowed when it holds
/// none. What the model embeds.
pub fn typed(query: &str) -> Cow<'_, str> {
    read(query).text
}

/// A request as search reads it.
pub struct Read<'a> {
    /// `typed`.
    pub text: Cow<'a, str>,
    /// The kinds of the values the request holds, as a set of bits (`Kind::bit`).
    pub kinds: u8,
    /// The words put in for the values, in order: what `text` holds that the user did not type
    /// (unless they typed it too).
    pub added: Vec<&'static str>,
}

/// `typed`, the kinds of the values `query` holds and the words put in for them.
pub fn read(query: &str) -> Read<'_> {
    let pieces: Vec<&str> = query.split_whitespace().collect();
    // Built from the first value on: most requests hold none and are returned as they are.
    let mut out = String::new();
    let mut kinds = 0;
    let mut added = Vec::new();
    let mut i = 0;
    while i < pieces.len() {
        let before = i.checked_sub(1).map(|b| pieces[b]);
        let (kind, used) = match kind_at(&pieces[i..], before) {
            Some(k) => k,
            None => {
                if kinds != 0 {
                    push_word(&mut out, pieces[i]);
                }
                i += 1;
                continue;
            }
        };
        if kinds == 0 {
            out = pieces[..i].join(" ");
        }
        kinds |= kind.bit();
        push_word(&mut out, kind.words());
        added.push(kind.words());
        if kind == Kind::Path
            && let Some(words) = file_type(trim(pieces[i + used - 1]))
        {
            push_word(&mut out, words);
            added.push(words);
        }
        i += used;
    }
    let text = if kinds == 0 {
        Cow::Borrowed(query)
    } else {
        Cow::Owned(out)
    };
    Read { text, kinds, added }
}

fn push_word(out: &mut String, w: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    out.push_str(w);
}

/// The kind of the value that starts at `pieces[0]` and how many pieces it takes (coordinates
/// written `48.85, 2.29` take two); `before` is the piece before it.
fn kind_at(pieces: &[&str], before: Option<&str>) -> Option<(Kind, usize)> {
    let p = trim(pieces[0]);
    if p.is_empty() {
        return None;
    }
    if let Some(next) = pieces.get(1)
        && let Some(lat) = pieces[0].strip_suffix(',')
        && is_coordinate(trim(lat), 90.0)
        && is_coordinate(trim(next), 180.0)
    {
        return Some((Kind::Coordinates, 2));
    }
    let kind = if is_url(p) {
        Kind::Url
    } else if is_email(p) {
        Kind::Email
    } else if let Some((a, b)) = p.split_once(',')
        && is_coordinate(a, 90.0)
        && is_coordinate(b, 180.0)
    {
        Kind::Coordinates
    } else if is_time(p) {
        Kind::Time
    } else if is_path(p) {
        Kind::Path
    } else if let Some(name) = p.strip_prefix('#')
        && is_handle(name)
    {
        Kind::Channel
    } else if let Some(name) = p.strip_prefix('@')
        && is_handle(name)
    {
        Kind::Mention
    } else if before.is_some_and(|b| {
        ["in", "on", "to", "from", "into", "of", "for"]
            .iter()
            .any(|w| trim(b).eq_ignore_ascii_case(w))
    }) && is_repo(p)
    {
        Kind::Repo
    } else {
        return None;
    };
    Some((kind, 1))
}

/// A channel or user handle after its `#` or `@`: a letter, then letters, digits, `-`, `_`, `.`.
fn is_handle(name: &str) -> bool {
    name.as_bytes().first().is_some_and(u8::is_ascii_alphabetic)
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `owner/name`: two segments that each start with a letter or digit and hold letters, digits,
/// `-`, `_`, `.`, with a lowercase letter somewhere (`kind_at` has ruled out a file path).
fn is_repo(p: &str) -> bool {
    let Some((owner, name)) = p.split_once('/') else {
        return false;
    };
    let segment = |s: &str| {
        s.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric)
            && s.bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
            && !s.bytes().all(|c| c.is_ascii_digit())
    };
    // `AR/VR`, `EUR/USD`, `TCP/IP`: pairs of capitals are words, not repositories; so are the
    // usual pairs of words.
    let lower = p.bytes().any(|c| c.is_ascii_lowercase());
    let words = WORD_PAIRS.iter().any(|w| w.eq_ignore_ascii_case(p));
    segment(owner) && segment(name) && lower && !words
}

/// Pairs of words written with a slash, never a repository.
const WORD_PAIRS: &[&str] = &[
    "and/or",
    "either/or",
    "on/off",
    "yes/no",
    "true/false",
    "read/write",
    "input/output",
    "client/server",
    "lat/long",
    "lat/lng",
    "his/her",
    "he/she",
];

/// `p` without the quotes, brackets and sentence punctuation around it.
fn trim(p: &str) -> &str {
    p.trim_start_matches(['"', '\'', '`', '(', '[', '<', '{'])
        .trim_end_matches([
            '"', '\'', '`', ')', ']', '>', '}', ',', '.', '?', '!', ';', ':',
        ])
}

fn is_url(p: &str) -> bool {
    let lower =
        |s: &str| p.len() > s.len() && p.get(..s.len()).is_some_and(|h| h.eq_ignore_ascii_case(s));
    lower("http://") || lower("https://") || lower("www.") || lower("ftp://")
}

fn is_email(p: &str) -> bool {
    let Some((user, host)) = p.split_once('@') else {
        return false;
    };
    !user.is_empty()
        && !user.contains('/')
        && host
            .split_once('.')
            .is_some_and(|(a, b)| !a.is_empty() && b.len() >= 2 && !b.contains('@'))
}

/// A decimal number with a fractional part, within `[-most, most]`.
fn is_coordinate(p: &str, most: f64) -> bool {
    p.contains('.') && p.parse::<f64>().is_ok_and(|v| v.abs() <= most)
}

/// `14:30`, `9:05pm`, `9am`, `11pm`.
fn is_time(p: &str) -> bool {
    let b = p.as_bytes();
    let meridiem = b.len() > 2
        && matches!(b[b.len() - 2] | 0x20, b'a' | b'p')
        && b[b.len() - 1] | 0x20 == b'm';
    let body = if meridiem { &p[..p.len() - 2] } else { p };
    let hour_ok = |h: &str| !h.is_empty() && h.len() <= 2 && h.parse::<u8>().is_ok_and(|h| h < 24);
    match body.split_once(':') {
        Some((h, m)) => hour_ok(h) && m.len() == 2 && m.parse::<u8>().is_ok_and(|m| m < 60),
        None => meridiem && hour_ok(body),
    }
}

/// `/srv/app`, `~/notes.md`, `./src`, `C:\Users`, `notes/2026-12-04.md`, `report.docx`, `.env`.
fn is_path(p: &str) -> bool {
    if !p.bytes().any(|c| c.is_ascii_alphanumeric()) {
        return false;
    }
    if p.starts_with("~/") || p.starts_with("./") || p.starts_with("../") {
        return true;
    }
    let b = p.as_bytes();
    if b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\' {
        return true;
    }
    // An absolute path has a second segment ("/srv" alone reads as one): "and/or" is no path.
    if let Some(rest) = p.strip_prefix('/') {
        return !rest.is_empty() && rest.bytes().all(is_path_byte);
    }
    if !p.bytes().all(is_path_byte) {
        return false;
    }
    // A hidden file: `.env`, `.gitignore`.
    if let Some(rest) = p.strip_prefix('.') {
        return rest.len() >= 2 && rest.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_');
    }
    let Some((stem, ext)) = p.rsplit_once('.') else {
        return false;
    };
    let last = stem.rsplit(['/', '\\']).next().unwrap_or(stem);
    !last.is_empty()
        && (FILE_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str())
            || (ext == "js" && p.contains('/')))
}

fn is_path_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'/' | b'\\' | b'.' | b'_' | b'-' | b'~' | b'@' | b'+')
}

#[cfg(test)]
#[path = "entities_tests.rs"]
mod tests;
