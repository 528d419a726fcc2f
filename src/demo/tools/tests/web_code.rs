//! Browser and code-search tools: effects and failures.

use serde_json::json;

use super::{failed, ok, state};

use crate::demo::tools::call as run;

#[test]
fn browser_searches_the_shop_and_fills_the_cart() {
    let mut s = state();
    let nav = ok(
        &mut s,
        "browser_navigate",
        json!({"url": "https://shop.example/"}),
    );
    assert_eq!(nav["title"], "Example Shop");
    ok(
        &mut s,
        "browser_type_text",
        json!({"selector": "#search", "text": "mouse"}),
    );
    let res = ok(
        &mut s,
        "browser_click",
        json!({"selector": "#search-button"}),
    );
    assert_eq!(res["url"], "https://shop.example/search?q=mouse");
    let text = ok(&mut s, "browser_get_page_text", json!({}))["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains("1 results for \"mouse\"") && text.contains("Wireless mouse $29"),
        "{text}"
    );
    ok(&mut s, "browser_click", json!({"selector": "#product-43"}));
    assert_eq!(
        ok(&mut s, "browser_click", json!({"selector": "#add-to-cart"}))["cart_items"],
        1
    );
    ok(&mut s, "browser_click", json!({"selector": "#nav-cart"}));
    assert_eq!(
        ok(
            &mut s,
            "browser_evaluate_javascript",
            json!({"script": "document.querySelectorAll('.cart-item').length"})
        )["result"],
        1
    );
    assert_eq!(
        ok(
            &mut s,
            "browser_evaluate_javascript",
            json!({"script": "document.title"})
        )["result"],
        "Cart - Example Shop"
    );
    assert!(
        failed(
            &mut s,
            "browser_evaluate_javascript",
            json!({"script": "fetch('/x')"})
        )
        .contains("evaluates only")
    );
    ok(&mut s, "browser_go_back", json!({}));
    assert!(
        ok(&mut s, "browser_wait_for", json!({"text": "Add to cart"}))["found"]
            .as_bool()
            .unwrap()
    );
    assert!(
        failed(
            &mut s,
            "browser_wait_for",
            json!({"selector": "#nope", "timeout_ms": 10})
        )
        .contains("timed out")
    );
    assert!(failed(&mut s, "browser_click", json!({"selector": "#nope"})).contains("try one of"));
    assert!(
        failed(
            &mut s,
            "browser_navigate",
            json!({"url": "https://evil.example/"})
        )
        .contains("ERR_NAME_NOT_RESOLVED")
    );

    let tab = ok(
        &mut s,
        "browser_open_tab",
        json!({"url": "https://shop.example/login"}),
    )["tab_id"]
        .as_str()
        .unwrap()
        .to_string();
    ok(
        &mut s,
        "browser_fill_form",
        json!({"fields": [{"selector": "#email", "value": "alex@example.com"}, {"selector": "#password", "value": "pw"}]}),
    );
    assert_eq!(
        ok(
            &mut s,
            "browser_click",
            json!({"selector": "#login-button"})
        )["title"],
        "Your account - Example Shop"
    );
    assert_eq!(
        ok(&mut s, "browser_list_tabs", json!({}))["tabs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        ok(&mut s, "browser_close_tab", json!({"tab_id": tab}))["open_tabs"],
        1
    );
    let shot = run(&mut s, "browser_take_screenshot", &serde_json::Map::new()).unwrap();
    assert_eq!(shot.extra[0]["mimeType"], "image/png");
}

#[test]
fn codesearch_over_the_corpus() {
    let mut s = state();
    let hits = ok(
        &mut s,
        "codesearch_search_code",
        json!({"query": "partial_refund", "language": "rust"}),
    );
    assert!(hits["matches"].as_array().unwrap().len() >= 2);
    let grep = ok(
        &mut s,
        "codesearch_grep",
        json!({"pattern": "export (function|class)", "repo": "acme/web", "path_glob": "src/*.ts"}),
    );
    assert_eq!(grep["matches"].as_array().unwrap().len(), 4);
    let def = ok(
        &mut s,
        "codesearch_find_symbol",
        json!({"symbol": "Cart", "kind": "class"}),
    );
    assert_eq!(def["definitions"][0]["path"], "src/cart.ts");
    assert!(
        failed(&mut s, "codesearch_find_symbol", json!({"symbol": "Nope"}))
            .contains("no definition")
    );
    let refs = ok(
        &mut s,
        "codesearch_find_references",
        json!({"symbol": "formatPrice"}),
    );
    assert_eq!(refs["references"].as_array().unwrap().len(), 4);

    // release-1.0 predates the rounding fix, so its refund.rs has no tests module.
    let old = ok(
        &mut s,
        "codesearch_read_file",
        json!({"repo": "acme/payments", "path": "src/refund.rs", "ref": "release-1.0"}),
    );
    assert!(!old["content"].as_str().unwrap().contains("mod tests"));
    let new = ok(
        &mut s,
        "codesearch_read_file",
        json!({"repo": "acme/payments", "path": "src/refund.rs", "start_line": 1, "end_line": 1}),
    );
    assert_eq!(
        new["content"],
        "   1  //! Refunds: full and partial, in minor units."
    );
    let blame = ok(
        &mut s,
        "codesearch_blame_file",
        json!({"repo": "acme/payments", "path": "src/refund.rs"}),
    );
    let authors: Vec<&str> = blame["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["author"].as_str().unwrap())
        .collect();
    assert_eq!(authors[0], "priya@example.com");
    assert!(authors.contains(&"alex@example.com"));
    let commit = ok(
        &mut s,
        "codesearch_get_commit",
        json!({"repo": "acme/payments", "sha": "c3d5e7f9"}),
    );
    assert!(
        commit["files"][0]["diff"]
            .as_str()
            .unwrap()
            .contains("+    let percent = percent.min(100) as i64;")
    );
    let cmp = ok(
        &mut s,
        "codesearch_compare_commits",
        json!({"repo": "acme/web", "base": "checkout-v2", "head": "main"}),
    );
    assert_eq!(cmp["ahead_by"], 1);
    assert_eq!(
        ok(
            &mut s,
            "codesearch_list_files",
            json!({"repo": "acme/payments"})
        )["entries"],
        json!(["README.md", "src/"])
    );
    assert_eq!(
        ok(
            &mut s,
            "codesearch_list_commits",
            json!({"repo": "acme/web", "author": "alex"})
        )["commits"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(
        ok(
            &mut s,
            "codesearch_list_branches",
            json!({"repo": "acme/web"})
        )["branches"][0]["default"],
        true
    );
    assert_eq!(
        ok(
            &mut s,
            "codesearch_list_repositories",
            json!({"org": "acme"})
        )["repositories"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(
        failed(&mut s, "codesearch_list_branches", json!({"repo": "x/y"}))
            .contains("no repository")
    );
}
