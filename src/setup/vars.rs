//! Which variable references in a registration mws can carry over verbatim and expand when the
//! server starts (`config::servers::expand_text`: `${NAME}`, `${NAME:-default}` in `command`,
//! `args`, `env`, `url` and `headers`), and why not when it cannot. Pure; must not read the
//! environment (a variable's value is never looked at here).

use std::cell::RefCell;

use super::Transport;
use crate::config::servers::expand_text;

/// Why mws could not expand the registration's variables as its client does, if it could not.
pub fn unexpandable(t: &Transport) -> Option<String> {
    let mut fields: Vec<(String, &str)> = Vec::new();
    match t {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            if let Some(c) = cwd.as_ref().and_then(|c| c.to_str())
                && c.contains("${")
            {
                return Some("`cwd` holds `${...}`, which mws does not expand there".into());
            }
            fields.push(("command".into(), command));
            for (i, a) in args.iter().enumerate() {
                fields.push((format!("args[{i}]"), a));
            }
            for (k, v) in env {
                fields.push((format!("env.{k}"), v));
            }
        }
        Transport::Http { url, headers }
        | Transport::Sse { url, headers }
        | Transport::Ws { url, headers } => {
            fields.push(("url".into(), url));
            for (k, v) in headers {
                fields.push((format!("headers.{k}"), v));
            }
        }
    }
    for (field, text) in fields {
        let odd = RefCell::new(None::<String>);
        let look = |name: &str| {
            if !is_var_name(name) {
                odd.borrow_mut().get_or_insert_with(|| name.to_string());
            }
            Some(String::new())
        };
        if let Err(e) = expand_text(text, &look) {
            return Some(format!("`{field}`: {e}"));
        }
        if let Some(name) = odd.into_inner() {
            return Some(format!(
                "`{field}` holds `${{{name}}}`, which is not a variable mws can expand (it \
                 expands ${{NAME}} and ${{NAME:-default}})"
            ));
        }
    }
    None
}

/// A POSIX environment variable name: ASCII letters, digits and `_`, not starting with a digit.
fn is_var_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn stdio(args: &[&str], cwd: Option<&str>) -> Transport {
        Transport::Stdio {
            command: "node".into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: BTreeMap::new(),
            cwd: cwd.map(Into::into),
        }
    }

    #[test]
    fn what_mws_can_and_cannot_expand() {
        let http = Transport::Http {
            url: "https://x/${PATH_PART:-mcp}".into(),
            headers: BTreeMap::from([("A".into(), "Bearer ${TOK:-none}".into())]),
        };
        let cases = [
            (stdio(&["${HOME}/a", "$HOME", "${PORT:-80}"], None), None),
            (http, None),
            (
                stdio(&["${A:-${B}}"], None),
                Some(
                    "`args[0]`: the default of ${A:-...} holds ${: ${NAME:-default} (a default \
                     cannot hold }) ends at the first }",
                ),
            ),
            (
                stdio(&["x", "${a.b}"], None),
                Some(
                    "`args[1]` holds `${a.b}`, which is not a variable mws can expand (it \
                     expands ${NAME} and ${NAME:-default})",
                ),
            ),
            (
                stdio(&["${/}"], None),
                Some(
                    "`args[0]` holds `${/}`, which is not a variable mws can expand (it expands \
                     ${NAME} and ${NAME:-default})",
                ),
            ),
            (
                stdio(&["${X"], None),
                Some(
                    "`args[0]`: unclosed ${: write ${NAME} or ${NAME:-default} (a default cannot \
                     hold })",
                ),
            ),
            (
                stdio(&[], Some("${HOME}/srv")),
                Some("`cwd` holds `${...}`, which mws does not expand there"),
            ),
        ];
        for (t, want) in cases {
            assert_eq!(unexpandable(&t).as_deref(), want, "{t:?}");
        }
    }
}
