//! Serving clients (docs/protocol.md), a folder per role, each importing only those below it:
//! `stdio/` and `http/` are the two transports (`http/` also holds the guards and the 2026
//! envelope checks both use), `status/` the page at `/`, `answer/` how a request is answered for
//! every transport, `proxy/` the shared state and every method of `Proxy`, `relay/` what goes back
//! to clients beside answers (sessions, SSE, progress, logs, subscriptions, streams), and at the
//! ground `working_set.rs` the file watcher and `give_back.rs`, memory given back once quiet. Must
//! not talk to the upstream except through `upstream::Upstream`.
//!
//! The re-exports below keep the paths other folders, tests and the fuzz targets use.

pub mod answer;
pub mod give_back;
pub mod http;
pub mod proxy;
pub mod relay;
pub mod status;
pub mod stdio;
pub mod working_set;

pub use http::{app, guards, modern};
pub use proxy::calls::{CLIENT_CALL_ID_KEYS, STATELESS_SESSION_GAP};
pub use proxy::{Proxy, embedding, guard_call, meta_tools, tools_list};
