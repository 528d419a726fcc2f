//! The stdio wire: one child process speaking newline-delimited JSON-RPC, requests correlated by
//! id, notifications routed out, stderr into our log, and a restart with back-off after the child
//! exits (the lines themselves: `lines.rs`). Must not decide eras or retry requests.

use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::BufReader;
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;

use super::wire::{OnNotification, Outgoing, Wire, WireError};
use crate::config::StdioUpstream;
use crate::mcp::raw::Answer;

mod io;
mod lines;

use lines::{Pending, PendingGuard, Waiter, route_line, write_line};

/// Wait before the second restart in a row; it doubles per further exit. Raising it spares a
/// crash-looping command, lowering it brings a flaky one back sooner.
const BACKOFF_START: Duration = Duration::from_millis(250);
/// The longest wait between restarts.
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// `None` once mws closed it to stop the child.
type Stdin = Arc<tokio::sync::Mutex<Option<ChildStdin>>>;

/// How long a child may take to exit after its input is closed when mws stops, before it is
/// killed. Raising it lets a child finish more work on the way out; it delays mws's exit.
pub const CHILD_EXIT_WAIT: Duration = Duration::from_secs(1);

struct Live {
    child: Child,
    stdin: Stdin,
    pending: Pending,
    /// Set by the reader when stdout closes (the child exited or closed it).
    dead: Arc<Mutex<Option<String>>>,
    /// The child's last stderr lines.
    tail: io::SharedTail,
    /// The stdout reader; it ends after setting `dead`.
    reader: tokio::task::JoinHandle<()>,
}

/// `dead`'s reason when the child simply closed its stdout.
const CLOSED: &str = "it closed its output";

#[derive(Default)]
struct Restarts {
    /// Exits since the child last answered after negotiating.
    exits: u32,
    last_exit: Option<Instant>,
    /// Why the child last stopped or could not start, for the back-off error.
    last_why: Option<String>,
}

pub struct StdioWire {
    cfg: StdioUpstream,
    live: tokio::sync::Mutex<Option<Live>>,
    /// The running child's stdin and the id of the `subscriptions/listen` open on it, for
    /// `listen` (which cannot wait for `live`).
    listener: Mutex<(Option<Stdin>, Option<Value>)>,
    generation: AtomicU64,
    restarts: Mutex<Restarts>,
    on_note: OnNotification,
}

impl StdioWire {
    pub fn new(cfg: StdioUpstream, on_note: OnNotification) -> StdioWire {
        StdioWire {
            cfg,
            live: tokio::sync::Mutex::new(None),
            listener: Mutex::default(),
            generation: AtomicU64::new(0),
            restarts: Mutex::new(Restarts::default()),
            on_note,
        }
    }

