//! How much of a text, or how many items of an array, fit a token budget: guessed from bytes,
//! then counted, shrunk and counted again, with a byte fallback that always fits (a token is at
//! least one byte). Counting only what is kept keeps shaping a 1 MB result cheap. Pure: tokens are
//! counted by the function handed in.

use super::kept::Items;

/// Bytes per token first guessed for text when none was measured: most text runs 3 to 5.
/// Raising it guesses longer cuts (more recounts when they are over).
pub const DEFAULT_GUESS: f64 = 4.0;
/// Share of a measured bytes-per-token guess a first cut takes, so that it usually fits at once.
/// Raising it keeps more text but recounts more often.
const GUESS_MARGIN: f64 = 0.95;

/// Bytes that `budget` tokens take at `guess` bytes per token (with the margin).
fn guessed(budget: usize, guess: f64) -> usize {
    (budget as f64 * guess.clamp(1.0, 64.0) * GUESS_MARGIN) as usize
}
/// Recounts before falling back to one byte per token. Raising it keeps cuts closer to the
/// budget at the cost of more counting.
const ROUNDS: usize = 4;
/// Counting a long text stops at a budget in chunks of this many bytes. Raising it counts fewer,
/// larger chunks (chunk edges can split a token, which only ever overcounts).
const COUNT_CHUNK: usize = 16 * 1024;
/// A cut moves back to a line end found within this share of its length (1/n).
const LINE_SNAP: usize = 8;

/// Tokens of `text`, counted chunk by chunk until more than `limit`.
pub fn count_upto(text: &str, limit: usize, count: &dyn Fn(&str) -> usize) -> usize {
    let mut total = 0;
    let mut at = 0;
    while at < text.len() && total <= limit {
        let end = floor(text, at + COUNT_CHUNK);
        let end = if end <= at { ceil(text, at + 1) } else { end };
        total += count(&text[at..end]);
        at = end;
    }
    total
}

/// The largest char boundary at or before `i`.
pub fn floor(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil(text: &str, i: usize) -> usize {
    let mut i = i.min(text.len());
    while !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The end of the longest head of `text` (found as above) within `budget` tokens, moved back to
/// a line end when one is near.
pub fn prefix(text: &str, budget: usize, guess: f64, count: &dyn Fn(&str) -> usize) -> usize {
    let mut end = floor(text, guessed(budget, guess));
    let mut fits = false;
    for _ in 0..ROUNDS {
        let t = count(&text[..end]);
        if t <= budget {
            fits = true;
            break;
        }
        end = floor(text, end * budget / t * 9 / 10);
    }
    if !fits {
        end = floor(text, budget);
    }
    match text[..end].rfind('\n') {
        Some(nl) if nl + 1 >= end - end / LINE_SNAP && end < text.len() => nl + 1,
        _ => end,
    }
}

/// The start of the longest tail of `text` within `budget` tokens, moved on to a line start when
/// one is near.
pub fn suffix_start(text: &str, budget: usize, guess: f64, count: &dyn Fn(&str) -> usize) -> usize {
    let len = text.len();
    let mut start = ceil(text, len.saturating_sub(guessed(budget, guess)));
    let mut fits = false;
    for _ in 0..ROUNDS {
        let t = count(&text[start..]);
        if t <= budget {
            fits = true;
            break;
        }
        let keep = (len - start) * budget / t * 9 / 10;
        start = ceil(text, len - keep);
    }
    if !fits {
        start = ceil(text, len.saturating_sub(budget));
    }
    let tail = len - start;
    match text[start..].find('\n') {
        Some(nl) if nl < tail / LINE_SNAP && start > 0 => start + nl + 1,
        _ => start,
    }
}

/// How many of `items` from `from` on, as a JSON array, fit `budget` tokens.
pub fn items(
    items: &Items,
    from: usize,
    budget: usize,
    guess: f64,
    count: &dyn Fn(&str) -> usize,
) -> usize {
    let left = items.len().saturating_sub(from);
    let by_bytes = |cap: usize| {
        // The longest run within `cap` bytes (its length grows with the run).
        let (mut lo, mut hi) = (0, left);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            if items.array_len(from, from + mid) <= cap {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        lo
    };
    // Tokens never outnumber bytes: a run within the budget in bytes fits uncounted.
    let sure = by_bytes(budget);
    if sure == left {
        return left;
    }
    let mut k = by_bytes(guessed(budget, guess));
    for _ in 0..ROUNDS {
        if k <= sure {
            return sure;
        }
        let t = count(&items.array(from, from + k));
        if t <= budget {
            return k;
        }
        k = k * budget / t * 9 / 10;
    }
    sure
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One token per 3 bytes, rounded up: a stand-in tokenizer with a known answer.
    fn thirds(s: &str) -> usize {
        s.len().div_ceil(3)
    }

    #[test]
    fn cuts_fit_their_budget() {
        let text = "line of text\n".repeat(1000);
        let end = prefix(&text, 100, DEFAULT_GUESS, &thirds);
        assert!(thirds(&text[..end]) <= 100);
        assert!(end > 250, "{end}");
        assert!(text[..end].ends_with('\n'));
        let start = suffix_start(&text, 100, 3.0, &thirds);
        assert!(thirds(&text[start..]) <= 100);
        assert!(text[..start].ends_with('\n'));
        let texts: Vec<String> = (0..1000).map(|i| i.to_string()).collect();
        let items = Items::from_texts(texts.iter().map(String::as_str));
        let k = items_fit(&items);
        assert!(k > 50 && k < 1000, "{k}");
        assert!(count_upto(&"é".repeat(100_000), 50, &thirds) > 50);
        assert_eq!(count_upto("abc", 50, &thirds), 1);
    }

    fn items_fit(list: &Items) -> usize {
        let k = items(list, 0, 100, DEFAULT_GUESS, &thirds);
        assert!(thirds(&list.array(0, k)) <= 100);
        let from = items(list, 990, 100, DEFAULT_GUESS, &thirds);
        assert_eq!(from, 10, "the last ten fit");
        k
    }
}
