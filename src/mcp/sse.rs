//! Server-Sent Events framing for Streamable HTTP, both ways: `encode` writes one event, `Decoder`
//! turns a byte stream (split anywhere, even inside a UTF-8 sequence or a CRLF) back into events.
//! Must not do I/O or look inside `data`.

/// One dispatched event. `event` is `None` for the default type (`message`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Event {
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
    pub retry: Option<u64>,
}

/// Writes one event: `event:` / `id:` lines when given, one `data:` line per line of `data`, and
/// the blank line that dispatches it.
pub fn encode(event: Option<&str>, id: Option<&str>, data: &str) -> String {
    let mut out = String::with_capacity(data.len() + 32);
    if let Some(e) = event {
        out.push_str("event: ");
        out.push_str(e);
        out.push('\n');
    }
    if let Some(i) = id {
        out.push_str("id: ");
        out.push_str(i);
        out.push('\n');
    }
    for line in data.split('\n') {
        out.push_str("data: ");
        out.push_str(line.strip_suffix('\r').unwrap_or(line));
        out.push('\n');
    }
    out.push('\n');
    out
}

/// A `message` event carrying one JSON-RPC message.
pub fn encode_message(msg: &serde_json::Value) -> String {
    encode(Some("message"), None, &msg.to_string())
}

/// A keep-alive comment line (ignored by decoders).
pub const KEEP_ALIVE: &str = ": keep-alive\n\n";

/// Incremental decoder (the WHATWG event-stream parsing rules, minus reconnection).
#[derive(Debug, Default)]
pub struct Decoder {
    /// Bytes not yet ending in a line terminator.
    pending: Vec<u8>,
    /// The last byte fed was a CR: a following LF belongs to the same terminator.
    after_cr: bool,
    event: Option<String>,
    data: String,
    has_data: bool,
    id: Option<String>,
    retry: Option<u64>,
    /// The id as of the last complete event (priming events included): where a resumed stream
    /// starts again.
    last_event_id: Option<String>,
}

impl Decoder {
    pub fn new() -> Decoder {
        Decoder::default()
    }

    /// The last event ID of the stream so far (set when an event completes, even a priming one
    /// that is not delivered), for a `Last-Event-ID` on reconnection.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref()
    }

    /// The reconnection time the stream asked for with `retry:`, in milliseconds.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// Bytes held for the event being assembled (its data and the unfinished line), for callers
    /// that cap what one event may take.
    pub fn buffered(&self) -> usize {
        self.pending.len() + self.data.len()
    }

    /// Feeds a chunk; returns the events it completed, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        for &b in chunk {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.pending);
                    if let Some(ev) = self.line(&line) {
                        out.push(ev);
                    }
                }
                _ => self.pending.push(b),
            }
        }
        out
    }

    /// Ends the stream: an event without its final blank line is dropped, as the rules say.
    pub fn finish(&mut self) -> bool {
        let partial = !self.pending.is_empty() || self.has_data;
        *self = Decoder::default();
        partial
    }

    fn line(&mut self, raw: &[u8]) -> Option<Event> {
        if raw.is_empty() {
            return self.dispatch();
        }
        let line = String::from_utf8_lossy(raw);
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (&line[..], ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.id = Some(value.to_string()),
            "retry" => {
                if let Ok(ms) = value.parse() {
                    self.retry = Some(ms);
                }
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<Event> {
        let event = self.event.take();
        self.last_event_id.clone_from(&self.id);
        if !self.has_data {
            // A priming event (id and no data) sets the last id but is not delivered.
            return None;
        }
        self.has_data = false;
        Some(Event {
            event: event.filter(|e| !e.is_empty()),
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
            retry: self.retry,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(input: &str, piece: usize) -> Vec<Event> {
        let mut d = Decoder::new();
        let mut out = Vec::new();
        for chunk in input.as_bytes().chunks(piece) {
            out.extend(d.feed(chunk));
        }
        out
    }

    fn ev(event: Option<&str>, data: &str, id: Option<&str>) -> Event {
        Event {
            event: event.map(str::to_string),
            data: data.to_string(),
            id: id.map(str::to_string),
            retry: None,
        }
    }

    #[test]
    fn cases_decode_the_same_at_every_split() {
        let cases: &[(&str, Vec<Event>)] = &[
            ("data: a\n\n", vec![ev(None, "a", None)]),
            (
                "event: message\ndata: {\"x\":1}\n\n",
                vec![ev(Some("message"), "{\"x\":1}", None)],
            ),
            ("data: one\ndata: two\n\n", vec![ev(None, "one\ntwo", None)]),
            ("data:nospace\r\n\r\n", vec![ev(None, "nospace", None)]),
            (
                "data: cr\r\rdata: lf\n\n",
                vec![ev(None, "cr", None), ev(None, "lf", None)],
            ),
            (": comment\n\ndata: x\n\n", vec![ev(None, "x", None)]),
            // a priming event (id + empty data) is delivered with empty data; callers skip it
            ("id: 7\ndata\n\n", vec![ev(None, "", Some("7"))]),
            // an event with no data line at all is not delivered; its id carries over
            (
                "id: p1\n\nevent: message\ndata: héllo ✓\n\n",
                vec![ev(Some("message"), "héllo ✓", Some("p1"))],
            ),
            ("data: unterminated", vec![]),
            ("unknown: field\ndata: y\n\n", vec![ev(None, "y", None)]),
        ];
        for (input, want) in cases {
            for piece in 1..=input.len().max(1) {
                assert_eq!(
                    &decode_in_pieces(input, piece),
                    want,
                    "input {input:?} piece {piece}"
                );
            }
        }
    }

    #[test]
    fn last_event_id_counts_complete_events_only() {
        let mut d = Decoder::new();
        assert!(d.feed(b"id: p1\nretry: 500\n\n").is_empty());
        assert_eq!((d.last_event_id(), d.retry()), (Some("p1"), Some(500)));
        // An event cut after its id line does not move the last id.
        assert!(d.feed(b"id: p2\ndata: {").is_empty());
        assert_eq!(d.last_event_id(), Some("p1"));
        assert_eq!(d.feed(b"}\n\n")[0].id.as_deref(), Some("p2"));
        assert_eq!(d.last_event_id(), Some("p2"));
    }

    #[test]
    fn retry_is_read() {
        let mut d = Decoder::new();
        let got = d.feed(b"retry: 3000\ndata: r\n\n");
        assert_eq!(got[0].retry, Some(3000));
    }

    #[test]
    fn encode_round_trips() {
        for data in ["{\"a\":1}", "two\nlines", "", "trailing\r"] {
            let text = encode(Some("message"), Some("9"), data);
            let got = Decoder::new().feed(text.as_bytes());
            let want = data.strip_suffix('\r').unwrap_or(data);
            assert_eq!(got, vec![ev(Some("message"), want, Some("9"))], "{data:?}");
        }
        assert!(Decoder::new().feed(KEEP_ALIVE.as_bytes()).is_empty());
    }
}
