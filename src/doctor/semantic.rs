//! What `mws doctor` says about `search.semantic`: whether the model loads (or the endpoint
//! answers one probe text with a vector), and what search does otherwise. No line when the
//! config does not set it. Reads and probes only; stores nothing.

use super::Check;
use crate::config::Config;
use crate::embed::Embedder;

/// The text embedded to probe the model: a fixed phrase, never anything a user typed.
const PROBE: &str = "mws doctor: list files in a directory";

/// The `search` check, or `None` without `search.semantic`.
pub fn check(config: &Config) -> Option<Check> {
    let semantic = config.search.semantic.as_ref()?;
    let fix = "search ranks by keywords until this is fixed; see docs/search.md \"Semantic \
               ranking\" for how to get a model";
    let embedder = match Embedder::open(semantic) {
        Ok(e) => e,
        Err(e) => {
            return Some(Check::warn(
                "search",
                format!("semantic ranking off: {e}"),
                fix,
            ));
        }
    };
    Some(match embedder.embed(&[PROBE]) {
        Ok(v) => Check::ok(
            "search",
            format!(
                "semantic ranking with the {}: {} dimensions",
                embedder.describe(),
                v.first().map_or(0, Vec::len)
            ),
        ),
        Err(e) => Check::warn("search", format!("semantic ranking off: {e}"), fix),
    })
}
