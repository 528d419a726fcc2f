//! The HTTP listener: `app.rs` is the axum app on `/mcp` (with `conn.rs`, the accept loop, and
//! `legacy_post.rs`, the 2025 session POST path), `guards.rs` the Host/Origin/body checks in
//! front of it, and `modern.rs` the 2026-07-28 envelope and header checks (`--stdio` uses them
//! too). `reply.rs` holds what both POST paths share.

pub mod app;
mod conn;
pub mod guards;
mod legacy_post;
pub mod modern;
mod reply;
mod roots;
