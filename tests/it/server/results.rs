//! Big results through the real `mws serve` in front of `support/big_stdio.py`: 300 KB of text
//! and a 5,000-element JSON array reach the client within `results.maxTokens`, directly, through
//! `call_tool` and over `--stdio`; paging with `mws_result_page` returns the rest byte-exact;
//! after `keepMinutes` or an eviction the page call says the result is gone; every bad paging
//! input gets its message; nothing of a result is in the state dir; `mws report` counts them;
//! a result's id pages only for the session (or stateless client) that got it.

use std::path::Path;
use std::time::Duration;

use mws::report::tokens::{Tokenizer, TokenizerKind};
use serde_json::{Value, json};

use crate::support::serve::{self, Served, StdioServed, post_modern};

const MAX_TOKENS: usize = 2000;
/// The marker string on the middle line of `big_text` (`big_stdio.py`).
const MARKER: &str = "MWS-RESULT-MARKER-5c1e";
const LINES: usize = 5400;

fn big_text() -> String {
    (0..LINES)
        .map(|i| {
            let marker = if i == LINES / 2 {
                format!(" {MARKER}")
            } else {
                String::new()
            };
            format!("line {i:06}: the quick brown fox jumps over the lazy dog{marker}\n")
        })
        .collect()
}

fn items() -> Vec<Value> {
    (0..5000)
        .map(|i| json!({"n": i, "name": format!("item {i}")}))
        .collect()
}

fn config(results: Value) -> Value {
    let big = crate::support::root().join("tests/it/support/big_stdio.py");
    json!({
        "upstream": {"command": "python3", "args": [big]},
        "timeouts": {"listMs": 20000, "callMs": 20000, "catalogTtlMs": 60000},
        "results": results,
    })
}

fn start(results: Value) -> Served {
    serve::start(&config(results), &[])
}

async fn call(url: &str, name: &str, arguments: Value) -> Value {
    let r = post_modern(
        url,
        7,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
    )
    .await;
    r["result"].clone()
}

async fn page(url: &str, id: &str, offset: Value) -> Value {
    let args = json!({"name": "mws_result_page", "arguments": {"id": id, "offset": offset}});
    call(url, "call_tool", args).await
}

fn texts(r: &Value) -> Vec<&str> {
    r["content"]
        .as_array()
        .unwrap_or_else(|| panic!("no content: {r}"))
        .iter()
        .filter_map(|i| i["text"].as_str())
        .collect()
}

/// Tokens of everything the client reads: text items and structured content.
fn tokens(r: &Value) -> usize {
    let tok = Tokenizer::load(TokenizerKind::O200k);
    let text: usize = texts(r).iter().map(|t| tok.count(t)).sum();
    text + r
        .get("structuredContent")
        .map_or(0, |s| tok.count(&s.to_string()))
}

/// The id and offset of the paging call a note spells out.
fn next_call(note: &str) -> (String, u64) {
    let args = note
        .split_once("\"arguments\":")
        .unwrap_or_else(|| panic!("no paging call in {note:?}"))
        .1;
    let id = args.split('"').nth(3).unwrap().to_string();
    let offset = args.rsplit_once("\"offset\":").unwrap().1;
    let offset = offset.split('}').next().unwrap().parse().unwrap();
    (id, offset)
}

