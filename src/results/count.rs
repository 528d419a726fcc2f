//! Counting o200k_base tokens in little memory, for shaping big results and the report's token
//! counts. tiktoken-rs's `CoreBPE` keeps the vocabulary three times over as 200,000 small
//! allocations each (about 45 MB once loaded) and a regex per thread; this counter reads the same
//! vocabulary from two static tables that `build.rs` writes from tiktoken-rs's copy, finds tokens
//! through one 2 MB hash index, and splits text with tiktoken's own pattern (its one lookahead
//! done by hand, so the faster `regex` crate runs it) and its byte-pair merge, so its counts are
//! tiktoken's (`tests::same_counts_as_tiktoken`). Pure: counts only, keeps nothing of the text.

use std::collections::BinaryHeap;
use std::sync::OnceLock;

use regex::Regex;

/// Every token's bytes back to back, in rank order.
static BYTES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k.bytes"));
/// Where each token ends in `BYTES`, as little-endian u32s.
static ENDS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/o200k.ends"));

/// The one alternative of o200k's pattern the `regex` crate cannot run: a run of whitespace
/// followed by a non-space gives its last character to the next piece. `count` does it by hand.
const LOOKAHEAD: &str = r"\s+(?!\S)|";

/// Pieces at least this long are merged with a heap (as tiktoken does), shorter ones by scanning.
const LARGE_PIECE: usize = 100;

/// The o200k_base counter, built on first use (a few milliseconds) and shared by all threads.
pub fn o200k() -> &'static Counter {
    static COUNTER: OnceLock<Counter> = OnceLock::new();
    COUNTER.get_or_init(Counter::new)
}

pub struct Counter {
    /// Open-addressed index: rank + 1 of the token whose bytes hash here, 0 for empty.
    slots: Vec<u32>,
    regex: Regex,
}

fn end(rank: usize) -> usize {
    let at = rank * 4;
    u32::from_le_bytes([ENDS[at], ENDS[at + 1], ENDS[at + 2], ENDS[at + 3]]) as usize
}

fn token(rank: usize) -> &'static [u8] {
    let start = if rank == 0 { 0 } else { end(rank - 1) };
    &BYTES[start..end(rank)]
}

