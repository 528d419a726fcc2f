//! What goes back to clients beside the answers: the 2025 sessions (`sessions.rs`), SSE framing
//! (`sse.rs`), the progress and log relays (`progress.rs`, `logs.rs`), resource subscriptions
//! (`subscriptions.rs`) and the long-lived notification streams (`streams.rs`). Must not know
//! about `Proxy`: the answer path and the transports hand these what they need.

pub mod logs;
pub mod progress;
pub mod sessions;
pub mod sse;
pub mod streams;
pub mod subscriptions;
