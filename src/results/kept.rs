//! What is kept of shaped results: their full text, in memory only (never on disk). Each entry
//! lives `results.keepMinutes`, and the whole store stays under `results.memoryMb`, the least
//! recently used entry evicted first. A gone entry leaves a small tombstone so the paging call can
//! say why it is gone. Each entry belongs to one owner (the caller that got the result): to anyone
//! else it, and its tombstone, do not exist. Time is a parameter (`now`, monotonic). Must not do
//! I/O or log what it holds.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Tombstones kept of gone results, to tell "expired" and "evicted" from "never existed".
/// Raising it remembers why more results are gone, at a few dozen bytes each.
const TOMBSTONES: usize = 1024;

/// What a shaped result keeps for paging: one entry per cut part.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// A text content item, whole.
    Text(String),
    /// A JSON array, item by item.
    Array(Items),
}

impl Piece {
    /// Bytes it holds (the store's measure of memory).
    pub fn bytes(&self) -> usize {
        match self {
            Piece::Text(t) => t.len(),
            Piece::Array(items) => items.bytes(),
        }
    }
}

/// The items of a JSON array as one text, their JSON texts joined by commas, and where each
/// ends: one allocation however many items, and any run of items is one slice of it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Items {
    text: String,
    ends: Vec<usize>,
}

impl Items {
    /// Items from their JSON texts (kept byte for byte).
    pub fn from_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> Items {
        let mut items = Items::default();
        for t in texts {
            if !items.ends.is_empty() {
                items.text.push(',');
            }
            items.text.push_str(t);
            items.ends.push(items.text.len());
        }
        items
    }

    /// Items from values, each as its compact JSON (what `Value::to_string` gives), written
    /// into one buffer.
    pub fn from_values(values: &[serde_json::Value]) -> Items {
        let mut buf = Vec::new();
        let mut ends = Vec::with_capacity(values.len());
        for v in values {
            if !ends.is_empty() {
                buf.push(b',');
            }
            serde_json::to_writer(&mut buf, v).expect("a Value always serializes");
            ends.push(buf.len());
        }
        let text = String::from_utf8(buf).expect("serde_json writes UTF-8");
        Items { text, ends }
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn start(&self, i: usize) -> usize {
        if i == 0 { 0 } else { self.ends[i - 1] + 1 }
    }

    /// Bytes of items `from..to` as a JSON array.
    pub fn array_len(&self, from: usize, to: usize) -> usize {
        if from >= to {
            2
        } else {
            self.ends[to - 1] - self.start(from) + 2
        }
    }

    /// Items `from..to` as a JSON array.
    pub fn array(&self, from: usize, to: usize) -> String {
        if from >= to {
            return "[]".into();
        }
        format!("[{}]", &self.text[self.start(from)..self.ends[to - 1]])
    }

    fn bytes(&self) -> usize {
        self.text.len() + self.ends.len() * std::mem::size_of::<usize>()
    }
}

/// Why a result id finds nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    Expired,
    Evicted,
    Unknown,
}

struct Entry {
    owner: String,
    pieces: Arc<Vec<Piece>>,
    bytes: usize,
    expires: Instant,
    used: u64,
}

/// The kept results by id.
pub struct Kept {
    entries: HashMap<String, Entry>,
    /// Gone ids with their owner and why.
    gone: VecDeque<(String, String, Gone)>,
    used_bytes: usize,
    cap: usize,
    keep: Duration,
    tick: u64,
}

impl Kept {
    pub fn new(cap: usize, keep: Duration) -> Kept {
        Kept {
            entries: HashMap::new(),
            gone: VecDeque::new(),
            used_bytes: 0,
            cap,
            keep,
            tick: 0,
        }
    }

    /// Bytes held now.
    pub fn used_bytes(&self) -> usize {
        self.used_bytes
    }

