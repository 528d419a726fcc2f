//! Shaping and paging as data: results in, what the client sees and what paging returns out.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::Results;
use super::shape::{Names, shape};
use crate::config;
use crate::report::tokens::{Tokenizer, TokenizerKind};

/// One token per 3 bytes, rounded up: a stand-in tokenizer with a known answer.
fn thirds(s: &str) -> usize {
    s.len().div_ceil(3)
}

const NAMES: Names = Names {
    id: "r1",
    keep_minutes: 30.0,
};

/// Tokens of everything the client reads (text items and structured content).
fn tokens(r: &Value, count: &dyn Fn(&str) -> usize) -> usize {
    let items = r["content"].as_array().unwrap();
    let text: usize = items
        .iter()
        .filter_map(|i| i["text"].as_str())
        .map(count)
        .sum();
    text + r
        .get("structuredContent")
        .map_or(0, |s| count(&s.to_string()))
}

#[test]
fn what_fits_passes_untouched() {
    let small = json!({"content": [{"type": "text", "text": "hello"}]});
    assert!(shape(small, 100, &NAMES, &thirds).is_err());
    // Over the limit in bytes, under it in tokens: counted, and passed.
    let r = json!({"content": [{"type": "text", "text": "x".repeat(250)}]});
    assert!(shape(r, 100, &NAMES, &thirds).is_err());
}

#[test]
fn long_text_keeps_head_and_tail_around_the_marker() {
    let text: String = (0..2000).map(|i| format!("line {i}\n")).collect();
    let image = json!({"type": "image", "data": "A".repeat(50_000), "mimeType": "image/png"});
    let r = json!({"content": [image, {"type": "text", "text": text}]});
    let Ok(s) = shape(r, 500, &NAMES, &thirds) else {
        panic!("not shaped")
    };
    assert_eq!(s.result["content"][0], image, "images pass untouched");
    let shown = s.result["content"][1]["text"].as_str().unwrap();
    assert!(shown.starts_with("line 0\n") && shown.ends_with("line 1999\n"));
    let (head, rest) = shown.split_once("\n\n[mws: ").unwrap();
    assert!(rest.contains(
        "read on with call_tool {\"name\":\"mws_result_page\",\"arguments\":{\"id\":\"r1.0\""
    ));
    assert!(text.starts_with(head));
    assert!(tokens(&s.result, &thirds) <= 500);
    assert_eq!(s.pieces, [super::kept::Piece::Text(text.clone())]);
    assert!(s.saved_bytes > text.len() / 2);
}

#[test]
fn arrays_keep_their_first_items_and_stay_valid_json() {
    let items: Vec<Value> = (0..3000).map(|n| json!({"n": n})).collect();
    let r = json!({
        "content": [{"type": "text", "text": serde_json::to_string_pretty(&items).unwrap()}],
        "structuredContent": {"total": 3000, "items": items},
    });
    let Ok(s) = shape(r, 2000, &NAMES, &thirds) else {
        panic!("not shaped")
    };
    let shown: Vec<Value> = serde_json::from_str(s.result["content"][0]["text"].as_str().unwrap())
        .expect("the cut array is valid JSON");
    assert_eq!(shown[..], items[..shown.len()]);
    let note = s.result["content"][1]["text"].as_str().unwrap();
    assert!(
        note.starts_with("[mws: this JSON array has 3000 items; the first "),
        "{note}"
    );
    let sc = &s.result["structuredContent"];
    assert_eq!(sc["total"], 3000);
    let kept = sc["items"].as_array().unwrap();
    assert!(!kept.is_empty() && kept[..] == items[..kept.len()]);
    let last = s.result["content"].as_array().unwrap().last().unwrap()["text"].clone();
    assert!(
        last.as_str()
            .unwrap()
            .starts_with("[mws: structuredContent.items has 3000 items"),
        "{last}"
    );
    assert!(tokens(&s.result, &thirds) <= 2000);
}

