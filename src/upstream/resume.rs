//! Resuming a legacy (2025-11-25) request's SSE answer that the upstream closed before the
//! response (SEP-1699): the server may end the stream after an event with an id and a `retry:`
//! time; the client then waits that long and reconnects with GET + `Last-Event-ID`, and the
//! response arrives on the resumed stream. The budget here is a few attempts; the whole request
//! stays within `callMs` (the caller's timeout). 2026-07-28 has no resumption (closing a stream
//! cancels its request), so modern requests never resume. Pure: the wire does the I/O.

use std::time::Duration;

use crate::mcp::sse::Decoder;

/// Reconnections one request may make. Raising it lets a request ride out more stream closures;
/// each costs a GET and a `retry` wait, all inside `callMs`.
pub const MAX_RESUMES: u32 = 3;

/// The wait before reconnecting when the stream named an id but no `retry:` time. Lowering it
/// reconnects sooner to a server that did not ask for a pause.
pub const DEFAULT_RETRY: Duration = Duration::from_millis(1000);

/// Where a request's answer stream can be picked up again.
#[derive(Debug, Default)]
pub struct Resume {
    last_event_id: Option<String>,
    retry: Option<u64>,
    resumed: u32,
}

impl Resume {
    /// Takes the last event id and `retry:` time of a stream that just ended.
    pub fn ended(&mut self, dec: &Decoder) {
        if let Some(id) = dec.last_event_id() {
            self.last_event_id = Some(id.to_string());
        }
        if let Some(ms) = dec.retry() {
            self.retry = Some(ms);
        }
    }

    /// The `Last-Event-ID` to reconnect with and the wait before it; `None` when the stream gave
    /// no id or the attempts are spent.
    pub fn next(&mut self) -> Option<(String, Duration)> {
        let id = self.last_event_id.clone()?;
        if self.resumed >= MAX_RESUMES {
            return None;
        }
        self.resumed += 1;
        let wait = self.retry.map_or(DEFAULT_RETRY, Duration::from_millis);
        Some((id, wait))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(r: &mut Resume, stream: &[u8]) {
        let mut d = Decoder::new();
        d.feed(stream);
        r.ended(&d);
    }

    #[test]
    fn resumes_from_the_last_id_with_its_retry_a_bounded_number_of_times() {
        let mut r = Resume::default();
        ended(&mut r, b"event: message\ndata: {}\n\n");
        assert_eq!(r.next(), None, "no id: nothing to resume from");
        ended(&mut r, b"id: e1\nretry: 500\ndata: \n\n");
        assert_eq!(r.next(), Some(("e1".into(), Duration::from_millis(500))));
        // The resumed stream moves the id on and keeps the retry it does not repeat.
        ended(&mut r, b"id: e2\ndata: \n\n");
        assert_eq!(r.next(), Some(("e2".into(), Duration::from_millis(500))));
        // A stream that adds nothing resumes from where it was.
        ended(&mut r, b"");
        assert_eq!(r.next(), Some(("e2".into(), Duration::from_millis(500))));
        assert_eq!(r.next(), None, "attempts spent");
    }

    #[test]
    fn no_retry_time_waits_the_default() {
        let mut r = Resume::default();
        ended(&mut r, b"id: 7\n\n");
        assert_eq!(r.next(), Some(("7".into(), DEFAULT_RETRY)));
    }
}
