//! `mws serve --stdio`: one client over newline-delimited JSON-RPC on any `AsyncRead` +
//! `AsyncWrite` (stdin/stdout in production, in-memory pipes in tests), answered as HTTP is
//! (`answer/`, `Proxy::handle`). Requests run concurrently; replies are written whole, one per
//! line. Must not print anything but protocol on the writer.

use std::sync::{Arc, Mutex};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{broadcast, mpsc};
use tokio::task::JoinSet;

use crate::mcp::{self, Caller, Era, check, code};
use crate::server::answer;
use crate::server::http::modern;
use crate::server::proxy::Proxy;
use crate::server::relay::sessions::Sessions;
use crate::server::relay::sessions::{cap_client_name, new_session_id};
use crate::server::relay::{logs, subscriptions};
use crate::upstream::related::Level;

pub mod pipes;

/// Serves one client until the reader ends; in-flight requests finish and are answered first.
pub async fn serve<R, W>(proxy: Arc<Proxy>, reader: R, writer: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let session = format!("stdio:{}", new_session_id());
    let client: Arc<Mutex<Option<String>>> = Arc::new(Mutex::new(None));
    let initialized = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // A legacy client's `logging/setLevel`: its calls' log messages are relayed (`relay/logs.rs`).
    let log_level: Arc<Mutex<Option<Level>>> = Arc::new(Mutex::new(None));
    let (tx, mut rx) = mpsc::unbounded_channel::<Value>();

    // Set once a request had an integer id too large for `Value`: replies are then scanned for
    // its placeholder (`mcp::check`).
    let big_ids = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let write_task = tokio::spawn({
        let big_ids = big_ids.clone();
        async move {
            let mut writer = writer;
            while let Some(msg) = rx.recv().await {
                let mut line = serde_json::to_vec(&msg).unwrap_or_default();
                if big_ids.load(std::sync::atomic::Ordering::Relaxed) && check::has_big_id(&line) {
                    line = check::restore(&line);
                }
                line.push(b'\n');
                writer.write_all(&line).await?;
                writer.flush().await?;
            }
            Ok::<_, std::io::Error>(())
        }
    });

    // Clients that initialized hear about changes of the working set and of the upstream's
    // catalog (a server's new list, a tool held or approved), as HTTP streams do.
    let notify_task = {
        let tx = tx.clone();
        let initialized = initialized.clone();
        let mut ws = proxy.working_set_changes();
        let mut cat = proxy.upstream().changes();
        tokio::spawn(async move {
            ws.borrow_and_update();
            cat.borrow_and_update();
            loop {
                let changed = tokio::select! {
                    r = ws.changed() => r.is_ok(),
                    r = cat.changed() => r.is_ok(),
                };
                if !changed {
                    return;
                }
                if initialized.load(std::sync::atomic::Ordering::Relaxed) {
                    let n = mcp::notification("notifications/tools/list_changed", None);
                    if tx.send(n).is_err() {
                        return;
                    }
                }
            }
        })
    };

    // A legacy client's resource subscriptions, kept as a one-session `Sessions`; their updates go
    // out beside the replies (`relay/subscriptions.rs`).
    let subs = Arc::new(Sessions::default());
    let sub_id = subs
        .create(None, "", std::time::Instant::now())
        .map_err(std::io::Error::other)?;
    let updates_task = {
        let (tx, subs, sid) = (tx.clone(), subs.clone(), sub_id.clone());
        let (up, initialized) = (proxy.upstream().clone(), initialized.clone());
        let mut notes = up.notifications();
        tokio::spawn(async move {
            loop {
                let msg = match notes.recv().await {
                    Ok(msg) => msg,
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(_) => return,
                };
                let wants = |u: &str| subs.is_subscribed(&sid, u);
                let note = subscriptions::updated_for(&msg, &wants, None).or_else(|| {
                    // A prompts/resources list change, for a client that initialized; the
                    // upstream's status is read only for one (not for every progress message).
                    if !subscriptions::is_list_change(&msg) {
                        return None;
                    }
                    let lists = subscriptions::lists(up.as_ref());
                    let methods: Vec<&str> = lists.iter().map(|(_, m)| *m).collect();
                    subscriptions::list_changed_for(&msg, &methods, None)
                        .filter(|_| initialized.load(std::sync::atomic::Ordering::Relaxed))
                });
                if let Some(n) = note
                    && tx.send(n).is_err()
                {
                    return;
                }
            }
        })
    };

    let mut tasks = JoinSet::new();
    let mut lines = BufReader::new(reader).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let mut msg = match serde_json::from_str::<Value>(&line) {
            Ok(Value::Object(m)) => m,
            Ok(Value::Array(_)) => {
                let m = "Invalid request: batch arrays are not supported";
                let _ = tx.send(mcp::error_response(
                    &Value::Null,
                    code::INVALID_REQUEST,
                    m,
                    None,
                ));
                continue;
            }
            Ok(_) => {
                let m = "Invalid request: expected a JSON-RPC 2.0 object";
                let _ = tx.send(mcp::error_response(
                    &Value::Null,
                    code::INVALID_REQUEST,
                    m,
                    None,
                ));
                continue;
            }
            Err(e) => {
                let m = format!("Parse error: the line is not JSON ({e})");
                let _ = tx.send(mcp::error_response(
                    &Value::Null,
                    code::PARSE_ERROR,
                    &m,
                    None,
                ));
                continue;
            }
        };
        match check::id(msg.get("id"), line.as_bytes()).and_then(|big| {
            check::method(&msg)?;
            Ok(big)
        }) {
            Ok(None) => {}
            Ok(Some(placeholder)) => {
                big_ids.store(true, std::sync::atomic::Ordering::Relaxed);
                msg.insert("id".into(), placeholder);
            }
            Err(m) => {
                let _ = tx.send(mcp::error_response(
                    &Value::Null,
                    code::INVALID_REQUEST,
                    &m,
                    None,
                ));
                continue;
            }
        }
        let id = msg.get("id").cloned();
        let caller = if modern::is_modern(&msg, None) {
            match modern::validate(&msg, None) {
                Ok(env) => Caller {
                    era: Era::Modern,
                    client: env.client.or_else(|| lock(&client).clone()),
                    session: Some(session.clone()),
                    input: None,
                },
                Err(e) => {
                    if let Some(id) = id {
                        let _ = tx.send(mcp::error_response(&id, e.code, &e.message, e.data));
                    }
                    continue;
                }
            }
        } else {
            if msg.get("method").and_then(Value::as_str) == Some("initialize") {
                let name = msg
                    .get("params")
                    .and_then(|p| p.pointer("/clientInfo/name"))
                    .and_then(Value::as_str)
                    .map(cap_client_name);
                *lock(&client) = name;
                initialized.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            if msg.get("method").and_then(Value::as_str) == Some("logging/setLevel") {
                match logs::set_level_params(msg.get("params")) {
                    Ok(level) => *lock(&log_level) = Some(level),
                    Err(e) => {
                        let id = id.unwrap_or(Value::Null);
                        let _ = tx.send(mcp::error_response(&id, e.code, &e.message, e.data));
                        continue;
                    }
                }
            }
            Caller {
                era: Era::Legacy,
                client: lock(&client).clone(),
                session: Some(session.clone()),
                input: None,
            }
        };
        let mut caller = caller;
        let way = answer::decide(&proxy, &msg, &mut caller, true, *lock(&log_level));
        let proxy = proxy.clone();
        let tx = tx.clone();
        let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
        let subscribe = caller.era == Era::Legacy
            && matches!(method, "resources/subscribe" | "resources/unsubscribe");
        let (subs, sub_id) = (subs.clone(), sub_id.clone());
        tasks.spawn(async move {
            if subscribe && let Some(id) = msg.get("id") {
                let up = proxy.upstream().as_ref();
                let resp = subscriptions::answer(up, &subs, Some(&sub_id), id, &msg).await;
                let _ = tx.send(resp);
                return;
            }
            // A call's progress and log messages go out before its answer.
            let out = |n: Value| drop(tx.send(n));
            if let Some(resp) = answer::over_lines(&proxy, msg, &caller, way, out).await {
                let _ = tx.send(resp);
            }
        });
        // Reap finished tasks so a long session does not accumulate them.
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
    notify_task.abort();
    updates_task.abort();
    if let Some(ended) = subs.take(&sub_id) {
        subscriptions::release(proxy.upstream(), ended.subscriptions);
    }
    drop(tx);
    write_task.await.map_err(std::io::Error::other)?
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
