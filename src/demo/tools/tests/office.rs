//! Mail, calendar and drive tools: effects and failures.

use serde_json::json;

use super::{failed, ok, state};

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
