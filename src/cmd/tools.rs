//! `mws tools held|approve|reject`: the tool definitions held because they changed since the user
//! approved them (docs/tool-approval.md), each change shown a field at a time, and the user's
//! decision on each. Works on the state dir's `definitions.json` files: a running mws picks a
//! decision up within `APPROVALS_POLL` and tells its clients the list changed.

use std::io::Write;
use std::path::Path;

use super::{CmdResult, UsageError, load_config};
use crate::cli::{ToolsArgs, ToolsCommand};
use crate::term::Safe;
use crate::upstream::approvals;
use crate::upstream::held::{self, Pending};

pub fn run(config: Option<&Path>, command: ToolsCommand) -> CmdResult {
    let loaded = load_config(config)?;
    let found = held::gather(&loaded.config);
    let mut out = std::io::stdout().lock();
    for e in &found.errors {
        eprintln!("mws: {e}");
    }
    let (args, approve) = match command {
        ToolsCommand::Held(a) => {
            if a.json {
                writeln!(out, "{}", crate::term::json_pretty(&found.pending)?)?;
            } else {
                out.write_all(render(&found.pending).as_bytes())?;
            }
            return Ok(i32::from(!found.errors.is_empty()));
        }
        ToolsCommand::Approve(a) => (a, true),
        ToolsCommand::Reject(a) => (a, false),
    };
    let chosen = choose(&found.pending, &args, approve)?;
    let mut failed = !found.errors.is_empty();
    for p in chosen {
        let names = [p.tool.clone()];
        let done = if approve {
            approvals::approve(&p.dir, &names)
        } else {
            approvals::reject(&p.dir, &names)
        };
        match done {
            Ok(d) if !d.is_empty() && approve => writeln!(
                out,
                "approved {}: mws lists and runs it as the server defines it now (a running mws \
                 within {} s)",
                Safe(&p.name),
                crate::upstream::approvals::APPROVALS_POLL.as_secs()
            )?,
            Ok(d) if !d.is_empty() => writeln!(
                out,
                "rejected {}: it stays held until its server lists another definition",
                Safe(&p.name)
            )?,
            Ok(_) => writeln!(out, "{} is no longer held", Safe(&p.name))?,
            Err(e) => {
                eprintln!("mws: {e}");
                failed = true;
            }
        }
    }
    Ok(i32::from(failed))
}

/// The held definitions `args` names (`--all`: every one awaiting a decision; rejecting again is
/// allowed, approving a rejected one too).
fn choose<'a>(
    pending: &'a [Pending],
    args: &ToolsArgs,
    approve: bool,
) -> anyhow::Result<Vec<&'a Pending>> {
    let verb = if approve { "approve" } else { "reject" };
    if args.all {
        if !args.names.is_empty() {
            return Err(UsageError("name tools or give --all, not both".into()).into());
        }
        let all: Vec<&Pending> = pending.iter().filter(|p| p.awaiting()).collect();
        if all.is_empty() {
            return Err(
                UsageError(format!("no held tool awaits a decision: nothing to {verb}")).into(),
            );
        }
        return Ok(all);
    }
    if args.names.is_empty() {
        return Err(UsageError(format!(
            "name the tools to {verb} (as `mws tools held` shows them), or give --all"
        ))
        .into());
    }
    let mut chosen = Vec::new();
    for n in &args.names {
        chosen.push(held::pick(pending, n).map_err(UsageError)?);
    }
    Ok(chosen)
}

/// Each held definition with its change, or a line saying there is none.
pub fn render(pending: &[Pending]) -> String {
    if pending.is_empty() {
        return "no tool is held: every tool's definition is the one approved\n".into();
    }
    let mut text = String::new();
    for p in pending {
        let state = match p.why {
            crate::catalog::definitions::HeldWhy::Changed => "changed since it was approved",
            crate::catalog::definitions::HeldWhy::New => "new, held by policy.holdNewTools",
            crate::catalog::definitions::HeldWhy::Rejected => {
                "rejected; held until its server lists another definition"
            }
        };
        let since = p
            .since
            .as_deref()
            .map(|s| format!(", since {s}"))
            .unwrap_or_default();
        text += &format!("{}: {state}{since}\n", Safe(&p.name));
        for line in p.diff() {
            text += &format!("  {}\n", Safe(&line));
        }
    }
    text +=
        "approve with `mws tools approve NAME`, reject with `mws tools reject NAME` (or --all)\n";
    text
}
