//! Shaping one tool result to fit a token budget: long text keeps its head and tail around a
//! marker, a JSON array (text that parses as one, or in `structuredContent`) keeps its first items
//! and says how many there are, images and other binary content pass untouched, and
//! `structuredContent` stays valid JSON (only its arrays are shortened, nothing is added to it).
//! What was cut is returned as `Piece`s for the store. Pure: tokens are counted by the function
//! handed in; must not do I/O or keep anything.

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::fit;
use super::kept::{Items, Piece};

/// Tokens reserved for each marker (the note and the paging call it spells out). Raising it
/// leaves less of the result in the shaped answer.
pub const MARKER_TOKENS: usize = 100;

/// The reserved tool name of the paging call (through `call_tool`, or called directly).
pub const PAGE_TOOL: &str = "mws_result_page";

/// A shaped result and what it cut.
pub struct Shaped {
    pub result: Value,
    /// The cut parts, in the order of their ids' `.k` suffix.
    pub pieces: Vec<Piece>,
    /// Bytes of text and structured content the client was spared.
    pub saved_bytes: usize,
    /// The values cut from a `structuredContent` array (kept as text in `pieces`): freeing
    /// thousands of small values takes milliseconds, so the caller frees them after answering.
    pub leftover: Vec<Value>,
}

/// How the markers name the kept result.
pub struct Names<'a> {
    /// The result's id (a piece is `<id>.<k>`).
    pub id: &'a str,
    /// `keepMinutes`, as the marker says it.
    pub keep_minutes: f64,
}

enum Slot {
    Content(usize),
    Structured,
}

/// The paging call a marker spells out.
pub fn page_call(id: &str, offset: usize) -> String {
    format!(
        "call_tool {{\"name\":\"{PAGE_TOOL}\",\"arguments\":{{\"id\":\"{id}\",\"offset\":{offset}}}}}"
    )
}

/// `keepMinutes` as a note says it.
pub fn minutes(m: f64) -> String {
    if m == 1.0 {
        "1 minute".into()
    } else {
        format!("{m} minutes")
    }
}

/// Where every marker's way to read on starts and ends (`not_kept` finds them).
const READ_ON: &str = "read on with call_tool {\"name\":\"mws_result_page\"";
const READ_ON_END: &str = " (kept ";
/// What a marker says instead when the result could not be kept.
const NOT_KEPT: &str =
    "the whole result is larger than config `results.memoryMb`, so it was not kept";

fn how_to_read(names: &Names, k: usize, offset: usize) -> String {
    let call = page_call(&format!("{}.{k}", names.id), offset);
    debug_assert!(format!("read on with {call}").starts_with(READ_ON));
    format!(
        "read on with {call}{READ_ON_END}{})",
        minutes(names.keep_minutes)
    )
}

/// Rewrites the markers of a shaped result that the store did not keep: each says so instead of
/// naming the paging call. Only text inside a `[mws: …]` marker is touched.
pub fn not_kept(result: &mut Value) {
    let Some(items) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return;
    };
    for item in items {
        let Some(Value::String(text)) = item.get_mut("text") else {
            continue;
        };
        let mut out = String::with_capacity(text.len());
        let mut rest = text.as_str();
        while let Some(m) = rest.find("[mws: ") {
            let (before, marker) = rest.split_at(m);
            out.push_str(before);
            let end = marker.find(']').map_or(marker.len(), |e| e + 1);
            let (marker, after) = marker.split_at(end);
            match (marker.find(READ_ON), marker.rfind(READ_ON_END)) {
                (Some(a), Some(b)) if a < b => {
                    out.push_str(&marker[..a]);
                    out.push_str(NOT_KEPT);
                    let close = marker[b..].find(')').map_or(marker.len(), |c| b + c + 1);
                    out.push_str(&marker[close..]);
                }
                _ => out.push_str(marker),
            }
            rest = after;
        }
        out.push_str(rest);
        *text = out;
    }
}

/// The text of a text content item, if it is one.
fn item_text(item: &Value) -> Option<&str> {
    (item.get("type")? == "text").then(|| item.get("text")?.as_str())?
}

/// How long a sample of a part's text is counted before its tokens are estimated from it.
/// Raising it counts more of a big result before deciding it is over the limit.
const SAMPLE_BYTES: usize = 16 * 1024;
/// A part whose tokens, estimated from its sample, pass this many times what is left of the
/// limit is taken as over without being counted in full. Raising it counts more results in full.
const SURE_OVER: usize = 2;

/// The first `max` bytes of `v`'s compact JSON (all of it when shorter).
fn json_head(v: &Value, max: usize) -> String {
    struct Capped(Vec<u8>, usize);
    impl std::io::Write for Capped {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            if self.0.len() >= self.1 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            self.0.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut w = Capped(Vec::new(), max);
    let _ = serde_json::to_writer(&mut w, v);
    let mut bytes = w.0;
    loop {
        match String::from_utf8(bytes) {
            Ok(s) => return s,
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                bytes = e.into_bytes();
                bytes.truncate(valid);
            }
        }
    }
}