fn results(max_tokens: u32, keep_minutes: f64, memory_mb: f64) -> Results {
    Results::new(&config::Results {
        max_tokens,
        keep_minutes,
        memory_mb,
    })
}

/// The id of the first piece a shaped result names (`"id":"<hex>.0"`).
fn piece_id(shaped: &Value) -> String {
    let text = shaped.to_string();
    let at = text
        .find("\\\"id\\\":\\\"")
        .expect("the result names a page id")
        + 9;
    text[at..].split('\\').next().unwrap().to_string()
}

fn text_of(r: &Value, i: usize) -> &str {
    r["content"][i]["text"].as_str().unwrap()
}

#[test]
fn paging_returns_the_rest_byte_exact_then_forgets() {
    let tok = Tokenizer::load(TokenizerKind::O200k);
    let count = |s: &str| tok.count(s);
    let text: String = (0..20_000).map(|i| format!("{i} é ünïcode\n")).collect();
    let rs = results(1000, 1.0, 8.0);
    let t0 = Instant::now();
    let (shaped, saved) = rs.shape(
        json!({"content": [{"type": "text", "text": text}]}),
        "me",
        t0,
    );
    let id = piece_id(&shaped);
    let (random, part) = id.split_once('.').unwrap();
    assert_eq!((random.len(), part), (32, "0"), "{id}");
    assert!(random.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    assert!(saved.unwrap() > 0);
    assert!(tokens(&shaped, &count) <= 1000);
    let shown = text_of(&shaped, 0);
    let head = shown.split_once("\n\n[mws: ").unwrap().0;
    let mut got = head.to_string();
    let mut offset = head.len();
    for _ in 0..1000 {
        let page = rs.page(Some(&json!({"id": id, "offset": offset})), "me", t0);
        assert_eq!(page.get("isError"), None, "{page}");
        assert!(tokens(&page, &count) <= 1000);
        got.push_str(text_of(&page, 0));
        let note = text_of(&page, 1);
        if note.ends_with(": the end]") {
            break;
        }
        let next = note.rsplit_once("\"offset\":").unwrap().1;
        offset = next.trim_end_matches("}}]").parse().unwrap();
    }
    assert_eq!(got, text);
    // Another caller with the same id finds nothing, as with an id never made.
    let theirs = rs.page(Some(&json!({"id": id, "offset": 0})), "another", t0);
    assert_eq!(
        text_of(&theirs, 0),
        format!(
            "mws_result_page: no kept result has id \"{id}\": use the id a cut result names \
             (results are kept in memory only, so a restart of mws forgets them)"
        )
    );
    let later = t0 + Duration::from_secs(61);
    let gone = rs.page(Some(&json!({"id": id, "offset": 0})), "me", later);
    assert_eq!(
        text_of(&gone, 0),
        format!(
            "mws_result_page: result \"{id}\" is gone: it was kept 1 minute (config \
             `results.keepMinutes`) and has expired; call the tool again for a fresh result"
        )
    );
}

#[test]
fn max_tokens_zero_turns_shaping_off() {
    let r = json!({"content": [{"type": "text", "text": "x ".repeat(100_000)}]});
    let (out, saved) = results(0, 1.0, 8.0).shape(r.clone(), "me", Instant::now());
    assert_eq!((out, saved), (r, None));
}

#[test]
fn a_result_larger_than_the_store_is_cut_and_says_it_was_not_kept() {
    let text = "a line of text\n".repeat(20_000);
    let rs = results(500, 1.0, 0.01);
    let (shaped, _) = rs.shape(
        json!({"content": [{"type": "text", "text": text}]}),
        "me",
        Instant::now(),
    );
    let shown = text_of(&shaped, 0);
    assert!(
        shown.contains(
            "; the whole result is larger than config `results.memoryMb`, so it was not kept]"
        ),
        "{shown}"
    );
    assert!(!shown.contains("mws_result_page"), "{shown}");
    assert_eq!(rs.held_bytes(), 0);
}
