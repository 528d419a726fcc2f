//! `mws serve --stdio`: one client over newline-delimited JSON-RPC on any `AsyncRead` +
//! `AsyncWrite` (stdin/stdout in production, in-memory pipes in tests), answered as HTTP is
//! (`answer/`, `Proxy::handle`). Requests run concurrently; replies are written whole, one per
//! line. Must not print anything but protocol on the writer.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{broadcast, mpsc};
use tokio::task::{JoinHandle, JoinSet};

use crate::mcp::{self, Caller, Era, check, code};
use crate::server::answer::{self, Way};
use crate::server::http::modern;
use crate::server::proxy::held_listing::SessionKey;
use crate::server::proxy::{Proxy, Reply};
use crate::server::relay::sessions::Sessions;
use crate::server::relay::sessions::{cap_client_name, new_session_id};
use crate::server::relay::{logs, subscriptions};
use crate::upstream::related::Level;

pub mod pipes;

/// One stdio client as its lines are read: what the tasks answering it share.
struct Client {
    /// `stdio:` and a fresh id, the session every call of this client is logged under.
    session: String,
    /// The name from `initialize`'s `clientInfo` (capped).
    name: Mutex<Option<String>>,
    /// Set once `initialize` is answered: from then on the client hears about list changes (never
    /// before the answer, which a client must see first).
    initialized: AtomicBool,
    /// A legacy client's `logging/setLevel`: its calls' log messages are relayed (`relay/logs.rs`).
    log_level: Mutex<Option<Level>>,
    /// Set once a request had an integer id too large for `Value`: replies are then scanned for
    /// its placeholder (`mcp::check`).
    big_ids: AtomicBool,
    /// A legacy client's resource subscriptions, kept as a one-session `Sessions`; their updates
    /// go out beside the replies (`relay/subscriptions.rs`).
    subs: Arc<Sessions>,
    sub_id: String,
    /// This process's working directory: the client started mws in its project folder.
    project: Option<Arc<str>>,
}

impl Client {
    fn new() -> std::io::Result<Client> {
        let session = format!("stdio:{}", new_session_id());
        let subs = Arc::new(Sessions::default());
        let sub_id = subs
            .create(None, "", std::time::Instant::now())
            .map_err(std::io::Error::other)?;
        Ok(Client {
            session,
            name: Mutex::new(None),
            initialized: AtomicBool::new(false),
            log_level: Mutex::new(None),
            big_ids: AtomicBool::new(false),
            subs,
            sub_id,
            project: crate::project::of_this_process().map(Arc::from),
        })
    }

    fn initialized(&self) -> bool {
        self.initialized.load(Ordering::Relaxed)
    }
}

/// Serves one client until the reader ends; in-flight requests finish and are answered first.
pub async fn serve<R, W>(proxy: Arc<Proxy>, reader: R, writer: W) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let client = Arc::new(Client::new()?);
    let (tx, rx) = mpsc::unbounded_channel::<Reply>();
    let write_task = tokio::spawn(write_lines(writer, rx, client.clone()));
    let notify_task = spawn_list_changes(&proxy, tx.clone(), client.clone());
    let updates_task = spawn_resource_updates(&proxy, tx.clone(), client.clone());

    let mut tasks = JoinSet::new();
    let mut lines = BufReader::new(reader).lines();
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let msg = match read_message(&line, &client) {
            Ok(msg) => msg,
            Err(resp) => {
                let _ = tx.send(Reply::Msg(resp));
                continue;
            }
        };
        let caller = match caller_of(&msg, &client) {
            Ok(caller) => caller,
            Err(resp) => {
                if let Some(resp) = resp {
                    let _ = tx.send(Reply::Msg(resp));
                }
                continue;
            }
        };
        spawn_answer(&mut tasks, &proxy, msg, caller, &client, &tx);
        // Reap finished tasks so a long session does not accumulate them.
        while tasks.try_join_next().is_some() {}
    }
    while tasks.join_next().await.is_some() {}
    notify_task.abort();
    updates_task.abort();
    if let Some(ended) = client.subs.take(&client.sub_id) {
        subscriptions::release(proxy.upstream(), ended.subscriptions);
    }
    proxy.session_ended(&SessionKey::of(Some(&client.session), None));
    drop(tx);
    write_task.await.map_err(std::io::Error::other)?
}

