//! VS Code's registrations: the `servers` map (not `mcpServers`) of a user-profile `mcp.json` and
//! of a workspace's `.vscode/mcp.json`, with its `inputs` (values VS Code prompts for and keeps in
//! its secret storage, never in the file). Pure parsing.

use std::path::Path;

use super::entry::{self, Dialect};
use super::{Client, Findings, Scope};

const SERVERS: &str = "servers";

const DIALECT: Dialect = Dialect {
    http_url_keys: &[],
    env_colon_vars: true,
    bare_dollar_vars: false,
};

/// A `mcp.json`; `scope` is `User` for a profile's, `Project` for a workspace's `.vscode/mcp.json`.
pub fn read_config(text: &str, file: &Path, scope: Scope, out: &mut Findings) {
    entry::read_project_file(text, file, scope, (Client::VsCode, SERVERS, DIALECT), out);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::{Flag, Transport};

    #[test]
    fn servers_key_inputs_and_comments() {
        let p =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/client-configs/vscode-mcp.json");
        let mut out = Findings::default();
        let file = Path::new("/w/proj/.vscode/mcp.json");
        read_config(
            &std::fs::read_to_string(p).unwrap(),
            file,
            Scope::Project,
            &mut out,
        );
        let names: Vec<_> = out.found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["github", "perplexity", "legacy-sse", "fetch"]);
        assert!(matches!(out.found[0].transport, Transport::Http { .. }));
        assert_eq!(out.found[1].flags, [Flag::Input("perplexity-key".into())]);
        assert!(matches!(out.found[2].transport, Transport::Sse { .. }));
        assert!(out.found[3].flags.is_empty());
        assert_eq!(out.skipped.len(), 1);
        assert!(
            out.skipped[0].reason.contains("`pipe`"),
            "{}",
            out.skipped[0].reason
        );
        assert!(out.errors.is_empty());
    }

    #[test]
    fn mcp_servers_key_is_not_vs_code_s() {
        let mut out = Findings::default();
        let text = r#"{"mcpServers": {"x": {"command": "y"}}}"#;
        read_config(text, Path::new("/u/mcp.json"), Scope::User, &mut out);
        assert!(out.found.is_empty());
    }
}
