//! The paging call `mws_result_page {"id", "offset"}`: the next part of a cut result from the
//! store, within `results.maxTokens`, with a note that spells out the call for the part after.
//! Text pages by byte offset (an offset inside a character starts at that character), an array
//! by item. Every bad input is an `isError` result that says what to do; a result another caller
//! got reads as unknown, like an id never made. Must not do I/O.

use std::time::Instant;

use serde_json::{Value, json};

use super::Results;
use super::fit;
use super::kept::{Gone, Piece};
use super::shape::{MARKER_TOKENS, PAGE_TOOL, page_call};

fn answer_with(parts: Vec<String>, is_error: bool) -> Value {
    let content: Vec<Value> = parts
        .into_iter()
        .map(|t| json!({"type": "text", "text": t}))
        .collect();
    let mut r = json!({ "content": content });
    if is_error {
        r["isError"] = json!(true);
    }
    r
}

fn error(text: String) -> Value {
    answer_with(vec![text], true)
}

/// The `id` and `offset` of a paging call, or the message that says what is wrong.
fn parse(args: Option<&Value>) -> Result<(String, usize), String> {
    let usage = format!(
        "{PAGE_TOOL} needs 'id' (the id a cut result names) and 'offset' (a whole number from 0, \
         as the cut result says), e.g. {}",
        page_call("<id>", 0)
    );
    let Some(id) = args.and_then(|a| a.get("id")).and_then(Value::as_str) else {
        return Err(usage);
    };
    let offset = match args.and_then(|a| a.get("offset")) {
        None => return Err(usage),
        Some(v) => v,
    };
    if let Some(n) = offset.as_u64() {
        return Ok((id.to_string(), usize::try_from(n).unwrap_or(usize::MAX)));
    }
    if offset.as_i64().is_some_and(|n| n < 0) || offset.as_f64().is_some_and(|n| n < 0.0) {
        return Err(format!(
            "{PAGE_TOOL}: offset {offset} is negative; use the offset the cut result names (0 is \
             the start)"
        ));
    }
    Err(format!(
        "{PAGE_TOOL}: offset must be a whole number from 0, found {offset}"
    ))
}

/// The answer to a paging call by `owner`.
pub fn answer(
    args: Option<&Value>,
    owner: &str,
    results: &Results,
    now: Instant,
    count: &dyn Fn(&str) -> usize,
) -> Value {
    let (id, offset) = match parse(args) {
        Ok(p) => p,
        Err(e) => return error(e),
    };
    let gone = |why: Gone| {
        error(match why {
            Gone::Expired => format!(
                "{PAGE_TOOL}: result \"{id}\" is gone: it was kept {} (config \
                 `results.keepMinutes`) and has expired; call the tool again for a fresh result",
                super::shape::minutes(results.keep_minutes)
            ),
            Gone::Evicted => format!(
                "{PAGE_TOOL}: result \"{id}\" is gone: it was evicted to keep the kept results \
                 under config `results.memoryMb`; call the tool again for a fresh result"
            ),
            Gone::Unknown => format!(
                "{PAGE_TOOL}: no kept result has id \"{id}\": use the id a cut result names \
                 (results are kept in memory only, so a restart of mws forgets them)"
            ),
        })
    };
    let Some((result_id, k)) = id
        .rsplit_once('.')
        .and_then(|(r, k)| Some((r, k.parse::<usize>().ok()?)))
    else {
        return gone(Gone::Unknown);
    };
    let pieces = match results.lock().get(result_id, owner, now) {
        Ok(p) => p,
        Err(why) => return gone(why),
    };
    let Some(piece) = pieces.get(k) else {
        return gone(Gone::Unknown);
    };
    let room = results.max_tokens.saturating_sub(MARKER_TOKENS).max(1);
    match piece {
        Piece::Text(text) => {
            if offset >= text.len() {
                return error(format!(
                    "{PAGE_TOOL}: offset {offset} is past the end of result \"{id}\", which has \
                     {} bytes (offsets 0 to {})",
                    text.len(),
                    text.len().saturating_sub(1)
                ));
            }
            let start = fit::floor(text, offset);
            let rest = &text[start..];
            let mut len = fit::prefix(rest, room, fit::DEFAULT_GUESS, count);
            if len == 0 {
                len = rest.chars().next().map_or(0, char::len_utf8);
            }
            let end = start + len;
            let note = if end < text.len() {
                format!(
                    "[mws: bytes {start} to {end} of {}; read on with {}]",
                    text.len(),
                    page_call(&id, end)
                )
            } else {
                format!("[mws: bytes {start} to {end} of {}: the end]", text.len())
            };
            answer_with(vec![rest[..len].to_string(), note], false)
        }
        Piece::Array(items) => {
            if offset >= items.len() {
                return error(format!(
                    "{PAGE_TOOL}: offset {offset} is past the end of result \"{id}\", which has \
                     {} items (offsets 0 to {})",
                    items.len(),
                    items.len().saturating_sub(1)
                ));
            }
            let n = fit::items(items, offset, room, fit::DEFAULT_GUESS, count).max(1);
            let end = offset + n;
            let note = if end < items.len() {
                format!(
                    "[mws: items {offset} to {end} of {}; read on with {}]",
                    items.len(),
                    page_call(&id, end)
                )
            } else {
                format!("[mws: items {offset} to {end} of {}: the end]", items.len())
            };
            answer_with(vec![items.array(offset, end), note], false)
        }
    }
}
