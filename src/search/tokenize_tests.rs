//! Tests of tokenisation: splitting, stop words, stemming, acronym plurals, hyphenated
//! compounds and CJK pairs, and that the byte loop and the `char` loop cut alike.

use super::*;

#[test]
fn cjk_text_is_split_into_character_pairs() {
    assert_eq!(tokens("创建问题"), ["创建", "建问", "问题"]);
    assert_eq!(tokens("新建 issue"), ["新建", "issu"]);
    assert_eq!(
        tokens("用GitHub创建issue"),
        ["用", "git", "hub", "创建", "issu"]
    );
    assert_eq!(
        tokens("ファイルを読む"),
        ["ファ", "ァイ", "イル", "ルを", "を読", "読む"]
    );
    assert_eq!(tokens("파일 읽기"), ["파일", "읽기"]);
    assert_eq!(tokens("café"), ["café"]);
}

#[test]
fn word_lists_are_sorted_for_binary_search() {
    assert!(NOT_PLURAL.windows(2).all(|w| w[0] < w[1]));
    assert!(STOP_WORDS.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn splits_and_stems() {
    let cases: &[(&str, &[&str])] = &[
        ("drive_share_file", &["driv", "shar", "fil"]),
        ("mail-list.labels/x", &["mail", "list", "label", "x"]),
        ("getHTTPClient", &["get", "http", "client"]),
        ("npmVulnerabilities", &["npm", "vulnerability"]),
        (
            "Sharing shared files share",
            &["shar", "shar", "fil", "shar"],
        ),
        ("searches boxes addresses", &["search", "box", "address"]),
        ("running calling listed", &["run", "call", "list"]),
        ("string status analysis", &["string", "status", "analysis"]),
        ("Can you please send the email to me", &["send", "email"]),
        (
            "lol-champion-analysis v2 s3",
            &["lol", "champion", "analysis", "v2", "s3"],
        ),
        ("entries replied", &["entry", "reply"]),
        ("PRs URLs APIs IDs", &["pr", "url", "api", "id"]),
        (
            "listPRs getURLsFor Rs HTTPSserver",
            &["list", "pr", "get", "url", "rs", "http", "sserver"],
        ),
        ("PRs für URLs", &["pr", "für", "url"]),
        ("news series new", &["news", "series", "new"]),
        // A compound made mostly of stop words is one word; others are cut.
        (
            "to-do up-to-date How-To sign-in end-to-end e-mail",
            &["todo", "uptodat", "howto", "sign", "end", "end", "mail"],
        ),
        ("to-do für", &["todo", "für"]),
        (
            "fooBar-to-do to-doList to--do v2-to-do -to-do- a-a-a-a-b",
            &["foo", "bar", "list", "v2", "todo", "aaaab"],
        ),
    ];
    for (input, want) in cases {
        assert_eq!(tokens(input), *want, "{input}");
    }
}

/// The byte loop and the `char` loop cut acronyms and their plural `s` alike, however the
/// capitals and `s`es fall.
#[test]
fn both_loops_cut_plural_acronyms_alike() {
    for text in [
        "PRs",
        "As",
        "Ss",
        "SS",
        "sS",
        "AAs",
        "AAss",
        "AAsS",
        "AAsA",
        "ABsX",
        "xABs",
        "s",
        "ABs_CDs",
        "HTTPSs",
        "PRs2",
        "IDsé",
        "to-do",
        "up-to-date",
        "fooBar-to-do",
        "PRs-to-do",
        "to-doList",
        "a-",
    ] {
        let mut ascii = Vec::new();
        for_each_word(text, |w| ascii.push(w.to_string()));
        let mut wide = Vec::new();
        for_each_word(&format!("{text} ü"), |w| wide.push(w.to_string()));
        wide.pop();
        assert_eq!(ascii, wide, "{text}");
    }
    assert_eq!(tokens("AAs ABsX"), ["aa", "ab", "x"]);
}

#[test]
fn short_word_keys_are_their_packed_bytes() {
    for (text, words) in [
        ("getHTTPClient v2_x aVeryLongWord", 9),
        ("naïveTest ok", 3),
        ("to-do up-to-date", 2),
    ] {
        let mut n = 0;
        for_each_word_keyed(text, |w, key| {
            if w.len() <= 8 {
                assert_eq!(key, w.bytes().fold(0, |k, b| k << 8 | b as u64), "{w}");
            }
            n += 1;
        });
        assert_eq!(n, words, "{text}");
    }
}