    /// Keeps `pieces` under `id` for `owner`, evicting the least recently used entries to stay
    /// under the cap. False (nothing kept) when they alone are over the cap.
    pub fn put(&mut self, id: String, owner: &str, pieces: Vec<Piece>, now: Instant) -> bool {
        self.expire(now);
        let bytes: usize = pieces.iter().map(Piece::bytes).sum::<usize>() + id.len() + owner.len();
        if bytes > self.cap {
            return false;
        }
        while self.used_bytes + bytes > self.cap {
            let Some(oldest) = self
                .entries
                .iter()
                .min_by_key(|(_, e)| e.used)
                .map(|(k, _)| k.clone())
            else {
                break;
            };
            self.remove(&oldest, Gone::Evicted);
        }
        self.tick += 1;
        self.used_bytes += bytes;
        self.entries.insert(
            id,
            Entry {
                owner: owner.to_string(),
                pieces: Arc::new(pieces),
                bytes,
                expires: now + self.keep,
                used: self.tick,
            },
        );
        true
    }

    /// The pieces kept under `id` for `owner` (marked used), or why there are none. Another
    /// owner's entry is `Unknown`, whether it is kept or gone.
    pub fn get(&mut self, id: &str, owner: &str, now: Instant) -> Result<Arc<Vec<Piece>>, Gone> {
        self.expire(now);
        self.tick += 1;
        match self.entries.get_mut(id) {
            Some(e) if e.owner == owner => {
                e.used = self.tick;
                Ok(e.pieces.clone())
            }
            Some(_) => Err(Gone::Unknown),
            None => Err(self
                .gone
                .iter()
                .find(|(k, o, _)| k == id && o == owner)
                .map_or(Gone::Unknown, |(_, _, g)| *g)),
        }
    }

    fn expire(&mut self, now: Instant) {
        let old: Vec<String> = self
            .entries
            .iter()
            .filter(|(_, e)| e.expires <= now)
            .map(|(k, _)| k.clone())
            .collect();
        for k in old {
            self.remove(&k, Gone::Expired);
        }
    }

    fn remove(&mut self, id: &str, why: Gone) {
        if let Some(e) = self.entries.remove(id) {
            self.used_bytes -= e.bytes;
            if self.gone.len() == TOMBSTONES {
                self.gone.pop_front();
            }
            self.gone.push_back((id.to_string(), e.owner, why));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(n: usize) -> Vec<Piece> {
        vec![Piece::Text("x".repeat(n))]
    }

    #[test]
    fn expiry_eviction_and_the_cap() {
        let t0 = Instant::now();
        let mut s = Kept::new(1000, Duration::from_secs(60));
        assert!(s.put("a".into(), "o", text(400), t0));
        assert!(s.put("b".into(), "o", text(400), t0));
        // `a` used last: `b` is the one evicted.
        assert!(s.get("a", "o", t0).is_ok());
        assert!(s.put("c".into(), "o", text(400), t0));
        assert_eq!(s.get("b", "o", t0).unwrap_err(), Gone::Evicted);
        assert!(s.used_bytes() <= 1000);
        assert!(!s.put("huge".into(), "o", text(2000), t0));
        assert_eq!(s.get("huge", "o", t0).unwrap_err(), Gone::Unknown);
        let later = t0 + Duration::from_secs(61);
        assert_eq!(s.get("a", "o", later).unwrap_err(), Gone::Expired);
        assert_eq!(s.used_bytes(), 0);
        assert_eq!(s.get("zzz", "o", later).unwrap_err(), Gone::Unknown);
    }

    #[test]
    fn another_owner_finds_neither_the_entry_nor_its_tombstone() {
        let t0 = Instant::now();
        let mut s = Kept::new(1000, Duration::from_secs(60));
        assert!(s.put("a".into(), "mine", text(10), t0));
        assert_eq!(s.get("a", "theirs", t0).unwrap_err(), Gone::Unknown);
        assert!(s.get("a", "mine", t0).is_ok());
        let later = t0 + Duration::from_secs(61);
        assert_eq!(s.get("a", "theirs", later).unwrap_err(), Gone::Unknown);
        assert_eq!(s.get("a", "mine", later).unwrap_err(), Gone::Expired);
    }
}