/// Pages from `id` at `offset` to the end; the first text item of every page, joined.
async fn read_rest(url: &str, id: &str, mut offset: u64) -> Vec<String> {
    let mut out = Vec::new();
    for _ in 0..500 {
        let p = page(url, id, json!(offset)).await;
        assert_eq!(p.get("isError"), None, "{p}");
        assert!(tokens(&p) <= MAX_TOKENS, "a page over maxTokens");
        let t = texts(&p);
        out.push(t[0].to_string());
        if t[1].ends_with(": the end]") {
            return out;
        }
        offset = next_call(t[1]).1;
    }
    panic!("paging did not end");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn big_results_fit_and_page_back_byte_exact() {
    let mut mws = start(json!({"maxTokens": MAX_TOKENS}));

    // 300 KB of text, called directly: head and tail around the marker.
    let r = call(&mws.url, "big_text", json!({})).await;
    assert!(tokens(&r) <= MAX_TOKENS, "{} tokens", tokens(&r));
    let shown = texts(&r)[0];
    let (head, note) = shown.split_once("\n\n[mws: ").unwrap();
    assert!(note.contains("bytes cut here"), "{note}");
    assert!(shown.ends_with(&big_text()[big_text().len() - 100..]));
    let (id, offset) = next_call(note);
    assert_eq!(offset as usize, head.len());
    let rest = read_rest(&mws.url, &id, offset).await.concat();
    assert_eq!(format!("{head}{rest}"), big_text(), "not byte-exact");

    // A 5,000-element array through call_tool: the first items, valid JSON, and the count.
    let via = json!({"name": "big_array", "arguments": {}});
    let r = call(&mws.url, "call_tool", via).await;
    assert!(tokens(&r) <= MAX_TOKENS, "{} tokens", tokens(&r));
    let t = texts(&r);
    let first: Vec<Value> = serde_json::from_str(t[0]).expect("the cut array is valid JSON");
    assert!(t[1].starts_with("[mws: this JSON array has 5000 items; the first "));
    let (id, offset) = next_call(t[1]);
    assert_eq!(offset as usize, first.len());
    let mut all = first;
    for p in read_rest(&mws.url, &id, offset).await {
        all.extend(serde_json::from_str::<Vec<Value>>(&p).unwrap());
    }
    assert_eq!(all, items());
    let sc = &r["structuredContent"];
    assert_eq!(sc["count"], 5000);
    let kept = sc["items"].as_array().unwrap();
    assert_eq!(kept[..], items()[..kept.len()]);
    let note = t.last().unwrap();
    assert!(note.starts_with("[mws: structuredContent.items has 5000 items"));
    let (id, offset) = next_call(note);
    let mut all = kept.clone();
    for p in read_rest(&mws.url, &id, offset).await {
        all.extend(serde_json::from_str::<Vec<Value>>(&p).unwrap());
    }
    assert_eq!(all, items());

    // A small result passes whole; the page call directly by name works too.
    let r = call(&mws.url, "small", json!({})).await;
    assert_eq!(texts(&r), ["small answer"]);
    let direct = json!({"id": id, "offset": 0});
    let p = call(&mws.url, "mws_result_page", direct).await;
    assert_eq!(p.get("isError"), None, "{p}");

    mws.stop();
    assert_nothing_on_disk(&mws.dir.path().join("state"));
    let saved: Vec<(String, Option<i64>)> = {
        let store = mws::store::Store::open(&mws.db()).unwrap();
        let mut st = store
            .conn()
            .prepare("SELECT tool, bytes_saved FROM calls ORDER BY rowid")
            .unwrap();
        st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(saved.len(), 3, "{saved:?}");
    assert!(saved[0].1.unwrap() > 250_000, "{saved:?}");
    assert!(saved[1].1.unwrap() > 100_000, "{saved:?}");
    assert_eq!(saved[2], ("small".into(), None));
    let report = report(&mws, json!({"maxTokens": MAX_TOKENS}));
    assert!(
        report.contains("results shaped to fit results.maxTokens: 2 call(s), "),
        "{report}"
    );
}

/// No file under the state dir holds any of a result's text.
fn assert_nothing_on_disk(state: &Path) {
    let mut stack = vec![state.to_path_buf()];
    let mut files = 0;
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            files += 1;
            let bytes = std::fs::read(&p).unwrap();
            for needle in [MARKER.as_bytes(), b"item 4999", b"the quick brown fox"] {
                assert!(
                    !bytes.windows(needle.len()).any(|w| w == needle),
                    "{} holds result text",
                    p.display()
                );
            }
        }
    }
    assert!(files > 0, "no state files to look at");
}