/// Writes every message on `rx` as one line, until every sender is gone.
async fn write_lines<W>(
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Reply>,
    client: Arc<Client>,
) -> std::io::Result<()>
where
    W: AsyncWrite + Unpin,
{
    while let Some(reply) = rx.recv().await {
        let mut line = match reply {
            Reply::Msg(msg) => serde_json::to_vec(&msg).unwrap_or_default(),
            Reply::Line(line) => line,
        };
        if client.big_ids.load(Ordering::Relaxed) && check::has_big_id(&line) {
            line = check::restore(&line);
        }
        line.push(b'\n');
        writer.write_all(&line).await?;
        writer.flush().await?;
    }
    Ok(())
}

/// Clients that initialized hear about changes of the working set and of the upstream's
/// catalog (a server's new list, a tool held or approved), as HTTP streams do, when the
/// client's listing says so (`Proxy::announces_list_change`).
fn spawn_list_changes(
    proxy: &Arc<Proxy>,
    tx: mpsc::UnboundedSender<Reply>,
    client: Arc<Client>,
) -> JoinHandle<()> {
    let mut ws = proxy.working_set_changes();
    let mut cat = proxy.upstream().changes();
    let proxy = proxy.clone();
    let key = SessionKey::of(Some(&client.session), None);
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
            if client.initialized() && proxy.announces_list_change(&key).await {
                let n = mcp::notification("notifications/tools/list_changed", None);
                if tx.send(Reply::Msg(n)).is_err() {
                    return;
                }
            }
        }
    })
}

/// The upstream's `notifications/resources/updated` for the URIs the client subscribed to, and
/// its prompts and resources list changes once the client initialized.
fn spawn_resource_updates(
    proxy: &Proxy,
    tx: mpsc::UnboundedSender<Reply>,
    client: Arc<Client>,
) -> JoinHandle<()> {
    let up = proxy.upstream().clone();
    let mut notes = up.notifications();
    tokio::spawn(async move {
        loop {
            let msg = match notes.recv().await {
                Ok(msg) => msg,
                Err(broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => return,
            };
            let wants = |u: &str| client.subs.is_subscribed(&client.sub_id, u);
            let note = subscriptions::updated_for(&msg, &wants, None).or_else(|| {
                // A prompts/resources list change, for a client that initialized; the
                // upstream's status is read only for one (not for every progress message).
                if !subscriptions::is_list_change(&msg) {
                    return None;
                }
                let lists = subscriptions::lists(up.as_ref());
                let methods: Vec<&str> = lists.iter().map(|(_, m)| *m).collect();
                subscriptions::list_changed_for(&msg, &methods, None)
                    .filter(|_| client.initialized())
            });
            if let Some(n) = note
                && tx.send(Reply::Msg(n)).is_err()
            {
                return;
            }
        }
    })
}

/// One line as a JSON-RPC message with a valid id and method (a too-large integer id swapped for
/// its placeholder), or the error reply it gets instead.
fn read_message(line: &str, client: &Client) -> Result<Map<String, Value>, Value> {
    let refuse = |code: i64, m: &str| mcp::error_response(&Value::Null, code, m, None);
    let mut msg = match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(m)) => m,
        Ok(Value::Array(_)) => {
            let m = "Invalid request: batch arrays are not supported";
            return Err(refuse(code::INVALID_REQUEST, m));
        }
        Ok(_) => {
            let m = "Invalid request: expected a JSON-RPC 2.0 object";
            return Err(refuse(code::INVALID_REQUEST, m));
        }
        Err(e) => {
            let m = format!("Parse error: the line is not JSON ({e})");
            return Err(refuse(code::PARSE_ERROR, &m));
        }
    };
    match check::id(msg.get("id"), line.as_bytes()).and_then(|big| {
        check::method(&msg)?;
        Ok(big)
    }) {
        Ok(None) => {}
        Ok(Some(placeholder)) => {
            client.big_ids.store(true, Ordering::Relaxed);
            msg.insert("id".into(), placeholder);
        }
        Err(m) => return Err(refuse(code::INVALID_REQUEST, &m)),
    }
    Ok(msg)
}

