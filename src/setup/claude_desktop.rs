//! Claude Desktop's registrations: `mcpServers` in `claude_desktop_config.json` (one scope; stdio
//! in practice, remote servers live in the app's Connectors, outside the file). Pure parsing; must
//! not read the app's other keys (`preferences`, ...).

use std::path::Path;

use super::entry::{self, Dialect, Syntax};
use super::{Client, Findings, Origin, Scope};

const SERVERS: &str = "mcpServers";

/// `claude_desktop_config.json`.
pub fn read_config(text: &str, file: &Path, out: &mut Findings) {
    let doc = match entry::parse_doc(text, Syntax::Json, Client::ClaudeDesktop, file) {
        Ok(doc) => doc,
        Err(e) => return out.errors.push(e),
    };
    if let Some(map) = doc.get(SERVERS) {
        let origin = Origin::new(Client::ClaudeDesktop, file, Scope::User);
        entry::read_map(map, &origin, Dialect::default(), SERVERS, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::setup::Transport;

    #[test]
    fn documented_shape() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/client-configs/claude_desktop_config.json");
        let mut out = Findings::default();
        read_config(
            &std::fs::read_to_string(p).unwrap(),
            Path::new("/d/c.json"),
            &mut out,
        );
        let names: Vec<_> = out.found.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["filesystem", "remote-bridge"]);
        let Transport::Stdio { command, args, .. } = &out.found[0].transport else {
            panic!("{:?}", out.found[0]);
        };
        assert_eq!(command, "npx");
        assert_eq!(
            args.last().map(String::as_str),
            Some("/Users/dev/Downloads")
        );
        assert!(out.skipped.is_empty() && out.errors.is_empty());
    }

    #[test]
    fn no_servers_key_is_fine() {
        let mut out = Findings::default();
        read_config("{\"preferences\": {}}", Path::new("/d/c.json"), &mut out);
        assert!(out.found.is_empty() && out.errors.is_empty());
    }
}