fn report(mws: &Served, results: Value) -> String {
    let mut cfg = config(results);
    cfg["stateDir"] = json!(mws.dir.path().join("state"));
    let path = mws.dir.path().join("report-config.json");
    std::fs::write(&path, cfg.to_string()).unwrap();
    let out = serve::mws()
        .arg("--config")
        .arg(&path)
        .arg("report")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_and_evicted_results_are_gone_and_bad_pages_say_why() {
    // 0.005 minutes is 300 ms; 0.5 MB holds one 300 KB text, not two.
    let mut mws = start(json!({"maxTokens": MAX_TOKENS, "keepMinutes": 0.005, "memoryMb": 0.5}));
    let r = call(&mws.url, "big_text", json!({})).await;
    let (id, offset) = next_call(texts(&r)[0]);
    tokio::time::sleep(Duration::from_millis(600)).await;
    let gone = page(&mws.url, &id, json!(offset)).await;
    assert_eq!(gone["isError"], true);
    assert_eq!(
        texts(&gone)[0],
        format!(
            "mws_result_page: result \"{id}\" is gone: it was kept 0.005 minutes (config \
             `results.keepMinutes`) and has expired; call the tool again for a fresh result"
        )
    );
    mws.stop();

    let mut mws = start(json!({"maxTokens": MAX_TOKENS, "keepMinutes": 10, "memoryMb": 0.5}));
    let first = call(&mws.url, "big_text", json!({})).await;
    let (first_id, offset) = next_call(texts(&first)[0]);
    let second = call(&mws.url, "big_text", json!({})).await;
    let (second_id, _) = next_call(texts(&second)[0]);
    let gone = page(&mws.url, &first_id, json!(offset)).await;
    assert_eq!(
        texts(&gone)[0],
        format!(
            "mws_result_page: result \"{first_id}\" is gone: it was evicted to keep the kept \
             results under config `results.memoryMb`; call the tool again for a fresh result"
        )
    );

    let usage = "mws_result_page needs 'id' (the id a cut result names) and 'offset' (a whole \
                 number from 0, as the cut result says), e.g. call_tool {\"name\":\
                 \"mws_result_page\",\"arguments\":{\"id\":\"<id>\",\"offset\":0}}";
    let past = format!(
        "mws_result_page: offset 1000000000000 is past the end of result \"{second_id}\", which \
         has {} bytes (offsets 0 to {})",
        big_text().len(),
        big_text().len() - 1
    );
    let cases: Vec<(Value, String)> =
        vec![
        (json!({"id": second_id}), usage.into()),
        (json!({"offset": 0}), usage.into()),
        (json!({"id": 5, "offset": 0}), usage.into()),
        (
            json!({"id": second_id, "offset": -3}),
            "mws_result_page: offset -3 is negative; use the offset the cut result names (0 is \
             the start)"
                .into(),
        ),
        (
            json!({"id": second_id, "offset": 1.5}),
            "mws_result_page: offset must be a whole number from 0, found 1.5".into(),
        ),
        (
            json!({"id": second_id, "offset": "10"}),
            "mws_result_page: offset must be a whole number from 0, found \"10\"".into(),
        ),
        (json!({"id": second_id, "offset": 1_000_000_000_000u64}), past),
        (
            json!({"id": "nope.0", "offset": 0}),
            "mws_result_page: no kept result has id \"nope.0\": use the id a cut result names \
             (results are kept in memory only, so a restart of mws forgets them)"
                .into(),
        ),
    ];
    for (args, want) in cases {
        let args = json!({"name": "mws_result_page", "arguments": args});
        let r = call(&mws.url, "call_tool", args.clone()).await;
        assert_eq!(r["isError"], true, "{args}: {r}");
        assert_eq!(texts(&r), [want.as_str()], "{args}");
    }
    // The proxy is unaffected: the kept result still pages.
    let ok = page(&mws.url, &second_id, json!(0)).await;
    assert_eq!(ok.get("isError"), None, "{ok}");
    mws.stop();
}

/// A cut result's id is 128 random bits and pages only for the session that got it: another 2025
/// session, and a 2026 client, get the answer a made-up id gets.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_pages_only_for_the_session_that_got_it() {
    use crate::support::wire::LegacyClient;
    let mut mws = start(json!({"maxTokens": MAX_TOKENS}));
    let mine = LegacyClient::open(&mws.url, "owner", json!({})).await;
    let theirs = LegacyClient::open(&mws.url, "owner", json!({})).await;
    let r = mine
        .rpc("tools/call", json!({"name": "big_text", "arguments": {}}))
        .await;
    let (id, offset) = next_call(texts(&r["result"])[0]);
    let (random, part) = id.split_once('.').unwrap();
    assert_eq!((random.len(), part), (32, "0"), "{id}");
    assert!(random.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    let args = json!({"name": "mws_result_page", "arguments": {"id": id, "offset": offset}});
    let ok = mine.rpc("tools/call", args.clone()).await;
    assert_eq!(ok["result"].get("isError"), None, "{ok}");
    let unknown = format!(
        "mws_result_page: no kept result has id \"{id}\": use the id a cut result names \
         (results are kept in memory only, so a restart of mws forgets them)"
    );
    let other = theirs.rpc("tools/call", args.clone()).await;
    assert_eq!(other["result"]["isError"], true, "{other}");
    assert_eq!(texts(&other["result"]), [unknown.as_str()]);
    let stateless = page(&mws.url, &id, json!(offset)).await;
    assert_eq!(stateless["isError"], true, "{stateless}");
    assert_eq!(texts(&stateless), [unknown.as_str()]);
    // The owner still pages after the others tried.
    let again = mine.rpc("tools/call", args).await;
    assert_eq!(again["result"].get("isError"), None, "{again}");
    mws.stop();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_big_results_are_shaped_and_paged_and_zero_turns_it_off() {
    for (max, shaped) in [(MAX_TOKENS, true), (0, false)] {
        let dir = tempfile::tempdir().unwrap();
        let mut mws = StdioServed::start(dir.path(), &config(json!({"maxTokens": max})));
        mws.initialize("results-test").await;
        let mut ask = async |id: i64, name: &str, args: Value, direct: bool| {
            let params = match direct {
                true => json!({"name": name, "arguments": args}),
                false => {
                    json!({"name": "call_tool", "arguments": {"name": name, "arguments": args}})
                }
            };
            mws.send(
                &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
            )
            .await;
            mws.reply(id).await["result"].clone()
        };
        // Through `call_tool` (read into a tree), and by its name (kept as sent until it is
        // found longer than `maxTokens`, then read and cut the same way).
        for (n, direct) in [(2, false), (4, true)] {
            let r = ask(n, "big_text", json!({}), direct).await;
            if !shaped {
                assert_eq!(texts(&r), [big_text()], "direct {direct}");
                continue;
            }
            assert!(tokens(&r) <= MAX_TOKENS, "direct {direct}");
            let (id, offset) = next_call(texts(&r)[0]);
            let args = json!({"id": id, "offset": offset});
            let p = ask(n + 1, "mws_result_page", args, false).await;
            let t = texts(&p);
            assert!(big_text()[offset as usize..].starts_with(t[0]), "{p}");
            assert!(t[1].contains("read on with call_tool"), "{p}");
        }
        mws.close().await;
    }
}
