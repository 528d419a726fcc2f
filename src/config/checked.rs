//! Config values checked while they are read, so that the error carries the field path and the
//! line and column: objects only where a struct is expected (never an array mapped by position),
//! non-empty paths, timeouts of at least a millisecond, http(s) URLs, HTTP-valid headers with
//! well-formed `${NAME}`, search aliases within their bounds. Must not print a header value: it
//! may be a secret.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::PathBuf;

use reqwest::header::{HeaderName, HeaderValue};
use serde::de::value::MapAccessDeserializer;
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};

/// Smallest `timeouts.listMs` / `firstStartMs` / `callMs` accepted (a zero timeout fails every
/// request). Raising it refuses configs with shorter timeouts.
pub const MIN_TIMEOUT_MS: u64 = 1;

/// Most words `searchAliases` may expand (its keys). Raising it lets a config's table grow; every
/// search index build reads all of it.
pub const MAX_ALIAS_KEYS: usize = 1_000;

/// Most expansions one `searchAliases` word may have.
pub const MAX_ALIAS_VALUES: usize = 32;

/// Longest word (key or expansion) in `searchAliases`, in bytes.
pub const MAX_ALIAS_BYTES: usize = 64;

/// `searchAliases`: at most `MAX_ALIAS_KEYS` words, each non-empty, at most `MAX_ALIAS_BYTES`
/// long, with at most `MAX_ALIAS_VALUES` non-empty expansions of the same bound.
pub fn aliases<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, Vec<String>>, D::Error> {
    let a = BTreeMap::<String, Vec<String>>::deserialize(d)?;
    check_aliases(&a).map_err(de::Error::custom)?;
    Ok(a)
}

fn check_aliases(a: &BTreeMap<String, Vec<String>>) -> Result<(), String> {
    if a.len() > MAX_ALIAS_KEYS {
        return Err(format!("{} words; at most {MAX_ALIAS_KEYS}", a.len()));
    }
    let word = |w: &str, what: &str| -> Result<(), String> {
        if w.trim().is_empty() {
            return Err(format!("{what} is empty"));
        }
        if w.len() > MAX_ALIAS_BYTES {
            let head: String = w.chars().take(16).collect();
            return Err(format!(
                "{what} is {} bytes long (\"{head}…\"); at most {MAX_ALIAS_BYTES}",
                w.len()
            ));
        }
        Ok(())
    };
    for (key, values) in a {
        word(key, "a word")?;
        if values.len() > MAX_ALIAS_VALUES {
            return Err(format!(
                "{key:?} has {} expansions; at most {MAX_ALIAS_VALUES}",
                values.len()
            ));
        }
        for v in values {
            word(v, &format!("an expansion of {key:?}"))?;
        }
    }
    Ok(())
}

/// Reads a `T` from a JSON object only. serde's derived structs also take an array, field by
/// position, which in a config file is always a mistake.
pub fn object<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    d.deserialize_map(ObjectOnly(PhantomData))
}

/// `T` read through `object`, for the elements of an array.
pub struct Object<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        object(d).map(Object)
    }
}

/// An array of objects, each read through `object`.
pub fn objects<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    let v: Vec<Object<T>> = Vec::deserialize(d)?;
    Ok(v.into_iter().map(|o| o.0).collect())
}

struct ObjectOnly<T>(PhantomData<T>);

impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOnly<T> {
    type Value = T;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object")
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
        T::deserialize(MapAccessDeserializer::new(map))
    }
}

/// A directory path; an empty one would mean the working directory, silently.
pub fn dir_path<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
    let p = PathBuf::deserialize(d)?;
    if p.as_os_str().is_empty() {
        return Err(de::Error::custom(
            "expected a directory path, found an empty string",
        ));
    }
    Ok(p)
}

/// A timeout in milliseconds, at least `MIN_TIMEOUT_MS`.
pub fn timeout_ms<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    let ms = u64::deserialize(d)?;
    if ms < MIN_TIMEOUT_MS {
        return Err(de::Error::custom(format!(
            "{ms} is too short: the minimum is {MIN_TIMEOUT_MS} (milliseconds)"
        )));
    }
    Ok(ms)
}

/// An `http://` or `https://` URL with a host. The URL itself is not repeated in the message: it
/// may hold a password.
pub fn http_url<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let Some(s) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    check_url(&s).map_err(de::Error::custom)?;
    Ok(Some(s))
}

/// Header names and values that HTTP allows, with every `${` closed around a variable name (and
/// an optional `:-default`).
pub fn headers<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<BTreeMap<String, String>>, D::Error> {
    let Some(h) = Option::<BTreeMap<String, String>>::deserialize(d)? else {
        return Ok(None);
    };
    for (name, value) in &h {
        header(name, value).map_err(de::Error::custom)?;
    }
    Ok(Some(h))
}

/// Checks one header; the message names the header and never shows its value.
pub fn header(name: &str, value: &str) -> Result<(), String> {
    if HeaderName::try_from(name).is_err() {
        return Err(format!("header name {name:?} is not valid in HTTP"));
    }
    let fix = "write ${NAME} with the name of an environment variable";
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            return Err(format!("unclosed ${{ in header {name:?}: {fix}"));
        };
        // `${NAME:-default}`: the name is checked, the default is text.
        let var = after[..end]
            .split_once(DEFAULT_SEP)
            .map_or(&after[..end], |(var, _)| var);
        if var.is_empty() {
            return Err(format!("empty ${{}} in header {name:?}: {fix}"));
        }
        if !is_var_name(var) {
            return Err(format!(
                "${{...}} in header {name:?} is not an environment variable name (letters, \
                 digits and _, not starting with a digit); the value is not shown"
            ));
        }
        rest = &after[end + 1..];
    }
    if HeaderValue::try_from(value).is_err() {
        return Err(format!(
            "the value of header {name:?} holds a character not allowed in HTTP (a line break \
             or another control character); the value is not shown"
        ));
    }
    Ok(())
}

/// A POSIX environment variable name: ASCII letters, digits and `_`, not starting with a digit.
fn is_var_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An `http://` or `https://` URL with a host. The message never repeats the URL.
pub fn check_url(s: &str) -> Result<reqwest::Url, String> {
    let want = "expected http:// or https:// and a host";
    let url = reqwest::Url::parse(s).map_err(|e| format!("not a URL ({e}): {want}"))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "a URL with scheme {:?} is not supported: {want}",
            url.scheme()
        ));
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Err(format!("not a URL (no host): {want}"));
    }
    Ok(url)
}

/// What separates a variable from its default in `${NAME:-default}`.
pub const DEFAULT_SEP: &str = ":-";
