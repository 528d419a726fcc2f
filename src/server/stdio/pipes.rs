//! The process's stdin and stdout for `serve --stdio`: when they are pipes (as every MCP client
//! starts its servers), non-blocking pipes on the runtime's own event loop, so a message in or out
//! costs no hop through tokio's blocking-thread pool (which `tokio::io::stdin`/`stdout` take for
//! every read and write). Anything else (a file, a terminal) falls back to those. Must not read
//! or write anything itself.

use std::os::fd::AsFd;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::unix::pipe;

/// Stdin as an async reader.
pub fn stdin() -> Box<dyn AsyncRead + Unpin + Send> {
    let pipe = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .and_then(|fd| pipe::Receiver::from_file(std::fs::File::from(fd)).ok());
    match pipe {
        Some(p) => Box::new(p),
        None => Box::new(tokio::io::stdin()),
    }
}

/// Stdout as an async writer.
pub fn stdout() -> Box<dyn AsyncWrite + Unpin + Send> {
    let pipe = std::io::stdout()
        .as_fd()
        .try_clone_to_owned()
        .ok()
        .and_then(|fd| pipe::Sender::from_file(std::fs::File::from(fd)).ok());
    match pipe {
        Some(p) => Box::new(p),
        None => Box::new(tokio::io::stdout()),
    }
}
