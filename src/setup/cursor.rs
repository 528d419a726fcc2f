//! Cursor's registrations: `mcpServers` in `~/.cursor/mcp.json` (global) and
//! `<project>/.cursor/mcp.json`. Cursor writes `${env:NAME}`, rewritten to mws's `${NAME}`; an
//! `auth` object means an OAuth login. Pure parsing.

use std::path::Path;

use super::entry::{self, Dialect};
use super::{Client, Findings, Scope};

const SERVERS: &str = "mcpServers";

const DIALECT: Dialect = Dialect {
    http_url_keys: &[],
    env_colon_vars: true,
    bare_dollar_vars: false,
};

/// A `mcp.json`; `scope` is `User` for `~/.cursor`, `Project` for a project's `.cursor`.
pub fn read_config(text: &str, file: &Path, scope: Scope, out: &mut Findings) {
    entry::read_project_file(text, file, scope, (Client::Cursor, SERVERS, DIALECT), out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::{Flag, Transport};

    #[test]
    fn documented_shape() {
        let p =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/client-configs/cursor-mcp.json");
        let mut out = Findings::default();
        let file = Path::new("/w/proj/.cursor/mcp.json");
        read_config(
            &std::fs::read_to_string(p).unwrap(),
            file,
            Scope::Project,
            &mut out,
        );
        let names: Vec<_> = out.found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["local-tool", "remote", "with-auth"]);
        assert_eq!(
            out.found[0].origin.project.as_deref(),
            Some(Path::new("/w/proj"))
        );
        let Transport::Stdio { env, .. } = &out.found[0].transport else {
            panic!("{:?}", out.found[0]);
        };
        assert_eq!(env["API_KEY"], "${MY_API_KEY}");
        assert_eq!(
            out.found[0].flags,
            [Flag::EnvFile, Flag::VariablesRewritten]
        );
        let Transport::Http { headers, .. } = &out.found[1].transport else {
            panic!("{:?}", out.found[1]);
        };
        assert_eq!(headers["Authorization"], "Bearer ${MY_SERVICE_TOKEN}");
        assert_eq!(out.found[2].flags, [Flag::Oauth]);
        assert!(out.skipped.is_empty() && out.errors.is_empty());
    }
}