    /// The command line as it may be shown (URLs in it masked by `redact::text`).
    fn describe(&self) -> String {
        super::redact::text(
            &std::iter::once(self.cfg.command.as_str())
                .chain(self.cfg.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        )
    }

    fn spawn(&self) -> Result<Live, WireError> {
        let mut cmd = Command::new(&self.cfg.command);
        cmd.args(&self.cfg.args)
            .envs(&self.cfg.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        die_with_parent(&mut cmd);
        if let Some(cwd) = &self.cfg.cwd {
            cmd.current_dir(cwd);
        }
        let mut child = cmd.spawn().map_err(|e| {
            WireError::Down(format!("cannot start upstream `{}`: {e}", self.describe()))
        })?;
        let stdin: Stdin = Arc::new(tokio::sync::Mutex::new(child.stdin.take()));
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        let pending: Pending = Arc::default();
        let dead: Arc<Mutex<Option<String>>> = Arc::default();
        let tail = io::SharedTail::default();
        let copier = tokio::spawn(io::copy_stderr(
            BufReader::new(stderr),
            self.cfg.command.clone(),
            tail.clone(),
        ));
        let (p, d, w, note, t, shown) = (
            pending.clone(),
            dead.clone(),
            stdin.clone(),
            self.on_note.clone(),
            tail.clone(),
            self.describe(),
        );
        let reader = tokio::spawn(async move {
            let mut out = BufReader::new(stdout);
            let mut buf = Vec::new();
            let cap = super::MAX_MESSAGE_BYTES;
            let why = loop {
                match io::read_line(&mut out, &mut buf, cap).await {
                    Ok(Some(false)) => route_line(&buf, &p, &w, &note, &shown).await,
                    Ok(Some(true)) => {
                        break format!(
                            "it wrote a line larger than {}, the cap on one upstream message, \
                             and was stopped",
                            super::cap_text()
                        );
                    }
                    Ok(None) => break CLOSED.to_string(),
                    Err(e) => break format!("reading its output failed: {e}"),
                }
            };
            drop(out);
            // Its last words on stderr come with the news of its end.
            let _ = tokio::time::timeout(io::STDERR_DRAIN, copier).await;
            let lines = t.lock().unwrap().joined(" | ");
            if !lines.is_empty() {
                tracing::warn!(target: "mws::upstream",
                    "upstream `{shown}` stopped ({why}); its last stderr lines: {lines}");
            }
            d.lock().unwrap().get_or_insert(why);
            // Dropping the senders fails every waiting request at once.
            p.lock().unwrap().clear();
        });
        // A new child has no listen open yet.
        *self.listener.lock().unwrap() = (Some(stdin.clone()), None);
        self.generation.fetch_add(1, Ordering::SeqCst);
        Ok(Live {
            child,
            stdin,
            pending,
            dead,
            tail,
            reader,
        })
    }

    /// Why the child is gone, if it is (its exit status when it has exited).
    async fn gone(live: &mut Live) -> Option<String> {
        let exited = matches!(live.child.try_wait(), Ok(Some(_)));
        // The common case, before every request: running, its output open (one `wait4`).
        if !exited && live.dead.lock().unwrap().is_none() {
            return None;
        }
        if exited && !live.reader.is_finished() {
            // Let the reader record why and what the child said last.
            let _ = tokio::time::timeout(io::STDERR_DRAIN * 2, &mut live.reader).await;
        }
        let reason = live.dead.lock().unwrap().clone();
        let why = match (reason, live.child.try_wait()) {
            (Some(r), _) if r != CLOSED => r,
            (_, Ok(Some(status))) => format!("it exited ({status})"),
            (r, _) => r?,
        };
        Some(why)
    }

    fn note_exit(&self, why: String) {
        let mut r = self.restarts.lock().unwrap();
        r.exits += 1;
        r.last_exit = Some(Instant::now());
        r.last_why = Some(why);
    }

    /// How long until the next restart is allowed.
    fn backoff_left(&self) -> Option<Duration> {
        let r = self.restarts.lock().unwrap();
        if r.exits < 2 {
            return None;
        }
        let wait = BACKOFF_START
            .saturating_mul(1 << (r.exits - 2).min(16))
            .min(BACKOFF_MAX);
        let since = r.last_exit?.elapsed();
        (since < wait).then(|| wait - since)
    }
}

impl StdioWire {
    /// Sends a request and waits for its answer, handed to the waiter `waiter` makes.
    async fn exchange<T>(
        &self,
        out: Outgoing<'_>,
        waiter: fn(oneshot::Sender<Result<T, WireError>>) -> Waiter,
    ) -> Result<T, WireError> {
        let key = out.msg.get("id").map(Value::to_string).unwrap_or_default();
        let (rx, pending, stdin, dead, tail) = {
            let live = self.live.lock().await;
            let Some(l) = live.as_ref() else {
                return Err(WireError::Down("upstream process is not running".into()));
            };
            let (tx, rx) = oneshot::channel();
            l.pending.lock().unwrap().insert(key.clone(), waiter(tx));
            let dead = l.dead.clone();
            (rx, l.pending.clone(), l.stdin.clone(), dead, l.tail.clone())
        };
        let _guard = PendingGuard(&pending, key);
        write_line(&stdin, out.msg).await?;
        match rx.await {
            Ok(answer) => answer,
            Err(_) => {
                let why = dead.lock().unwrap().clone();
                let why = with_tail(why.unwrap_or_else(|| CLOSED.into()), &tail);
                Err(WireError::Down(format!(
                    "upstream `{}` exited before answering {}: {why}",
                    self.describe(),
                    out.method
                )))
            }
        }
    }
}

#[async_trait::async_trait]
impl Wire for StdioWire {
    async fn connect(&self) -> Result<u64, WireError> {
        let mut live = self.live.lock().await;
        if let Some(l) = live.as_mut() {
            match Self::gone(l).await {
                None => return Ok(self.generation.load(Ordering::SeqCst)),
                Some(why) => {
                    tracing::warn!(target: "mws::upstream", "upstream `{}` stopped: {why}; restarting", self.describe());
                    // The reader showed the stderr tail; errors carry it.
                    let why = with_tail(why, &l.tail);
                    *live = None;
                    self.note_exit(why);
                }
            }
        }
        if let Some(left) = self.backoff_left() {
            let why = self.restarts.lock().unwrap().last_why.clone();
            return Err(WireError::Down(format!(
                "upstream `{}` keeps exiting ({}); next restart in {} ms",
                self.describe(),
                why.as_deref().unwrap_or("no reason known"),
                left.as_millis()
            )));
        }
        let l = self
            .spawn()
            .inspect_err(|e| self.note_exit(e.to_string()))?;
        *live = Some(l);
        Ok(self.generation.load(Ordering::SeqCst))
    }

    async fn request(&self, out: Outgoing<'_>) -> Result<(u16, Value), WireError> {
        Ok((200, self.exchange(out, Waiter::Tree).await?))
    }

    async fn request_result(&self, out: Outgoing<'_>) -> Result<(u16, Answer), WireError> {
        Ok((200, self.exchange(out, Waiter::Kept).await?))
    }

    async fn notify(&self, out: Outgoing<'_>) -> Result<(), WireError> {
        let stdin = match self.live.lock().await.as_ref() {
            Some(l) => l.stdin.clone(),
            None => return Err(WireError::Down("upstream process is not running".into())),
        };
        write_line(&stdin, out.msg).await
    }

    async fn reset(&self, restart: bool) {
        if restart && let Some(mut l) = self.live.lock().await.take() {
            let _ = l.child.start_kill();
            let _ = l.child.wait().await;
        }
    }

    /// A 2026-07-28 child sends `list_changed` and resource updates only for an open
    /// `subscriptions/listen`: on stdio that is a request whose notifications come on stdout with
    /// all the others, and which is never answered while it lasts. The listen it replaces (another
    /// filter) is cancelled after it, so nothing is missed in between. A 2025 child (`None`)
    /// sends its notifications unasked.
    fn listen(&self, listen: Option<Value>, _version: &str) {
        let (Some(req), Ok(rt)) = (listen, tokio::runtime::Handle::try_current()) else {
            return;
        };
        let (stdin, old) = {
            let mut l = self.listener.lock().unwrap();
            let Some(stdin) = l.0.clone() else { return };
            (
                stdin,
                l.1.replace(req.get("id").cloned().unwrap_or(Value::Null)),
            )
        };
        rt.spawn(async move {
            if write_line(&stdin, &req).await.is_err() {
                return;
            }
            if let Some(old) = old {
                let params =
                    serde_json::json!({"requestId": old, "reason": "replaced by a new listen"});
                let cancel = crate::mcp::notification("notifications/cancelled", Some(params));
                let _ = write_line(&stdin, &cancel).await;
            }
        });
    }

    fn probe_failure_means_legacy(&self) -> bool {
        true
    }

    /// MCP's stdio shutdown: close the child's input, let it exit, kill it if it does not.
    async fn stop(&self) {
        let Some(mut l) = self.live.lock().await.take() else {
            return;
        };
        drop(l.stdin.lock().await.take());
        if tokio::time::timeout(CHILD_EXIT_WAIT, l.child.wait())
            .await
            .is_err()
        {
            let _ = l.child.start_kill();
            let _ = l.child.wait().await;
        }
    }

    fn healthy(&self) {
        *self.restarts.lock().unwrap() = Restarts::default();
    }
}

/// `why` followed by the child's last stderr lines, if it wrote any.
fn with_tail(why: String, tail: &io::SharedTail) -> String {
    let lines = tail.lock().unwrap().joined(" | ");
    if lines.is_empty() {
        why
    } else {
        format!("{why}; its last stderr lines: {lines}")
    }
}

/// Asks Linux to send the child SIGTERM when mws dies without stopping it (SIGKILL, a crash).
/// `kill_on_drop` covers every orderly exit; without this, an upstream that does not exit when
/// its stdin closes (a server with a timer running) would outlive a killed mws. The signal fires
/// when the *thread* that spawned the child ends: mws spawns from its runtime's thread (or its
/// workers), which live as long as the process.
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    // SAFETY: the closure runs in the child between fork and exec and only calls prctl(2), which
    // is async-signal-safe and touches no memory shared with the parent.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

#[cfg(test)]
mod tests;