/// Who sent `msg`: a 2026 request by its validated envelope, a legacy one by what `initialize`
/// and `logging/setLevel` told; else the error reply it gets (none for an invalid 2026
/// notification).
fn caller_of(msg: &Map<String, Value>, client: &Client) -> Result<Caller, Option<Value>> {
    let id = msg.get("id").cloned();
    if modern::is_modern(msg, None) {
        return match modern::validate(msg, None) {
            Ok(env) => Ok(Caller {
                era: Era::Modern,
                client: env.client.or_else(|| lock(&client.name).clone()),
                session: Some(client.session.clone()),
                input: None,
                project: client.project.clone(),
            }),
            Err(e) => Err(id.map(|id| mcp::error_response(&id, e.code, &e.message, e.data))),
        };
    }
    if msg.get("method").and_then(Value::as_str) == Some("initialize") {
        let name = msg
            .get("params")
            .and_then(|p| p.pointer("/clientInfo/name"))
            .and_then(Value::as_str)
            .map(cap_client_name);
        *lock(&client.name) = name;
    }
    if msg.get("method").and_then(Value::as_str) == Some("logging/setLevel") {
        match logs::set_level_params(msg.get("params")) {
            Ok(level) => *lock(&client.log_level) = Some(level),
            Err(e) => {
                let id = id.unwrap_or(Value::Null);
                return Err(Some(mcp::error_response(&id, e.code, &e.message, e.data)));
            }
        }
    }
    Ok(Caller {
        era: Era::Legacy,
        client: lock(&client.name).clone(),
        session: Some(client.session.clone()),
        input: None,
        project: client.project.clone(),
    })
}

/// Decides how `msg` is answered (now, with the log level as it is now), then answers it in a
/// task of its own: a legacy client's (un)subscribe here, anything else through `answer/`.
fn spawn_answer(
    tasks: &mut JoinSet<()>,
    proxy: &Arc<Proxy>,
    msg: Map<String, Value>,
    mut caller: Caller,
    client: &Arc<Client>,
    tx: &mpsc::UnboundedSender<Reply>,
) {
    let way = answer::decide(proxy, &msg, &mut caller, true, *lock(&client.log_level));
    let (proxy, tx, client) = (proxy.clone(), tx.clone(), client.clone());
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let subscribe = caller.era == Era::Legacy
        && matches!(method, "resources/subscribe" | "resources/unsubscribe");
    let initialize = caller.era == Era::Legacy && method == "initialize";
    tasks.spawn(async move {
        if subscribe && let Some(id) = msg.get("id") {
            let up = proxy.upstream().as_ref();
            let (subs, sid) = (&client.subs, Some(client.sub_id.as_str()));
            let resp = subscriptions::answer(up, subs, sid, id, &msg).await;
            let _ = tx.send(Reply::Msg(resp));
            return;
        }
        let reply = if way == Way::Plain {
            proxy.handle_line(msg, &caller).await
        } else {
            // A call's progress and log messages go out before its answer.
            let out = |n: Value| drop(tx.send(Reply::Msg(n)));
            let resp = answer::over_lines(&proxy, msg, &caller, way, out).await;
            resp.map(Reply::Msg)
        };
        if let Some(reply) = reply {
            let _ = tx.send(reply);
        }
        if initialize {
            // Queued behind the answer: a list change now reaches the client after it.
            client.initialized.store(true, Ordering::Relaxed);
        }
    });
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
