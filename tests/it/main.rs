//! The one integration-test binary: runs the built `mws` and real peers against each other on
//! loopback. One module per area; shared helpers in `support`.

mod cli;
mod e2e;
mod demo;
mod support;
mod upstream;
