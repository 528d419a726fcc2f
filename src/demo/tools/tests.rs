//! Unit tests for the demo tools: argument checking as a table, then each backend's effects.

use serde_json::{Value, json};
use time::macros::datetime;

use super::{ToolError, call as run, check_args};
use crate::demo::protocol::catalog_tools;
use crate::demo::state::State;

fn state() -> State {
    State::seeded(datetime!(2026-12-01 08:00 UTC))
}

/// Checks the arguments against the catalog schema, runs the tool, returns its JSON data.
fn call(s: &mut State, name: &str, args: Value) -> Result<Value, ToolError> {
    let tool = catalog_tools()
        .into_iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} is not in the catalog"));
    let args = args.as_object().cloned().expect("args are an object");
    check_args(&tool, &args).map_err(ToolError::BadParams)?;
    run(s, name, &args).map(|o| o.data)
}

fn ok(s: &mut State, name: &str, args: Value) -> Value {
    call(s, name, args.clone()).unwrap_or_else(|e| panic!("{name} {args}: {e:?}"))
}

fn failed(s: &mut State, name: &str, args: Value) -> String {
    match call(s, name, args) {
        Err(ToolError::Failed(m)) => m,
        other => panic!("{name}: expected a tool failure, got {other:?}"),
    }
}

#[test]
fn every_catalog_tool_is_implemented() {
    let mut s = state();
    for t in catalog_tools() {
        let name = t["name"].as_str().unwrap();
        let r = run(&mut s, name, &serde_json::Map::new());
        if let Err(ToolError::BadParams(m)) = &r {
            assert!(!m.contains("unknown tool"), "{name}: {m}");
        }
    }
    assert_eq!(catalog_tools().len(), 60);
}

#[test]
fn bad_arguments_name_the_problem() {
    let cases: &[(&str, Value, &str)] = &[
        (
            "mail_send_message",
            json!({"subject": "s", "body": "b"}),
            "missing required argument \"to\"",
        ),
        (
            "mail_send_message",
            json!({"to": [], "subject": "s", "body": "b"}),
            "\"to\" needs at least 1",
        ),
        (
            "mail_send_message",
            json!({"to": ["nobody"], "subject": "s", "body": "b"}),
            "\"to[0]\" must be an email",
        ),
        (
            "mail_send_message",
            json!({"to": ["a@b.co"], "subject": 3, "body": "b"}),
            "\"subject\" must be string, got a number",
        ),
        (
            "mail_send_message",
            json!({"to": ["a@b.co"], "subject": "s", "body": "b", "bogus": 1}),
            "unknown argument \"bogus\"",
        ),
        ("mail_list_messages", json!({"limit": 101}), "at most 100"),
        (
            "calendar_respond_to_invite",
            json!({"event_id": "evt_e1", "response": "maybe"}),
            "must be one of",
        ),
        (
            "browser_fill_form",
            json!({"fields": [{"selector": "#q"}]}),
            "missing required argument \"fields[0].value\"",
        ),
        (
            "calendar_create_event",
            json!({"title": "t", "start": "tomorrow", "end": "2026-12-02T10:00:00Z"}),
            "RFC 3339",
        ),
        (
            "codesearch_grep",
            json!({"pattern": "(", "repo": "acme/web"}),
            "invalid regular expression",
        ),
        (
            "mail_list_messages",
            json!({"page_token": "zz"}),
            "invalid page_token",
        ),
    ];
    for (tool, args, want) in cases {
        let mut s = state();
        match call(&mut s, tool, args.clone()) {
            Err(ToolError::BadParams(m)) => {
                assert!(m.contains(want), "{tool} {args}: {m:?} lacks {want:?}")
            }
            other => panic!("{tool} {args}: expected bad params, got {other:?}"),
        }
    }
}

