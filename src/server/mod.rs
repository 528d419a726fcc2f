//! Serving clients (docs/protocol.md): the axum app on `/mcp` for both eras, the status page at
//! `/`, `--stdio`, the guards (Host, Origin, body size), the meta-tools and what a client sees.
//! Must not talk to the upstream except through `upstream::Upstream`.

pub mod answer;
pub mod app;
pub mod bridge;
mod call_meta;
mod calls;
pub mod embedding;
pub mod fake_upstream;
pub mod guard_call;
pub mod guards;
pub mod input;
pub mod instructions;
pub mod legacy;
pub mod listing;
pub mod logs;
pub mod meta_tools;
pub mod modern;
pub mod progress;
pub mod proxy;
mod results_call;
mod search_index;
pub mod sse;
pub mod status;
pub mod stdio;
pub mod stdio_pipes;
pub mod streams;
pub mod subscriptions;
pub mod working_set;

pub use calls::{CLIENT_CALL_ID_KEYS, STATELESS_SESSION_GAP};
pub use proxy::Proxy;