/// Whether the parts (a sample of each, with its full size in bytes; `full` gives a part's
/// whole text) pass `max_tokens`, and the bytes per token measured on the first sample (the
/// cuts' first guess).
fn over_limit(
    parts: &[(String, usize)],
    full: &dyn Fn(usize) -> String,
    max_tokens: usize,
    count: &dyn Fn(&str) -> usize,
) -> (bool, f64) {
    let mut total = 0;
    let mut guess = None;
    for (i, (sample, len)) in parts.iter().enumerate() {
        let left = max_tokens + 1 - total;
        let mut t = fit::count_upto(sample, left, count);
        if guess.is_none() && t > 0 {
            guess = Some(sample.len() as f64 / t as f64);
        }
        if t < left && sample.len() < *len {
            // A sample of a longer part: far over by its density is over; else count it all.
            if t.saturating_mul(*len) / sample.len().max(1) > left.saturating_mul(SURE_OVER) {
                return (true, guess.unwrap_or(fit::DEFAULT_GUESS));
            }
            t = fit::count_upto(&full(i), left, count);
        }
        if t >= left {
            return (true, guess.unwrap_or(fit::DEFAULT_GUESS));
        }
        total += t;
    }
    (false, fit::DEFAULT_GUESS)
}

/// `result` shaped to `max_tokens` if it is over (`count` counts tokens), else `Err` with it
/// untouched.
pub fn shape(
    mut out: Value,
    max_tokens: usize,
    names: &Names,
    count: &dyn Fn(&str) -> usize,
) -> Result<Shaped, Value> {
    let mut slots: Vec<(Slot, usize)> = Vec::new();
    if let Some(items) = out.get("content").and_then(Value::as_array) {
        for (i, item) in items.iter().enumerate() {
            if let Some(t) = item_text(item) {
                slots.push((Slot::Content(i), t.len()));
            }
        }
    }
    let mut prepared = None;
    if let Some(s) = out.get_mut("structuredContent").filter(|v| !v.is_null()) {
        let (len, array) = measure_structured(s);
        prepared = array;
        slots.push((Slot::Structured, len));
    }
    // Tokens never outnumber bytes: under the limit in bytes is under it in tokens, uncounted.
    let bytes: usize = slots.iter().map(|(_, b)| b).sum();
    if bytes <= max_tokens {
        return Err(out);
    }
    let sample = |out: &Value, slot: &Slot, max: usize| -> String {
        match slot {
            Slot::Content(i) => {
                let t = item_text(&out["content"][*i]).unwrap_or("");
                t[..fit::floor(t, max)].to_string()
            }
            Slot::Structured => json_head(&out["structuredContent"], max),
        }
    };
    let parts: Vec<(String, usize)> = slots
        .iter()
        .map(|(slot, b)| (sample(&out, slot, SAMPLE_BYTES), *b))
        .collect();
    let whole = |i: usize| sample(&out, &slots[i].0, usize::MAX);
    let (over, guess) = over_limit(&parts, &whole, max_tokens, count);
    if !over {
        return Err(out);
    }
    slots.sort_by_key(|(_, b)| *b);
    let mut budget = max_tokens;
    let mut pieces = Vec::new();
    let mut notes: Vec<(usize, String)> = Vec::new();
    let mut saved = 0;
    let mut leftover = Vec::new();
    let n = slots.len();
    for (done, (slot, b)) in slots.iter().enumerate() {
        let share = budget / (n - done);
        if *b <= share {
            budget -= count(&sample(&out, slot, *b)).min(budget);
            continue;
        }
        let room = share.saturating_sub(MARKER_TOKENS).max(1);
        budget -= share;
        let k = pieces.len();
        match slot {
            Slot::Content(i) => {
                let text = match out["content"][*i]["text"].take() {
                    Value::String(t) => t,
                    _ => String::new(),
                };
                let (kept, note, piece) = cut_text(text, room, guess, names, k, count);
                saved += b.saturating_sub(kept.len());
                out["content"][*i]["text"] = Value::String(kept);
                pieces.push(piece);
                if let Some(note) = note {
                    notes.push((*i, note));
                }
            }
            Slot::Structured => {
                let cut = Cut {
                    room,
                    guess,
                    names,
                    k,
                    count,
                };
                let Some(array) = prepared.take() else {
                    continue;
                };
                let Some((note, cut_bytes, tail)) = cut_structured(&mut out, *b, array, &cut)
                else {
                    continue;
                };
                pieces.push(Piece::Array(tail.1));
                leftover = tail.0;
                saved += cut_bytes;
                notes.push((usize::MAX, note));
            }
        }
    }
    if pieces.is_empty() {
        return Err(out);
    }
    insert_notes(&mut out, notes);
    Ok(Shaped {
        result: out,
        pieces,
        saved_bytes: saved,
        leftover,
    })
}

/// Adds each note as a text item after the item it is about (`usize::MAX`: at the end).
fn insert_notes(out: &mut Value, mut notes: Vec<(usize, String)>) {
    notes.sort_by_key(|(i, _)| std::cmp::Reverse(*i));
    let obj = out.as_object_mut().expect("a shaped result is an object");
    let content = obj
        .entry("content")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Some(items) = content.as_array_mut() {
        for (i, note) in notes {
            let at = if i == usize::MAX { items.len() } else { i + 1 };
            items.insert(at, json!({"type": "text", "text": note}));
        }
    }
}

