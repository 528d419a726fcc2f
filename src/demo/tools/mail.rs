//! The demo mailbox and its twelve `mail_*` tools: messages carry labels (INBOX, SENT, DRAFTS,
//! TRASH and user labels); sending to the demo user's own address also lands in INBOX.

use std::collections::BTreeSet;

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::{Args, State, ToolError, ToolOut, ToolResult, USER, at, fail, page};

const SYSTEM_LABELS: &[&str] = &["INBOX", "SENT", "DRAFTS", "TRASH", "STARRED", "UNREAD"];

#[derive(Debug, Clone)]
pub struct Message {
    pub id: String,
    pub thread_id: String,
    pub from: String,
    pub to: Vec<String>,
    pub cc: Vec<String>,
    pub subject: String,
    pub body: String,
    pub date: String,
    pub labels: BTreeSet<String>,
    pub read: bool,
    pub attachments: Vec<String>,
}

pub struct Mailbox {
    pub messages: Vec<Message>,
    pub user_labels: BTreeSet<String>,
}

impl Mailbox {
    pub fn seeded(now: OffsetDateTime) -> Mailbox {
        let seed = [
            (
                "m1",
                "priya@example.com",
                "Q4 roadmap review",
                "Hi Alex,\n\nCan you review the Q4 roadmap doc before Thursday's planning meeting? The drive link is in the team folder.\n\nThanks,\nPriya",
                -30,
                false,
                "Projects",
            ),
            (
                "m2",
                "billing@cloudhost.example",
                "Your invoice for November",
                "Your invoice INV-2211 for $412.80 is available. Payment is due on December 15.",
                -180,
                true,
                "Receipts",
            ),
            (
                "m3",
                "sam@example.com",
                "Lunch on Friday?",
                "Want to try the new ramen place on Friday at 12:30?",
                -300,
                false,
                "",
            ),
            (
                "m4",
                "ci@builds.example",
                "Build failed: payments main #482",
                "The build of acme/payments on main failed in test refund::partial_refund_rounds_down.",
                -420,
                true,
                "",
            ),
            (
                "m5",
                "jordan@example.com",
                "Offsite agenda draft",
                "Attached is the first draft of the offsite agenda. Comments welcome before Monday.",
                -1500,
                true,
                "Projects",
            ),
            (
                "m6",
                "newsletter@rustweekly.example",
                "This week in Rust",
                "Highlights: async closures, a faster linker, and a new SQLite crate release.",
                -2900,
                true,
                "",
            ),
        ];
        let messages = seed
            .iter()
            .map(|(id, from, subject, body, minutes, read, label)| {
                let mut labels: BTreeSet<String> = ["INBOX".to_string()].into();
                if !label.is_empty() {
                    labels.insert(label.to_string());
                }
                Message {
                    id: format!("msg_{id}"),
                    thread_id: format!("thr_{id}"),
                    from: from.to_string(),
                    to: vec![USER.into()],
                    cc: vec![],
                    subject: subject.to_string(),
                    body: body.to_string(),
                    date: at(now, *minutes),
                    labels,
                    read: *read,
                    attachments: vec![],
                }
            })
            .collect();
        Mailbox {
            messages,
            user_labels: ["Projects".to_string(), "Receipts".to_string()].into(),
        }
    }

    fn get(&self, id: &str) -> Result<&Message, ToolError> {
        self.messages
            .iter()
            .find(|m| m.id == id)
            .ok_or_else(|| ToolError::Failed(format!("no message with id {id:?}; use mail_list_messages or mail_search_messages to find ids")))
    }

    fn get_mut(&mut self, id: &str) -> Result<&mut Message, ToolError> {
        self.messages
            .iter_mut()
            .find(|m| m.id == id)
            .ok_or_else(|| ToolError::Failed(format!("no message with id {id:?}")))
    }

    /// Newest first.
    fn sorted(&self) -> Vec<&Message> {
        let mut v: Vec<&Message> = self.messages.iter().collect();
        v.sort_by(|a, b| b.date.cmp(&a.date).then(b.id.cmp(&a.id)));
        v
    }
}