#[test]
fn mail_send_list_reply_draft_and_trash() {
    let mut s = state();
    let sent = ok(
        &mut s,
        "mail_send_message",
        json!({"to": ["alex@example.com"], "subject": "Note to self", "body": "buy milk"}),
    );
    let id = sent["message"]["id"].as_str().unwrap().to_string();
    let inbox = ok(
        &mut s,
        "mail_list_messages",
        json!({"label": "INBOX", "limit": 1}),
    );
    assert_eq!(inbox["messages"][0]["subject"], "Note to self");
    assert!(inbox["next_page_token"].is_string());
    let sent_box = ok(&mut s, "mail_list_messages", json!({"label": "SENT"}));
    assert_eq!(sent_box["messages"].as_array().unwrap().len(), 1);

    let hits = ok(
        &mut s,
        "mail_search_messages",
        json!({"query": "from:priya roadmap"}),
    );
    assert_eq!(hits["messages"][0]["id"], "msg_m1");
    let reply = ok(
        &mut s,
        "mail_reply_to_message",
        json!({"message_id": "msg_m1", "body": "Will do"}),
    );
    assert_eq!(reply["message"]["subject"], "Re: Q4 roadmap review");
    assert_eq!(reply["message"]["to"], json!(["priya@example.com"]));
    assert_eq!(reply["message"]["thread_id"], "thr_m1");

    let draft = ok(
        &mut s,
        "mail_create_draft",
        json!({"to": ["sam@example.com"], "subject": "Lunch", "body": "Yes!"}),
    );
    let draft_id = draft["draft"]["id"].as_str().unwrap().to_string();
    assert_eq!(
        ok(&mut s, "mail_list_messages", json!({"label": "DRAFTS"}))["messages"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    ok(&mut s, "mail_send_draft", json!({"draft_id": draft_id}));
    assert!(
        failed(&mut s, "mail_send_draft", json!({"draft_id": draft_id})).contains("no message")
    );
    assert!(
        failed(&mut s, "mail_send_draft", json!({"draft_id": "msg_m2"})).contains("not a draft")
    );

    ok(&mut s, "mail_delete_message", json!({"message_id": id}));
    let trash = ok(&mut s, "mail_list_messages", json!({"label": "TRASH"}));
    assert_eq!(trash["messages"][0]["id"], json!(id));
    ok(
        &mut s,
        "mail_modify_labels",
        json!({"message_id": "msg_m3", "add": ["Social"], "remove": ["INBOX"]}),
    );
    let labels = ok(&mut s, "mail_list_labels", json!({}));
    assert!(
        labels["labels"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["name"] == "Social" && l["messages"] == 1)
    );
    ok(
        &mut s,
        "mail_mark_read",
        json!({"message_ids": ["msg_m1"], "read": true}),
    );
    let unread = ok(&mut s, "mail_list_messages", json!({"unread_only": true}));
    assert!(
        unread["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m["id"] != "msg_m1")
    );
    assert!(
        failed(
            &mut s,
            "mail_get_message",
            json!({"message_id": "msg_nope"})
        )
        .contains("no message")
    );
    assert!(failed(&mut s, "mail_list_messages", json!({"label": "Nope"})).contains("no label"));
}

#[test]
fn calendar_events_and_free_time() {
    let mut s = state();
    let created = ok(
        &mut s,
        "calendar_create_event",
        json!({"title": "Design review", "start": "2026-12-02T11:00:00Z", "end": "2026-12-02T12:00:00Z", "attendees": ["sam@example.com"]}),
    );
    let id = created["created"]["id"].as_str().unwrap().to_string();
    let day = ok(
        &mut s,
        "calendar_list_events",
        json!({"time_min": "2026-12-02T00:00:00Z", "time_max": "2026-12-03T00:00:00Z"}),
    );
    let titles: Vec<&str> = day["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Q4 planning", "Design review", "1:1 with Jordan"]);
    assert!(
        failed(
            &mut s,
            "calendar_create_event",
            json!({"title": "x", "start": "2026-12-02T11:00:00Z", "end": "2026-12-02T10:00:00Z"})
        )
        .contains("must be after")
    );

    // Sam is busy 10:00-12:00 on Dec 2 (Q4 planning, then the design review).
    let free = ok(
        &mut s,
        "calendar_find_free_time",
        json!({"attendees": ["sam@example.com"], "duration_minutes": 60, "time_min": "2026-12-02T09:00:00Z", "time_max": "2026-12-02T14:00:00Z"}),
    );
    let starts: Vec<&str> = free["slots"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["start"].as_str().unwrap())
        .collect();
    assert_eq!(
        starts,
        [
            "2026-12-02T09:00:00.000Z",
            "2026-12-02T12:00:00.000Z",
            "2026-12-02T12:30:00.000Z",
            "2026-12-02T13:00:00.000Z"
        ]
    );

    ok(
        &mut s,
        "calendar_update_event",
        json!({"event_id": id, "start": "2026-12-02T15:00:00Z", "end": "2026-12-02T16:00:00Z"}),
    );
    assert_eq!(
        ok(&mut s, "calendar_get_event", json!({"event_id": id}))["start"],
        "2026-12-02T15:00:00.000Z"
    );
    ok(
        &mut s,
        "calendar_add_attendees",
        json!({"event_id": id, "attendees": ["priya@example.com"]}),
    );
    ok(
        &mut s,
        "calendar_set_reminder",
        json!({"event_id": id, "minutes_before": 15}),
    );
    ok(
        &mut s,
        "calendar_respond_to_invite",
        json!({"event_id": "evt_e3", "response": "declined"}),
    );
    let found = ok(&mut s, "calendar_search_events", json!({"query": "priya"}));
    assert_eq!(found["events"].as_array().unwrap().len(), 4);
    let del = ok(
        &mut s,
        "calendar_delete_event",
        json!({"event_id": id, "notify_attendees": true}),
    );
    assert_eq!(
        del["notified"],
        json!(["sam@example.com", "priya@example.com"])
    );
    assert!(failed(&mut s, "calendar_get_event", json!({"event_id": id})).contains("no event"));
    ok(
        &mut s,
        "calendar_create_calendar",
        json!({"name": "On-call"}),
    );
    assert_eq!(
        ok(&mut s, "calendar_list_calendars", json!({}))["calendars"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert!(
        failed(
            &mut s,
            "calendar_create_calendar",
            json!({"name": "On-call"})
        )
        .contains("already exists")
    );
}

#[test]
fn drive_files_folders_and_sharing() {
    let mut s = state();
    let folder = ok(&mut s, "drive_create_folder", json!({"name": "Reports"}))["created"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let file = ok(
        &mut s,
        "drive_upload_file",
        json!({"name": "weekly.txt", "content": "all green", "folder_id": folder}),
    )["uploaded"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let list = ok(&mut s, "drive_list_files", json!({"folder_id": folder}));
    assert_eq!(list["files"][0]["name"], "weekly.txt");
    assert_eq!(
        ok(
            &mut s,
            "drive_read_file",
            json!({"file_id": file, "max_bytes": 3})
        )["content"],
        "all"
    );
    assert_eq!(
        ok(&mut s, "drive_search_files", json!({"query": "green"}))["files"][0]["id"],
        json!(file)
    );

    ok(
        &mut s,
        "drive_share_file",
        json!({"file_id": file, "email": "sam@example.com", "role": "reader"}),
    );
    let perms = ok(&mut s, "drive_list_permissions", json!({"file_id": file}));
    assert_eq!(
        perms["permissions"],
        json!([{"email": "alex@example.com", "role": "owner"}, {"email": "sam@example.com", "role": "reader"}])
    );
    ok(
        &mut s,
        "drive_revoke_permission",
        json!({"file_id": file, "email": "sam@example.com"}),
    );
    assert!(
        failed(
            &mut s,
            "drive_revoke_permission",
            json!({"file_id": file, "email": "sam@example.com"})
        )
        .contains("no access")
    );
    assert!(
        failed(
            &mut s,
            "drive_revoke_permission",
            json!({"file_id": file, "email": "alex@example.com"})
        )
        .contains("owner")
    );

    assert!(
        failed(
            &mut s,
            "drive_move_file",
            json!({"file_id": folder, "folder_id": folder})
        )
        .contains("into itself")
    );
    assert!(
        failed(
            &mut s,
            "drive_move_file",
            json!({"file_id": file, "folder_id": "doc_notes"})
        )
        .contains("not a folder")
    );
    ok(
        &mut s,
        "drive_rename_file",
        json!({"file_id": file, "new_name": "w.txt"}),
    );
    ok(
        &mut s,
        "drive_move_file",
        json!({"file_id": file, "folder_id": "fld_team"}),
    );
    assert_eq!(
        ok(&mut s, "drive_get_file_metadata", json!({"file_id": file}))["parent_id"],
        "fld_team"
    );
    let del = ok(&mut s, "drive_delete_file", json!({"file_id": "fld_team"}));
    assert_eq!(del["deleted"].as_array().unwrap().len(), 4);
    assert!(failed(&mut s, "drive_read_file", json!({"file_id": file})).contains("no file"));
    assert!(failed(&mut s, "drive_read_file", json!({"file_id": folder})).contains("is a folder"));
}

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
