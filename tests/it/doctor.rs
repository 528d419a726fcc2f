//! `mws doctor`: each problem a user can have, and the line that tells them what to do.

/// A loopback port that nothing listens on (bound, then released).
pub fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}
