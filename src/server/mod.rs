//! Serving clients (SPEC §4): the axum app on `/mcp` for both protocol eras, `--stdio`, the guards
//! (Host, Origin, body size), the meta-tools and what a client sees. Must not talk to the upstream
//! except through `upstream::Upstream`.

pub mod listing;
