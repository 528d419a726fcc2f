//! Secrets out of everything mws shows about its upstream: a URL's userinfo becomes `***@` and a
//! token-like query parameter's value `***`. Every URL or command line printed (errors to clients,
//! logs, doctor, report) goes through `url` or `text`. Must not change anything else in the text.

/// Query parameter names whose values are hidden (compared lowercased; a name ending in one of
/// `SECRET_SUFFIXES` is hidden too, so `x-api-key` and `auth_token` are).
const SECRET_PARAMS: &[&str] = &[
    "token",
    "key",
    "access_token",
    "api_key",
    "apikey",
    "secret",
    "client_secret",
    "password",
    "passwd",
    "pwd",
    "auth",
    "authorization",
    "sig",
    "signature",
    "code",
    "session",
];
const SECRET_SUFFIXES: &[&str] = &["token", "key", "secret", "password"];

/// The mask put in place of a secret.
pub const MASK: &str = "***";

fn secret_param(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    SECRET_PARAMS.contains(&n.as_str()) || SECRET_SUFFIXES.iter().any(|s| n.ends_with(s))
}

/// `url` with its userinfo and token-like query values masked. Works on unparsable text too.
pub fn url(url: &str) -> String {
    let (head, fragment) = match url.find('#') {
        Some(i) => url.split_at(i),
        None => (url, ""),
    };
    let (base, query) = match head.find('?') {
        Some(i) => (&head[..i], Some(&head[i + 1..])),
        None => (head, None),
    };
    let mut out = String::with_capacity(url.len());
    match base.find("://") {
        Some(i) => {
            let rest = &base[i + 3..];
            let end = rest.find('/').unwrap_or(rest.len());
            let (authority, path) = rest.split_at(end);
            out.push_str(&base[..i + 3]);
            match authority.rfind('@') {
                Some(at) => {
                    out.push_str(MASK);
                    out.push_str(&authority[at..]);
                }
                None => out.push_str(authority),
            }
            out.push_str(path);
        }
        None => out.push_str(base),
    }
    if let Some(q) = query {
        out.push('?');
        let parts: Vec<String> = q
            .split('&')
            .map(|p| match p.split_once('=') {
                Some((k, _)) if secret_param(k) => format!("{k}={MASK}"),
                _ => p.to_string(),
            })
            .collect();
        out.push_str(&parts.join("&"));
    }
    out.push_str(fragment);
    out
}

/// Free text (an error message, a command line) with every URL in it passed through `url`.
pub fn text(text: &str) -> String {
    if !text.contains("://") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("://") {
        let start = rest[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || "+.-".contains(c)))
            .map_or(0, |j| j + 1);
        let end = rest[i..]
            .find(|c: char| c.is_whitespace() || "\"'<>`()[]{}".contains(c))
            .map_or(rest.len(), |j| i + j);
        out.push_str(&rest[..start]);
        out.push_str(&url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        for (input, want) in [
            ("http://host/mcp", "http://host/mcp"),
            ("http://user:pw@host/mcp", "http://***@host/mcp"),
            ("http://user@host:8080", "http://***@host:8080"),
            ("https://a:b@c@host/x?y=1", "https://***@host/x?y=1"),
            (
                "http://host/mcp?token=abc&page=2&API_KEY=k&x-api-key=z",
                "http://host/mcp?token=***&page=2&API_KEY=***&x-api-key=***",
            ),
            (
                "http://host/?access_token=t#frag@x",
                "http://host/?access_token=***#frag@x",
            ),
            ("http://host/p@th", "http://host/p@th"),
            ("not a url?secret=s", "not a url?secret=***"),
            ("", ""),
        ] {
            assert_eq!(url(input), want, "{input}");
        }
    }

    #[test]
    fn text_with_urls() {
        assert_eq!(
            text("http://u:p@h/mcp: connection refused"),
            "http://***@h/mcp: connection refused"
        );
        assert_eq!(
            text("npx mcp-remote https://u:p@h/sse?key=1 --x (see http://h/?token=2)"),
            "npx mcp-remote https://***@h/sse?key=*** --x (see http://h/?token=***)"
        );
        assert_eq!(text("no urls: a@b"), "no urls: a@b");
    }
}