fn hash(bytes: &[u8]) -> usize {
    let mut h = bytes.len() as u64;
    for chunk in bytes.chunks(8) {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    (h ^ (h >> 29) ^ (h >> 47)) as usize
}

impl Counter {
    fn new() -> Counter {
        let n = ENDS.len() / 4;
        let size = (n * 2).next_power_of_two();
        let mut slots = vec![0u32; size];
        for rank in 0..n {
            let mut i = hash(token(rank)) & (size - 1);
            while slots[i] != 0 {
                i = (i + 1) & (size - 1);
            }
            slots[i] = rank as u32 + 1;
        }
        let pattern = tiktoken_rs::O200K_BASE_PAT_STR;
        let plain = pattern.replace(LOOKAHEAD, "");
        assert_eq!(
            plain.len() + LOOKAHEAD.len(),
            pattern.len(),
            "o200k's pattern changed"
        );
        let regex = Regex::new(&plain).expect("tiktoken's pattern compiles");
        Counter { slots, regex }
    }

    fn rank(&self, piece: &[u8]) -> Option<u32> {
        let mask = self.slots.len() - 1;
        let mut i = hash(piece) & mask;
        loop {
            let s = self.slots[i];
            if s == 0 {
                return None;
            }
            if token(s as usize - 1) == piece {
                return Some(s - 1);
            }
            i = (i + 1) & mask;
        }
    }

    fn rank_or_max(&self, piece: &[u8]) -> u32 {
        self.rank(piece).unwrap_or(u32::MAX)
    }

    /// Tokens in `text`, special-token text counted as ordinary text (as tiktoken's
    /// `encode_ordinary`).
    pub fn count(&self, text: &str) -> usize {
        let mut n = 0;
        let mut at = 0;
        while let Some(m) = self.regex.find_at(text, at) {
            let mut piece = m.as_str();
            // `\s+(?!\S)`: whitespace (not ending a line) before a non-space keeps its last
            // character for the next piece, when it has more than one.
            if m.end() < text.len()
                && !piece.ends_with(['\r', '\n'])
                && piece.chars().all(char::is_whitespace)
                && let Some((last, _)) = piece.char_indices().last()
                && last > 0
            {
                piece = &piece[..last];
            }
            at = m.start() + piece.len();
            let piece = piece.as_bytes();
            n += if self.rank(piece).is_some() {
                1
            } else if piece.len() < LARGE_PIECE {
                self.merge_small(piece)
            } else {
                self.merge_large(piece)
            };
        }
        n
    }

    /// tiktoken's `_byte_pair_merge`: the number of tokens `piece` merges into.
    fn merge_small(&self, piece: &[u8]) -> usize {
        if piece.len() < 2 {
            return piece.len();
        }
        let mut parts: Vec<(usize, u32)> = Vec::with_capacity(piece.len() + 1);
        let mut min = (u32::MAX, usize::MAX);
        for i in 0..piece.len() - 1 {
            let rank = self.rank_or_max(&piece[i..i + 2]);
            if rank < min.0 {
                min = (rank, i);
            }
            parts.push((i, rank));
        }
        parts.push((piece.len() - 1, u32::MAX));
        parts.push((piece.len(), u32::MAX));
        let get = |parts: &Vec<(usize, u32)>, i: usize| {
            if i + 3 < parts.len() {
                self.rank_or_max(&piece[parts[i].0..parts[i + 3].0])
            } else {
                u32::MAX
            }
        };
        while min.0 != u32::MAX {
            let i = min.1;
            if i > 0 {
                parts[i - 1].1 = get(&parts, i - 1);
            }
            parts[i].1 = get(&parts, i);
            parts.remove(i + 1);
            min = (u32::MAX, usize::MAX);
            for (i, &(_, rank)) in parts[..parts.len() - 1].iter().enumerate() {
                if rank < min.0 {
                    min = (rank, i);
                }
            }
        }
        parts.len() - 1
    }

    /// tiktoken's `_byte_pair_merge_large` (a heap of candidate merges), counting.
    fn merge_large(&self, piece: &[u8]) -> usize {
        struct State {
            prev: usize,
            end: usize,
            next_end: usize,
            next_rank: u32,
        }
        // Lowest rank first, then leftmost.
        let key = |rank: u32, start: usize| std::cmp::Reverse((rank, start));
        let mut state = Vec::with_capacity(piece.len());
        state.push(State {
            prev: usize::MAX,
            end: 1,
            next_end: 2,
            next_rank: u32::MAX,
        });
        let mut heap = BinaryHeap::with_capacity(piece.len());
        for i in 0..piece.len() - 1 {
            if let Some(rank) = self.rank(&piece[i..i + 2]) {
                heap.push(key(rank, i));
                state[i].next_rank = rank;
            }
            state.push(State {
                prev: i,
                end: i + 2,
                next_end: i + 3,
                next_rank: u32::MAX,
            });
        }
        let potential = |state: &mut Vec<State>,
                         heap: &mut BinaryHeap<std::cmp::Reverse<(u32, usize)>>,
                         start: usize,
                         next_end: usize| {
            state[start].next_end = next_end;
            state[start].next_rank = u32::MAX;
            if next_end <= piece.len()
                && let Some(rank) = self.rank(&piece[start..next_end])
            {
                heap.push(key(rank, start));
                state[start].next_rank = rank;
            }
        };
        while let Some(std::cmp::Reverse((rank, left))) = heap.pop() {
            if rank == u32::MAX {
                break;
            }
            if rank != state[left].next_rank {
                continue;
            }
            let right = state[left].end;
            let right_end = state[left].next_end;
            let right_next_end = state[right].next_end;
            state[left].end = right_end;
            potential(&mut state, &mut heap, left, right_next_end);
            if right_end < state.len() {
                state[right_end].prev = left;
            }
            if left > 0 {
                let prev = state[left].prev;
                potential(&mut state, &mut heap, prev, right_end);
            }
            state[right].next_rank = u32::MAX;
        }
        let mut n = 0;
        let mut i = 0;
        while i < state.len() {
            n += 1;
            i = state[i].end;
        }
        n
    }
}

#[cfg(test)]
mod tests {
    /// tiktoken-rs's own o200k_base encoder: what the counter must agree with.
    fn tiktoken(text: &str) -> usize {
        tiktoken_rs::o200k_base_singleton()
            .encode_ordinary(text)
            .len()
    }

    #[test]
    fn same_counts_as_tiktoken() {
        let long_word = "supercalifragilistic".repeat(40);
        let texts = [
            String::new(),
            "hello world".into(),
            "2026-11-29T10:00:00Z INFO request served path=/api/v1/items status=200 ms=12\n"
                .repeat(50),
            ("0123456789abcdef".repeat(4) + "\n").repeat(30),
            r#"[{"id":1,"name":"item 1","tags":["a","b"],"ok":true}]"#.repeat(20),
            "Ünïcødé text, 日本語のテキスト, emoji 🎉🎉 and <|endoftext|> literally".into(),
            format!("{long_word} {} {}", "=".repeat(500), " ".repeat(300)),
            "x\u{300}".repeat(200),
            "a  b   c\t\t d \n  e\r\n\r\n   f  \u{a0}\u{3000}g   ".repeat(20),
            "  leading and trailing  \n\n  ".into(),
            "x = [1, 2,   3]  ;  // note\n\tif (a)  {  return  b;  }\n".repeat(10),
            include_str!("shape.rs").into(),
            include_str!("../../README.md").into(),
            include_str!("fit.rs").into(),
        ];
        for t in &texts {
            assert_eq!(
                super::o200k().count(t),
                tiktoken(t),
                "{:?}",
                &t[..t.len().min(60)]
            );
        }
    }

    /// Mixed runs of whitespace, punctuation, letters, digits and marks, from a fixed seed.
    #[test]
    fn same_counts_on_mixed_text() {
        let alphabet: Vec<char> = " \t\n\r\u{a0}\u{3000}'s'LL.,:;/=-_()[]{}\"aZéÉ1234日本🎉\u{301}"
            .chars()
            .collect();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..300 {
            let text: String = (0..120)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    alphabet[(x % alphabet.len() as u64) as usize]
                })
                .collect();
            assert_eq!(super::o200k().count(&text), tiktoken(&text), "{text:?}");
        }
    }
}