pub fn call(s: &mut State, op: &str, a: &Args) -> ToolResult {
    match op {
        "send_message" => {
            let to = a.strings("to");
            let (subject, body) = (a.req("subject")?.to_string(), a.req("body")?.to_string());
            let attachments = a.strings("attachment_file_ids");
            for f in &attachments {
                if !s.drive.exists(f) {
                    return fail(format!("cannot attach {f:?}: no such drive file"));
                }
            }
            let m = deliver(s, to, a.strings("cc"), subject, body, None, attachments);
            Ok(ToolOut::json(json!({"sent": true, "message": summary(&m)})))
        }
        "list_messages" => {
            let label = a.str("label").unwrap_or("INBOX").to_string();
            check_label(s, &label)?;
            let unread = a.bool("unread_only");
            let list: Vec<Value> = s
                .mail
                .sorted()
                .into_iter()
                .filter(|m| m.labels.contains(&label) && !(unread && m.read))
                .map(summary)
                .collect();
            let (items, next) = page(&list, a, 20)?;
            Ok(ToolOut::json(
                json!({"label": label, "messages": items, "next_page_token": next}),
            ))
        }
        "get_message" => {
            let m = s.mail.get(a.req("message_id")?)?;
            let mut v = summary(m);
            if a.str("format") != Some("metadata") {
                v["body"] = json!(m.body);
            }
            Ok(ToolOut::json(v))
        }
        "search_messages" => {
            let q = a.req("query")?.to_lowercase();
            let from = a.str("from").map(str::to_lowercase);
            let (after, before) = (a.str("after"), a.str("before"));
            let hits: Vec<Value> = s
                .mail
                .sorted()
                .into_iter()
                .filter(|m| !m.labels.contains("TRASH"))
                .filter(|m| matches_query(m, &q))
                .filter(|m| {
                    from.as_ref()
                        .is_none_or(|f| m.from.to_lowercase().contains(f))
                })
                .filter(|m| after.is_none_or(|d| m.date.as_str() >= d))
                .filter(|m| before.is_none_or(|d| m.date.as_str() < d))
                .take(a.limit(20))
                .map(summary)
                .collect();
            Ok(ToolOut::json(
                json!({"query": a.req("query")?, "messages": hits}),
            ))
        }
        "reply_to_message" => {
            let orig = s.mail.get(a.req("message_id")?)?.clone();
            let mut to = vec![if orig.from == USER {
                orig.to.first().cloned().unwrap_or_default()
            } else {
                orig.from.clone()
            }];
            if a.bool("reply_all") {
                to.extend(
                    orig.to
                        .iter()
                        .chain(&orig.cc)
                        .filter(|x| *x != USER && !to.contains(x))
                        .cloned()
                        .collect::<Vec<_>>(),
                );
            }
            let subject = prefixed("Re: ", &orig.subject);
            let m = deliver(
                s,
                to,
                vec![],
                subject,
                a.req("body")?.to_string(),
                Some(orig.thread_id),
                vec![],
            );
            Ok(ToolOut::json(json!({"sent": true, "message": summary(&m)})))
        }
        "forward_message" => {
            let orig = s.mail.get(a.req("message_id")?)?.clone();
            let note = a.str("note").unwrap_or("");
            let body = format!(
                "{note}\n\n---------- Forwarded message ----------\nFrom: {}\nSubject: {}\n\n{}",
                orig.from, orig.subject, orig.body
            );
            let m = deliver(
                s,
                a.strings("to"),
                vec![],
                prefixed("Fwd: ", &orig.subject),
                body.trim_start().into(),
                None,
                orig.attachments.clone(),
            );
            Ok(ToolOut::json(json!({"sent": true, "message": summary(&m)})))
        }
        "create_draft" => {
            let (id, date) = (s.id("draft"), s.tick());
            let m = Message {
                thread_id: format!("thr_{id}"),
                id,
                from: USER.into(),
                to: a.strings("to"),
                cc: vec![],
                subject: a.req("subject")?.into(),
                body: a.req("body")?.into(),
                date,
                labels: ["DRAFTS".to_string()].into(),
                read: true,
                attachments: vec![],
            };
            let out = summary(&m);
            s.mail.messages.push(m);
            Ok(ToolOut::json(json!({"draft": out})))
        }
        "send_draft" => {
            let id = a.req("draft_id")?;
            let d = s.mail.get(id)?.clone();
            if !d.labels.contains("DRAFTS") {
                return fail(format!(
                    "{id:?} is not a draft (it has labels {:?})",
                    d.labels
                ));
            }
            if d.to.is_empty() {
                return fail(format!(
                    "draft {id:?} has no recipients; recreate it with \"to\""
                ));
            }
            s.mail.messages.retain(|m| m.id != id);
            let m = deliver(
                s,
                d.to,
                d.cc,
                d.subject,
                d.body,
                Some(d.thread_id),
                d.attachments,
            );
            Ok(ToolOut::json(json!({"sent": true, "message": summary(&m)})))
        }
        "delete_message" => {
            let id = a.req("message_id")?.to_string();
            s.mail.get(&id)?;
            if a.bool("permanent") {
                s.mail.messages.retain(|m| m.id != id);
                return Ok(ToolOut::json(json!({"deleted": id, "permanent": true})));
            }
            let m = s.mail.get_mut(&id)?;
            m.labels.retain(|l| l != "INBOX");
            m.labels.insert("TRASH".into());
            Ok(ToolOut::json(json!({"trashed": id, "labels": m.labels})))
        }
        "list_labels" => {
            let all: Vec<Value> = SYSTEM_LABELS
                .iter()
                .map(|l| (l.to_string(), "system"))
                .chain(s.mail.user_labels.iter().map(|l| (l.clone(), "user")))
                .map(|(l, kind)| {
                    let total = s.mail.messages.iter().filter(|m| has_label(m, &l)).count();
                    let unread = s
                        .mail
                        .messages
                        .iter()
                        .filter(|m| has_label(m, &l) && !m.read)
                        .count();
                    json!({"name": l, "type": kind, "messages": total, "unread": unread})
                })
                .collect();
            Ok(ToolOut::json(json!({"labels": all})))
        }
        "modify_labels" => {
            let (add, remove) = (a.strings("add"), a.strings("remove"));
            for l in &add {
                if !SYSTEM_LABELS.contains(&l.as_str()) {
                    s.mail.user_labels.insert(l.clone());
                }
            }
            let m = s.mail.get_mut(a.req("message_id")?)?;
            for l in remove {
                m.labels.remove(&l);
            }
            m.labels.extend(add);
            Ok(ToolOut::json(
                json!({"message_id": m.id, "labels": m.labels}),
            ))
        }
        "mark_read" => {
            let ids = a.strings("message_ids");
            let read = a.0.get("read").and_then(Value::as_bool).unwrap_or(true);
            for id in &ids {
                s.mail.get(id)?;
            }
            for m in s.mail.messages.iter_mut().filter(|m| ids.contains(&m.id)) {
                m.read = read;
            }
            Ok(ToolOut::json(json!({"updated": ids, "read": read})))
        }
        _ => Err(ToolError::BadParams(format!("unknown tool: mail_{op}"))),
    }
}

