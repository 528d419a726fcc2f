//! mcp-working-set: an MCP proxy that lists only the tools a user actually uses.
//!
//! The modules from the ground up, a comment line each: a module imports only modules listed
//! above it. The code map and the invariants are in ARCHITECTURE.md.

// == The ground: shared words, the wire, the files mws owns.
// clock: the only reader of the wall clock; the stored timestamp format
pub mod clock;
// term: escapes what came from outside before it is printed
pub mod term;
// private_file: the one writer of 0600 files and 0700 directories
pub mod private_file;
// cli: the clap types: commands and flags, nothing run
pub mod cli;
// mcp: JSON-RPC and MCP wire basics for both sides
pub mod mcp;
// call: one tool call, from the adapters and the proxy to the store
pub mod call;
// project: the folder a call was made in, in its stored form
pub mod project;

// == What the upstream sent and what the user wrote.
// auth: mws as an OAuth client of a remote server
pub mod auth;
// catalog: the upstream's tool catalog as data; the names clients see
pub mod catalog;
// config: the config file
pub mod config;

// == Rules and the edges they need, each on the config alone.
// policy: which tools may be listed and run
pub mod policy;
// promote: the promotion rules: usage sums in, a working set out
pub mod promote;
// results: big results cut to a budget, their pages kept in memory
pub mod results;
// script: code mode's sandbox: a JavaScript script whose tool calls go out through a callback
pub mod script;
// embed: sentence vectors: a local model or an endpoint
pub mod embed;
// setup: `mws setup import` and `undo`: other clients' registrations
pub mod setup;
// demo: the built-in demo upstream
pub mod demo;
// upstream: the Upstream interface: one server or several, over HTTP or stdio
pub mod upstream;

// == Finding tools, keeping history, reading it back.
// probe: the catalog a one-shot command uses
pub mod probe;
// search: search_tools: tokenising, ranking, the reply
pub mod search;
// whatif: `mws what-if`: the rules replayed over recorded history
pub mod whatif;
// store: state.db: every SQL statement
pub mod store;
// listed: what is listed: the one rule every command asks
pub mod listed;
// report: `mws report` figures from rows
pub mod report;

// == Serving, and the commands on top.
// server: serving clients over stdio and HTTP, the status page
pub mod server;
// team: a team's shared history on PostgreSQL
pub mod team;
// doctor: `mws doctor`'s checks
pub mod doctor;
// ingest: transcripts into the store
pub mod ingest;
// cmd: the top-level run and one thin file per command
pub mod cmd;
