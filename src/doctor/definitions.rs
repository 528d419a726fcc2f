//! `mws doctor`'s `definitions` check: the tool definitions held because they changed since the
//! user approved them (docs/tool-approval.md), each change shown, and a `definitions.json` that
//! cannot be read. Runs after the server checks, whose listing reviews every server's tools.
//! Must not write anything.

use super::Check;
use crate::config::Config;
use crate::upstream::held;

/// Most held tools whose changes are shown in full; the rest are named. Raising it lengthens the
/// doctor's output.
const MAX_SHOWN: usize = 10;

/// `None` while nothing is held, nothing was rejected and every book reads.
pub fn check(config: &Config) -> Option<Check> {
    let found = held::gather(config);
    if !found.errors.is_empty() {
        let mut c = Check::fail(
            "definitions",
            format!(
                "{} book(s) of approved tool definitions cannot be read",
                found.errors.len()
            ),
            "fix or delete each file named; mws then approves the definitions it lists next",
        );
        for e in &found.errors {
            c = c.detail(e.to_string());
        }
        return Some(c);
    }
    let awaiting: Vec<&held::Pending> = found.pending.iter().filter(|p| p.awaiting()).collect();
    let rejected = found.pending.len() - awaiting.len();
    if awaiting.is_empty() {
        return (rejected > 0).then(|| {
            Check::ok(
                "definitions",
                format!("{rejected} rejected tool definition(s) stay held (`mws tools held`)"),
            )
        });
    }
    let names: Vec<&str> = awaiting.iter().map(|p| p.name.as_str()).collect();
    let mut c = Check::warn(
        "definitions",
        format!(
            "{} tool(s) held because their definitions changed since they were approved: {}",
            awaiting.len(),
            names.join(", ")
        ),
        "read each change, then `mws tools approve NAME` or `mws tools reject NAME` (`mws tools \
         held` shows them all)",
    );
    for p in awaiting.iter().take(MAX_SHOWN) {
        c = c.detail(format!("{}:", p.name));
        c = c.details(p.diff().into_iter().map(|l| format!("  {l}")).collect());
    }
    if awaiting.len() > MAX_SHOWN {
        c = c.detail(format!("and {} more", awaiting.len() - MAX_SHOWN));
    }
    Some(c)
}
