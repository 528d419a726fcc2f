//! What the types cannot check, once a config is read: loopback only, glob syntax, and each
//! section's own rules (policy, results, code mode, history). `checked.rs` checks values while
//! they are read; this checks the config as a whole. The message names the field.

use super::{Config, history};

/// Checks what the types cannot: loopback only, the pin files' glob syntax, each section's own
/// rules (policy, results, code mode, history) and a non-empty `serverName`. The message names
/// the field.
pub fn validate(config: &Config) -> Result<(), String> {
    if !is_loopback(&config.listen.host) {
        return Err(format!(
            "`listen.host`: \"{}\" is not a loopback address; mws listens on loopback only \
             (use 127.0.0.1, ::1 or localhost)",
            config.listen.host
        ));
    }
    for (i, p) in config.pin_files.iter().enumerate() {
        if let Err(e) = glob::Pattern::new(p) {
            return Err(format!("`pinFiles[{i}]`: \"{p}\" is not a valid glob: {e}"));
        }
    }
    config.policy.check(&config.servers)?;
    config.results.check()?;
    config.code_mode.check()?;
    history::check(config)?;
    if config.server_name.is_empty() {
        return Err("`serverName`: expected a non-empty name".into());
    }
    Ok(())
}

/// True for `localhost`, any 127.0.0.0/8 address and `::1` (bracketed or not).
pub fn is_loopback(host: &str) -> bool {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    if h.eq_ignore_ascii_case("localhost") {
        return true;
    }
    h.parse::<std::net::IpAddr>()
        .map(|ip| ip.is_loopback())
        .unwrap_or(false)
}
