//! The proxy's downstream side end to end: a real `/mcp` listener on loopback in front of the
//! in-memory fake upstream, driven over HTTP, stdio pipes and the Python SDK client.

mod code_mode;
mod conformance;
mod guarded;
mod held;
mod hostile;
mod http;
mod legacy;
mod meta;
mod names;
mod passthrough;
mod python;
mod results;
mod serve_cmd;
mod sessions;
mod stable_listing;
mod status_page;
mod stdio;
mod streams;
mod subscriptions;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mws::config::Config;
use mws::server::{Proxy, app, working_set};
use mws::store::{LogSink, Store};
use mws::upstream::fake::FakeUpstream;
use serde_json::{Value, json};

pub const V: &str = "2026-07-28";

/// A catalog in the shape of a multi-backend gateway, with vendor fields and `execution`.
pub fn tools() -> Vec<Value> {
    vec![
        json!({"name": "mail_send_message", "description": "Send an email message to recipients.\n\nMore.",
               "inputSchema": {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                 "title": "mail_send_messageArguments",
                 "properties": {"to": {"title": "To", "type": "string"},
                                "cc": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": null}},
                 "required": ["to"]},
               "annotations": {"destructiveHint": true},
               "execution": {"taskSupport": "forbidden"}, "x-vendor": {"tier": "gold"}}),
        json!({"name": "mail_list_labels", "description": "List the mailbox labels.",
               "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
        json!({"name": "calendar_create_event", "description": "Create a calendar event (meeting, appointment).",
               "inputSchema": {"type": "object", "properties": {"title": {"type": "string"}}}}),
        json!({"name": "calendar_list_events", "description": "List upcoming calendar events.",
               "inputSchema": {"type": "object"}}),
        json!({"name": "drive_fail_upload", "description": "Upload a file (always fails).",
               "inputSchema": {"type": "object"}}),
        json!({"name": "get-sum", "description": "Add two numbers.", "inputSchema": {"type": "object"}}),
    ]
}

pub struct Harness {
    pub url: String,
    pub proxy: Arc<Proxy>,
    pub fake: Arc<FakeUpstream>,
    pub db: PathBuf,
    pub log: LogSink,
    _dir: tempfile::TempDir,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Harness {
    /// Starts a proxy whose working set (in the database) is `working_set`.
    pub async fn start(working_set: &[&str]) -> Harness {
        Harness::start_with(working_set, mws::config::ListingUpdates::Session).await
    }

    /// `start`, with every change shown to every session (`listingUpdates: "live"`).
    pub async fn start_live(working_set: &[&str]) -> Harness {
        Harness::start_with(working_set, mws::config::ListingUpdates::Live).await
    }

    /// `start` with `listingUpdates` set to `updates`.
    pub async fn start_with(working_set: &[&str], updates: mws::config::ListingUpdates) -> Harness {
        Harness::start_configured(working_set, |c| c.listing_updates = updates).await
    }

    /// `start` with the config changed by `change` (the state dir is the harness's).
    pub async fn start_configured(
        working_set: &[&str],
        change: impl FnOnce(&mut Config),
    ) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("state.db");
        set_working_set(&db, working_set);
        let fake = FakeUpstream::new(tools());
        let log = LogSink::spawn(&db);
        let config = Config {
            state_dir: dir.path().to_path_buf(),
            backend_hints: [("mail".to_string(), "mailbox and filters".to_string())].into(),
            // A small catalog: "auto" would list it whole; these tests are about the meta-tools.
            listing: mws::config::Listing::WorkingSet,
            ..Config::default()
        };
        let mut config = config;
        change(&mut config);
        let proxy = Proxy::new(
            fake.clone(),
            config,
            working_set::watch(&db),
            Some(log.clone()),
        );
        let listener = app::bind("127.0.0.1", 0).await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(app::serve(listener, proxy.clone(), async {
            let _ = rx.await;
        }));
        Harness {
            url,
            proxy,
            fake,
            db,
            log,
            _dir: dir,
            stop: Some(tx),
        }
    }

    /// Everything logged so far is in the database.
    pub fn flush(&self) {
        assert!(self.log.flush(Duration::from_secs(10)));
    }

    pub fn query(&self, sql: &str) -> Vec<Vec<Value>> {
        let store = Store::open(&self.db).unwrap();
        let mut stmt = store.conn().prepare(sql).unwrap();
        let n = stmt.column_count();
        stmt.query_map([], |r| {
            (0..n)
                .map(|i| {
                    Ok(match r.get_ref(i)? {
                        rusqlite::types::ValueRef::Null => Value::Null,
                        rusqlite::types::ValueRef::Integer(v) => json!(v),
                        rusqlite::types::ValueRef::Real(v) => json!(v),
                        rusqlite::types::ValueRef::Text(t) => json!(String::from_utf8_lossy(t)),
                        rusqlite::types::ValueRef::Blob(_) => json!("<blob>"),
                    })
                })
                .collect()
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

/// Replaces the working set the way `mws promote` does: one transaction from another connection.
pub fn set_working_set(db: &std::path::Path, tools: &[&str]) {
    drop(Store::open(db).unwrap());
    let mut conn = rusqlite::Connection::open(db).unwrap();
    conn.busy_timeout(Duration::from_secs(10)).unwrap();
    let tx = conn.transaction().unwrap();
    tx.execute("DELETE FROM working_set", []).unwrap();
    for (i, t) in tools.iter().enumerate() {
        tx.execute(
            "INSERT INTO working_set (tool, position, reason, since) VALUES (?1, ?2, 'promoted', '2026-11-29T00:00:00.000Z')",
            rusqlite::params![t, i as i64],
        )
        .unwrap();
    }
    tx.commit().unwrap();
}

/// A modern request body with the `_meta` envelope.
pub fn modern(id: i64, method: &str, mut params: Value) -> Value {
    let envelope = json!({
        "io.modelcontextprotocol/protocolVersion": V,
        "io.modelcontextprotocol/clientInfo": {"name": "test-client", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    match params.get_mut("_meta").and_then(Value::as_object_mut) {
        Some(m) => {
            for (k, v) in envelope.as_object().unwrap() {
                m.insert(k.clone(), v.clone());
            }
        }
        None => params["_meta"] = envelope,
    }
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}
