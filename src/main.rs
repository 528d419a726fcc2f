//! The `mws` binary: parse arguments, set up logging on stderr, run the command, map the result to
//! an exit code. Glue only; every command lives in `mws::cmd`.

fn main() {
    std::process::exit(mws::cmd::main());
}
