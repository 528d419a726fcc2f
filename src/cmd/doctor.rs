//! `mws doctor`: run the checks, print them (text or JSON), exit 1 when any failed.

use std::io::Write;
use std::path::Path;

use super::CmdResult;
use crate::cli::DoctorArgs;
use crate::{clock, doctor};

pub fn run(config: Option<&Path>, args: DoctorArgs) -> CmdResult {
    let d = doctor::diagnose(config, clock::now());
    let out = if args.json {
        let mut s = crate::term::json_pretty(&d).expect("the diagnosis always serializes");
        s.push('\n');
        s
    } else {
        doctor::text(&d)
    };
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(out.as_bytes())?;
    stdout.flush()?;
    Ok(if d.ok { 0 } else { 1 })
}
