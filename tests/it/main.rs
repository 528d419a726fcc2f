//! The one integration-test binary: runs the built `mws` and real peers against each other on
//! loopback. One module per area; shared helpers in `support`.

mod cli;
mod config;
mod day_one;
mod demo;
mod doctor;
mod doctor_login;
mod e2e;
mod escapes;
mod faults;
mod fleet;
mod report;
mod server;

mod history;
mod history_writers;
mod ingest;
mod layers;
mod listed;
mod login;
mod matrix;
mod projects;
mod relay;
mod retention;
mod search;
mod semantic;
mod setup;
mod setup_apply;
mod setup_tools;
mod support;
mod team;
mod tidy;
mod upstream;
mod whatif;
