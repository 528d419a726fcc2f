//! The usage prior: tools this user called successfully in recent sessions rank a little higher
//! among candidates of close relevance. Built from the per-tool session counts `state.db`
//! already holds (nothing new is stored); applied after ranking, as a bounded factor, so it
//! reorders near-ties and never lifts a tool past one that scores clearly more. Pure.

use std::collections::HashMap;

/// Most a used tool's score is multiplied by: `1 + PRIOR_BOOST`. A tool scoring less than
/// `1 / (1 + PRIOR_BOOST)` (91%) of another's can never pass it. Raising it lets habits beat
/// relevance over a wider gap. On MetaTool (tests/search_quality.rs), habits matching every
/// request: top-1 +2.1 points at 0.05, +3.9 at 0.1, +5.5 at 0.15; habits never matching: -3.9,
/// -5.8, -8.2 (top-3 -1.6, -2.8, -4.8): 0.1 keeps the worst case's top-3 loss under 3 points.
pub const PRIOR_BOOST: f32 = 0.1;

/// Sessions with a successful call at which a tool gets the whole boost; fewer get a share
/// growing with the log of the count. Raising it asks for longer habits before the full boost.
pub const PRIOR_FULL_SESSIONS: u32 = 5;

/// Ranked candidates beyond the limit that the prior may bring into it (it can only lift a tool
/// within `PRIOR_BOOST` of the last one shown).
pub const PRIOR_EXTRA: usize = 8;

/// Per-tool boost weights, 0 to 1.
#[derive(Debug, Clone, Default)]
pub struct Prior {
    weights: HashMap<String, f32>,
}

impl Prior {
    /// From `(tool, sessions with a successful call in the window)`.
    pub fn from_sessions<I, S>(rows: I) -> Prior
    where
        I: IntoIterator<Item = (S, u32)>,
        S: Into<String>,
    {
        let full = (1.0 + PRIOR_FULL_SESSIONS as f32).ln();
        let weights = rows
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .map(|(t, n)| (t.into(), ((1.0 + n as f32).ln() / full).min(1.0)))
            .collect();
        Prior { weights }
    }

    pub fn is_empty(&self) -> bool {
        self.weights.is_empty()
    }

    /// The factor a tool's score is multiplied by: 1 for a tool never used.
    pub fn factor(&self, tool: &str) -> f32 {
        1.0 + PRIOR_BOOST * self.weights.get(tool).copied().unwrap_or(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_grows_with_sessions_and_is_bounded() {
        let p = Prior::from_sessions([("a", 1), ("b", 5), ("c", 50), ("d", 0)]);
        let (a, b, c, d) = (p.factor("a"), p.factor("b"), p.factor("c"), p.factor("d"));
        assert!(1.0 < a && a < b, "{a} {b}");
        assert_eq!(b, 1.0 + PRIOR_BOOST);
        assert_eq!(c, b);
        assert_eq!((d, p.factor("never")), (1.0, 1.0));
    }
}