/// A text item cut to `room` tokens: a JSON array keeps its first items (and a note goes in an
/// item of its own, so the text stays valid JSON); other text keeps head and tail around the note.
fn cut_text(
    text: String,
    room: usize,
    guess: f64,
    names: &Names,
    k: usize,
    count: &dyn Fn(&str) -> usize,
) -> (String, Option<String>, Piece) {
    if text.trim_start().starts_with('[')
        && let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(&text)
    {
        let items = Items::from_texts(items.iter().map(|r| r.get()));
        let shown = fit::items(&items, 0, room, guess, count);
        let kept = items.array(0, shown);
        let note = format!(
            "[mws: this JSON array has {} items; the first {shown} are above; {}]",
            items.len(),
            how_to_read(names, k, shown)
        );
        return (kept, Some(note), Piece::Array(items));
    }
    let head = fit::prefix(&text, room / 2, guess, count);
    let tail_start = fit::suffix_start(&text, room - room / 2, guess, count).max(head);
    let note = format!(
        "\n\n[mws: {} bytes cut here (bytes {head} to {tail_start} of {}); {}]\n\n",
        tail_start - head,
        text.len(),
        how_to_read(names, k, head)
    );
    let kept = format!("{}{note}{}", &text[..head], &text[tail_start..]);
    (kept, None, Piece::Text(text))
}

/// What a cut is given: room in tokens, the first guess of bytes per token, the names and index
/// of its piece, the token counter.
struct Cut<'a> {
    room: usize,
    guess: f64,
    names: &'a Names<'a>,
    k: usize,
    count: &'a dyn Fn(&str) -> usize,
}

/// The values cut from an array, and the whole array as text for the store.
type Tail = (Vec<Value>, Items);

/// Where the array to cut is in `structuredContent`: itself (`None`) or the member named.
type ArrayKey = Option<String>;

fn array_key(sc: &Value) -> Option<ArrayKey> {
    match sc {
        Value::Array(_) => Some(None),
        Value::Object(o) => Some(Some(largest_array(o)?)),
        _ => None,
    }
}

fn array_at<'a>(sc: &'a mut Value, key: &ArrayKey) -> Option<&'a mut Vec<Value>> {
    match key {
        None => sc.as_array_mut(),
        Some(k) => sc.get_mut(k)?.as_array_mut(),
    }
}

/// `structuredContent`'s length as compact JSON, and the array a cut would shorten with its
/// items written out (once: the length is the rest's plus the items').
fn measure_structured(sc: &mut Value) -> (usize, Option<(ArrayKey, Items)>) {
    let Some(key) = array_key(sc) else {
        return (crate::mcp::json_len(sc), None);
    };
    let Some(array) = array_at(sc, &key) else {
        return (crate::mcp::json_len(sc), None);
    };
    let items = Items::from_values(array);
    let taken = std::mem::take(array);
    // With the array emptied: the rest, and `[]`.
    let rest = crate::mcp::json_len(sc);
    if let Some(array) = array_at(sc, &key) {
        *array = taken;
    }
    let len = rest - 2 + items.array_len(0, items.len());
    (len, Some((key, items)))
}

/// `structuredContent` (`whole` bytes of compact JSON) with its array (`key`, its `items` as
/// `measure_structured` wrote them) cut to `room` tokens: the note for a content item, the bytes
/// cut, and the cut values with the array's items; only the kept items are counted.
fn cut_structured(
    out: &mut Value,
    whole: usize,
    (key, items): (ArrayKey, Items),
    cut: &Cut,
) -> Option<(String, usize, Tail)> {
    let array = array_at(out.get_mut("structuredContent")?, &key)?;
    let path = key.map_or(String::new(), |k| format!(".{k}"));
    let total = items.len();
    let array_bytes = items.array_len(0, total);
    // The rest of the object, in bytes (never fewer than its tokens).
    let rest = cut
        .room
        .saturating_sub(whole.saturating_sub(array_bytes))
        .max(1);
    let shown = fit::items(&items, 0, rest, cut.guess, cut.count);
    let cut_bytes = array_bytes - items.array_len(0, shown);
    let tail = array.split_off(shown);
    Some((
        format!(
            "[mws: structuredContent{path} has {total} items; the first {shown} are kept; {}]",
            how_to_read(cut.names, cut.k, shown)
        ),
        cut_bytes,
        (tail, items),
    ))
}

/// The array member with the most bytes (only measured when there are several).
fn largest_array(o: &Map<String, Value>) -> Option<String> {
    let mut arrays = o.iter().filter(|(_, v)| v.is_array());
    let first = arrays.next()?;
    match arrays.next() {
        None => Some(first.0.clone()),
        Some(_) => o
            .iter()
            .filter(|(_, v)| v.is_array())
            .max_by_key(|(_, v)| crate::mcp::json_len(v))
            .map(|(k, _)| k.clone()),
    }
}