/// Stores a sent message (SENT, plus INBOX when the user wrote to themself) and returns it.
fn deliver(
    s: &mut State,
    to: Vec<String>,
    cc: Vec<String>,
    subject: String,
    body: String,
    thread: Option<String>,
    attachments: Vec<String>,
) -> Message {
    let (id, date) = (s.id("msg"), s.tick());
    let mut labels: BTreeSet<String> = ["SENT".to_string()].into();
    if to.iter().chain(&cc).any(|r| r == USER) {
        labels.insert("INBOX".into());
    }
    let m = Message {
        thread_id: thread.unwrap_or_else(|| format!("thr_{id}")),
        id,
        from: USER.into(),
        to,
        cc,
        subject,
        body,
        date,
        labels,
        read: true,
        attachments,
    };
    s.mail.messages.push(m.clone());
    m
}

fn check_label(s: &State, label: &str) -> Result<(), ToolError> {
    if SYSTEM_LABELS.contains(&label) || s.mail.user_labels.contains(label) {
        Ok(())
    } else {
        fail(format!(
            "no label {label:?}; mail_list_labels shows the labels"
        ))
    }
}

fn has_label(m: &Message, l: &str) -> bool {
    match l {
        "UNREAD" => !m.read,
        _ => m.labels.contains(l),
    }
}

fn matches_query(m: &Message, q: &str) -> bool {
    let hay = format!("{} {} {} {}", m.from, m.to.join(" "), m.subject, m.body).to_lowercase();
    q.split_whitespace().all(|w| match w.split_once(':') {
        Some(("from", v)) => m.from.to_lowercase().contains(v),
        Some(("subject", v)) => m.subject.to_lowercase().contains(v),
        Some(("label", v)) => m.labels.iter().any(|l| l.eq_ignore_ascii_case(v)),
        _ => hay.contains(w),
    })
}

fn prefixed(prefix: &str, subject: &str) -> String {
    if subject.starts_with(prefix) {
        subject.into()
    } else {
        format!("{prefix}{subject}")
    }
}

fn summary(m: &Message) -> Value {
    json!({
        "id": m.id, "thread_id": m.thread_id, "from": m.from, "to": m.to, "cc": m.cc,
        "subject": m.subject, "date": m.date, "labels": m.labels, "read": m.read,
        "snippet": m.body.chars().take(80).collect::<String>(), "attachments": m.attachments,
    })
}
