//! mcp-working-set: an MCP proxy that lists only the tools a user actually uses.
//!
//! The code map and the invariants are in ARCHITECTURE.md.

pub mod auth;
pub mod call;
pub mod catalog;
pub mod cli;
pub mod clock;
pub mod cmd;
pub mod config;
pub mod demo;
pub mod doctor;
pub mod embed;
pub mod ingest;
pub mod listed;
pub mod mcp;
pub mod policy;
pub mod private_file;
pub mod probe;
pub mod promote;
pub mod report;
pub mod results;
pub mod search;
pub mod server;
pub mod setup;
pub mod store;
pub mod team;
pub mod term;
pub mod upstream;
pub mod whatif;
