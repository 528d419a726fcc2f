//! Gemini CLI's registrations: `mcpServers` in `~/.gemini/settings.json` and
//! `<project>/.gemini/settings.json` (JSON with comments). `httpUrl` is Streamable HTTP, `url`
//! with `type` that type, a bare `url` Streamable HTTP (the CLI's code tries it first); `$VAR`
//! becomes mws's `${VAR}`. Pure parsing.

use std::path::Path;

use super::entry::{self, Dialect};
use super::{Client, Findings, Scope};

const SERVERS: &str = "mcpServers";

const DIALECT: Dialect = Dialect {
    http_url_keys: &["httpUrl"],
    env_colon_vars: false,
    bare_dollar_vars: true,
};

/// A `settings.json`; `scope` is `User` for `~/.gemini`, `Project` for a project's `.gemini`.
pub fn read_settings(text: &str, file: &Path, scope: Scope, out: &mut Findings) {
    entry::read_project_file(
        text,
        file,
        scope,
        (Client::GeminiCli, SERVERS, DIALECT),
        out,
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::{Flag, Transport};

    #[test]
    fn documented_shapes() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/client-configs/gemini-settings.json");
        let mut out = Findings::default();
        let file = Path::new("/h/.gemini/settings.json");
        read_settings(
            &std::fs::read_to_string(p).unwrap(),
            file,
            Scope::User,
            &mut out,
        );
        let names: Vec<_> = out.found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "pythonTools",
                "httpServer",
                "typedHttp",
                "sseServer",
                "googleCloud"
            ]
        );
        let Transport::Stdio { cwd, env, .. } = &out.found[0].transport else {
            panic!("{:?}", out.found[0]);
        };
        assert_eq!(cwd.as_deref(), Some(Path::new("./mcp-servers/python")));
        assert_eq!(env["API_KEY"], "${MY_API_TOKEN}");
        assert_eq!(out.found[0].flags, [Flag::VariablesRewritten]);
        assert!(
            matches!(&out.found[1].transport, Transport::Http { url, headers } if url == "http://localhost:3000/mcp" && headers["Authorization"] == "Bearer your-api-token")
        );
        assert!(matches!(out.found[2].transport, Transport::Http { .. }));
        assert!(matches!(out.found[3].transport, Transport::Sse { .. }));
        assert_eq!(out.found[4].flags, [Flag::Oauth]);
        assert!(out.errors.is_empty() && out.skipped.is_empty());
    }
}
