//! Shaping one tool result to fit a token budget: long text keeps its head and tail around a
//! marker, a JSON array (text that parses as one, or in `structuredContent`) keeps its first items
//! and says how many there are, images and other binary content pass untouched, and
//! `structuredContent` stays valid JSON (only its arrays are shortened, nothing is added to it).
//! What was cut is returned as `Piece`s for the store. Pure: tokens are counted by the function
//! handed in; must not do I/O or keep anything.

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::fit;
use super::store::Piece;

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
}

/// How the markers name the kept result.
pub struct Names<'a> {
    /// The result's id (a piece is `<id>.<k>`).
    pub id: &'a str,
    /// `keepMinutes`, as the marker says it.
    pub keep_minutes: f64,
    /// Whether the pieces will be kept (false: larger than the store's cap).
    pub kept: bool,
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

fn how_to_read(names: &Names, k: usize, offset: usize) -> String {
    if names.kept {
        format!(
            "read on with {} (kept {})",
            page_call(&format!("{}.{k}", names.id), offset),
            minutes(names.keep_minutes)
        )
    } else {
        "the whole result is larger than config `results.memoryMb`, so it was not kept".into()
    }
}

/// The text of a text content item, if it is one.
fn item_text(item: &Value) -> Option<&str> {
    (item.get("type")? == "text").then(|| item.get("text")?.as_str())?
}

/// `result` shaped to `max_tokens` if it is over (`count` counts tokens), else `None`.
pub fn shape(
    result: &Value,
    max_tokens: usize,
    names: &Names,
    count: &dyn Fn(&str) -> usize,
) -> Option<Shaped> {
    let mut slots: Vec<(Slot, usize)> = Vec::new();
    if let Some(items) = result.get("content").and_then(Value::as_array) {
        for (i, item) in items.iter().enumerate() {
            if let Some(t) = item_text(item) {
                slots.push((Slot::Content(i), t.len()));
            }
        }
    }
    let structured = result.get("structuredContent").filter(|v| !v.is_null());
    let structured_text = structured.map(|s| s.to_string());
    if let Some(s) = &structured_text {
        slots.push((Slot::Structured, s.len()));
    }
    // Tokens never outnumber bytes: under the limit in bytes is under it in tokens, uncounted.
    let bytes: usize = slots.iter().map(|(_, b)| b).sum();
    if bytes <= max_tokens {
        return None;
    }
    let text_of = |slot: &Slot| -> &str {
        match slot {
            Slot::Content(i) => item_text(&result["content"][*i]).unwrap_or(""),
            Slot::Structured => structured_text.as_deref().unwrap_or(""),
        }
    };
    let mut total = 0;
    for (slot, _) in &slots {
        total += fit::count_upto(text_of(slot), max_tokens + 1 - total, count);
        if total > max_tokens {
            break;
        }
    }
    if total <= max_tokens {
        return None;
    }
    slots.sort_by_key(|(_, b)| *b);
    let mut budget = max_tokens;
    let mut out = result.clone();
    let mut pieces = Vec::new();
    let mut notes: Vec<(usize, String)> = Vec::new();
    let mut saved = 0;
    let n = slots.len();
    for (done, (slot, b)) in slots.iter().enumerate() {
        let share = budget / (n - done);
        if *b <= share {
            budget -= count(text_of(slot)).min(budget);
            continue;
        }
        let room = share.saturating_sub(MARKER_TOKENS).max(1);
        budget -= share;
        let k = pieces.len();
        match slot {
            Slot::Content(i) => {
                let text = text_of(slot);
                let (kept, note, piece) = cut_text(text, room, names, k, count);
                saved += text.len().saturating_sub(kept.len());
                out["content"][*i]["text"] = Value::String(kept);
                pieces.push(piece);
                if let Some(note) = note {
                    notes.push((*i, note));
                }
            }
            Slot::Structured => {
                let before = *b;
                let Some(note) = cut_structured(&mut out, room, names, k, count, &mut pieces)
                else {
                    continue;
                };
                saved += before.saturating_sub(out["structuredContent"].to_string().len());
                notes.push((usize::MAX, note));
            }
        }
    }
    if pieces.is_empty() {
        return None;
    }
    insert_notes(&mut out, notes);
    Some(Shaped {
        result: out,
        pieces,
        saved_bytes: saved,
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
    text: &str,
    room: usize,
    names: &Names,
    k: usize,
    count: &dyn Fn(&str) -> usize,
) -> (String, Option<String>, Piece) {
    if text.trim_start().starts_with('[')
        && let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(text)
    {
        let items: Vec<Box<str>> = items.iter().map(|r| Box::from(r.get())).collect();
        let shown = fit::items(&items, room, count);
        let kept = format!("[{}]", items[..shown].join(","));
        let note = format!(
            "[mws: this JSON array has {} items; the first {shown} are above; {}]",
            items.len(),
            how_to_read(names, k, shown)
        );
        return (kept, Some(note), Piece::Array(items));
    }
    let head = fit::prefix(text, room / 2, count);
    let tail_start = fit::suffix_start(text, room - room / 2, count).max(head);
    let note = format!(
        "\n\n[mws: {} bytes cut here (bytes {head} to {tail_start} of {}); {}]\n\n",
        tail_start - head,
        text.len(),
        how_to_read(names, k, head)
    );
    let kept = format!("{}{note}{}", &text[..head], &text[tail_start..]);
    (kept, None, Piece::Text(text.to_string()))
}

/// `structuredContent` with its array (itself, or its largest array member) cut to `room`
/// tokens; the note for a content item, or `None` when it has no array to cut.
fn cut_structured(
    out: &mut Value,
    room: usize,
    names: &Names,
    k: usize,
    count: &dyn Fn(&str) -> usize,
    pieces: &mut Vec<Piece>,
) -> Option<String> {
    let sc = out.get_mut("structuredContent")?;
    let whole = crate::mcp::json_len(sc);
    let (path, array) = match sc {
        Value::Array(a) => (String::new(), a),
        Value::Object(o) => {
            let key = largest_array(o)?;
            let a = o.get_mut(&key)?.as_array_mut()?;
            (format!(".{key}"), a)
        }
        _ => return None,
    };
    let items: Vec<Box<str>> = array.iter().map(|v| Box::from(v.to_string())).collect();
    // The rest of the object, in bytes (never fewer than its tokens).
    let array_bytes = items.iter().map(|i| i.len() + 1).sum::<usize>() + 1;
    let rest = room
        .saturating_sub(whole.saturating_sub(array_bytes))
        .max(1);
    let shown = fit::items(&items, rest, count);
    array.truncate(shown);
    let total = items.len();
    pieces.push(Piece::Array(items));
    Some(format!(
        "[mws: structuredContent{path} has {total} items; the first {shown} are kept; {}]",
        how_to_read(names, k, shown)
    ))
}

fn largest_array(o: &Map<String, Value>) -> Option<String> {
    o.iter()
        .filter(|(_, v)| v.is_array())
        .max_by_key(|(_, v)| crate::mcp::json_len(v))
        .map(|(k, _)| k.clone())
}
