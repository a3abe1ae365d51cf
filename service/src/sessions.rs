//! Sessions on the server: one `warden session-worker` process per session (a jail must be created
//! by a single-threaded process, and the server has threads), the table of live sessions, their
//! owners, their cap, and their ends (by their owner, idle, too old, lost, at shutdown).
//!
//! Each session has an actor task that owns its worker's pipes and serves one request at a time
//! (requests wait their turn in order). A request runs to its end in the actor even when the
//! client that sent it hangs up, so the worker's answers never fall out of step with its requests;
//! a session is ended (its worker killed, its jail with it) only on purpose: `DELETE`, the idle
//! timeout, the maximum lifetime, a caller's hard limit (`timeout_ms` of MCP), a lost interpreter,
//! or shutdown. The actor writes the audit line and metrics of every cell and of the session's end.
//!
//! Owns: the session table, admission of sessions (`sessions.max_sessions`, per client), the
//! worker side of the protocol as the server sees it (`warden_worker::wire` defines it). Does not
//! own: the session itself (`warden_gateway::session`), HTTP or MCP.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::{mpsc, watch};
use warden_gateway::pipeline::AppliedLimits;
use warden_gateway::session::{CellRecord, CellStatus};
use warden_policy::CheckRecord;

use super::audit::{AuditLog, AuditRecord};
use super::config::{RegisteredPolicy, SessionLimits};
use super::executor::{ExecError, Executor, JobDir};
use super::metrics::Metrics;
use super::ServiceError;
use warden_worker::wire::{Claim, InputFile, SessionJob, WorkerAnswer, WorkerRequest};

/// How long a session's worker may take to start its jail and interpreter and place its inputs.
const START_TIMEOUT: Duration = Duration::from_secs(90);
/// How long writing one request to a worker may take (it reads between requests).
const SEND_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a worker may take to close its session (the driver's exit, the work dir's copy back).
const CLOSE_TIMEOUT: Duration = Duration::from_secs(15);
/// The jail's own bound on a session's life goes this far past `sessions.max_lifetime_ms`: the
/// server ends a session first, cleanly.
const LIFETIME_SLACK: Duration = Duration::from_secs(30);
/// Chunks of streamed output held for a slow reader before the cell waits for it.
const CHUNK_BUFFER: usize = 256;

/// A streamed piece of a cell's output.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// `stdout` or `stderr`.
    pub name: String,
    pub text: String,
}

/// Why and how a session ended.
#[derive(Debug, Clone)]
pub struct EndSummary {
    /// `closed` (its owner), `idle_timeout`, `max_lifetime`, `timeout` (a cell did not stop, or
    /// a caller's hard limit), `session_lost`, `memory_limit`, `output_limit`, `shutdown`,
    /// `cancelled`, `reset`.
    pub reason: String,
    pub execution_count: u64,
    /// The whole session's usage, when its jail reported it (a killed worker reports none).
    pub usage: Option<warden_jail::Usage>,
}

#[derive(Debug, Clone, Copy)]
struct EndRequest {
    reason: &'static str,
    /// Close the session cleanly when it is idle (a running cell is always interrupted).
    graceful: bool,
}

/// What an actor says about one request.
enum Answer {
    Chunk(Chunk),
    Final(WorkerAnswer),
    /// The request has no answer: the session ended under it (the message says how).
    Lost(String),
}

struct Request {
    op: WorkerRequest,
    /// Past this, the worker is killed and the cell reported as a timeout (the session ends).
    hard_limit: Option<Duration>,
    client: String,
    endpoint: String,
    answers: mpsc::Sender<Answer>,
}

#[derive(Debug)]
struct Activity {
    last: Instant,
    /// Requests sent and not answered yet (queued or running).
    pending: usize,
    execution_count: u64,
}

/// A live session, as the table holds it.
#[derive(Debug)]
pub struct Handle {
    pub id: String,
    /// Who may use it: `token:<name>`, `uid:<uid>`, or an MCP connection.
    pub owner: String,
    /// The registered name of its policy, and the policy's digest.
    pub policy: String,
    pub policy_sha256: String,
    pub created: Instant,
    /// RFC 3339.
    pub created_at: String,
    pub limits: AppliedLimits,
    pub layers: warden_jail::Layers,
    pid: u32,
    activity: Mutex<Activity>,
    commands: mpsc::Sender<Request>,
    end: watch::Sender<Option<EndRequest>>,
    done: watch::Receiver<Option<EndSummary>>,
}

impl Handle {
    /// What `GET /v1/sessions` says of it.
    pub fn describe(&self, limits: &SessionLimits) -> Value {
        let (idle_ms, busy, count) = self.activity.lock().map_or((0, false, 0), |a| {
            (millis(a.last.elapsed()), a.pending > 0, a.execution_count)
        });
        json!({
            "id": self.id,
            "policy": self.policy,
            "policy_sha256": self.policy_sha256,
            "created_at": self.created_at,
            "age_ms": millis(self.created.elapsed()),
            "idle_ms": idle_ms,
            "busy": busy,
            "execution_count": count,
            "limits": self.limits,
            "idle_timeout_ms": millis(limits.idle_timeout),
            "expires_in_ms": millis(limits.max_lifetime.saturating_sub(self.created.elapsed())),
        })
    }

    fn touch(&self) {
        if let Ok(mut activity) = self.activity.lock() {
            activity.last = Instant::now();
        }
    }
}

#[derive(Debug, Default)]
struct Table {
    live: BTreeMap<String, Arc<Handle>>,
    /// Sessions being started, by owner (they count against the caps).
    starting: BTreeMap<String, usize>,
}

impl Table {
    fn total(&self) -> usize {
        self.live.len() + self.starting.values().sum::<usize>()
    }

    fn of(&self, owner: &str) -> usize {
        self.live.values().filter(|h| h.owner == owner).count()
            + self.starting.get(owner).copied().unwrap_or(0)
    }
}

/// The server's sessions.
#[derive(Debug)]
pub struct Sessions {
    pub limits: SessionLimits,
    table: Mutex<Table>,
    closed: AtomicBool,
    metrics: Arc<Metrics>,
    audit: Arc<AuditLog>,
    /// This server's boot epoch ([`boot_epoch`]), in the ids of its sessions when it has a node.
    epoch: u64,
}

/// What a new session is made of.
pub struct NewSession<'a> {
    pub owner: &'a str,
    pub client: &'a str,
    pub policy_name: &'a str,
    pub registered: &'a RegisteredPolicy,
    pub limits: warden_gateway::pipeline::CallerLimits,
    pub inputs: Vec<InputFile>,
    /// A pooled jail to use instead of starting one (`pool.rs`).
    pub warm: Option<crate::pool::Warm>,
}

impl Sessions {
    pub fn new(
        limits: SessionLimits,
        epoch: u64,
        metrics: Arc<Metrics>,
        audit: Arc<AuditLog>,
    ) -> Self {
        Self {
            limits,
            table: Mutex::new(Table::default()),
            closed: AtomicBool::new(false),
            metrics,
            audit,
            epoch,
        }
    }

    /// Where the session `id`, which this server does not hold for the caller, is: see
    /// [`Elsewhere`]; `None` means no such session (404).
    pub fn elsewhere(&self, id: &str) -> Option<Elsewhere> {
        elsewhere(id, node(), self.epoch)
    }

    /// Sessions alive or starting.
    pub fn count(&self) -> usize {
        self.table.lock().map_or(0, |t| t.total())
    }

    /// Starts a session in a fresh worker. Refused when sessions are off, at the cap (global or
    /// the owner's), or shutting down.
    pub async fn create(
        self: &Arc<Self>,
        executor: &Executor,
        new: NewSession<'_>,
    ) -> Result<Arc<Handle>, ServiceError> {
        let reservation = self.reserve(new.owner)?;
        let pooled = new.warm.is_some();
        let (child, stdin, stdout, stderr, dir) = match new.warm {
            Some(warm) => {
                let parts = warm.into_session_parts();
                (
                    parts.child,
                    parts.stdin,
                    parts.stdout,
                    parts.stderr,
                    parts.dir,
                )
            }
            None => {
                let (mut child, dir) =
                    executor.spawn_session_worker().map_err(|err| match err {
                        ExecError::ShuttingDown => shutting_down(),
                        err => {
                            ServiceError::Internal(format!("the session could not start: {err}"))
                        }
                    })?;
                let (Some(stdin), Some(stdout), Some(stderr)) =
                    (child.stdin.take(), child.stdout.take(), child.stderr.take())
                else {
                    return Err(ServiceError::Internal(
                        "the session worker's pipes are missing".to_owned(),
                    ));
                };
                // Diagnostics only; drained so the worker never blocks on it.
                let stderr = tokio::spawn(super::executor::read_capped(stderr, 64 * 1024));
                (child, stdin, BufReader::new(stdout), stderr, dir)
            }
        };
        let pid = child.id().unwrap_or(0);
        let mut worker = Worker {
            child,
            stdin: Some(stdin),
            stdout,
            line_cap: answer_cap(&new.registered.policy),
            _dir: dir,
            stderr: Some(stderr),
        };
        let lifetime = self.limits.max_lifetime + LIFETIME_SLACK;
        let job = SessionJob {
            policy_text: new.registered.text.clone(),
            policy_base_dir: new.registered.base_dir.clone(),
            policy_sha256: new.registered.policy.sha256.clone(),
            limits: new.limits,
            inputs: new.inputs,
            lifetime_ms: millis(lifetime),
        };
        // A pooled jail is claimed for the session; a fresh worker reads the job itself.
        let line = if pooled {
            serde_json::to_vec(&Claim::Session {
                job: std::borrow::Cow::Borrowed(&job),
            })
        } else {
            serde_json::to_vec(&job)
        }
        .map_err(|err| ServiceError::Internal(format!("cannot encode the session: {err}")))?;
        let started = async {
            worker.send_line(line).await?;
            worker.read().await
        };
        let (layers, limits) = match tokio::time::timeout(START_TIMEOUT, started).await {
            Ok(Ok(WorkerAnswer::Started { layers, limits })) => (layers, limits),
            Ok(Ok(WorkerAnswer::Failed { message, .. })) => {
                worker.kill().await;
                return Err(ServiceError::Internal(format!(
                    "the session could not start: {message}"
                )));
            }
            Ok(Ok(_)) => {
                worker.kill().await;
                return Err(ServiceError::Internal(
                    "the session worker answered out of turn".to_owned(),
                ));
            }
            Ok(Err(message)) => {
                worker.kill().await;
                let stderr = worker.stderr_text().await;
                return Err(ServiceError::Internal(format!(
                    "the session could not start: {message}{}",
                    if stderr.is_empty() {
                        String::new()
                    } else {
                        format!(" ({stderr})")
                    }
                )));
            }
            Err(_) => {
                worker.kill().await;
                return Err(ServiceError::Internal(format!(
                    "the session did not start within {} s",
                    START_TIMEOUT.as_secs()
                )));
            }
        };
        let (commands, requests) = mpsc::channel(16);
        let (end, end_rx) = watch::channel(None);
        let (done_tx, done) = watch::channel(None);
        let handle = Arc::new(Handle {
            id: new_id(self.epoch),
            owner: new.owner.to_owned(),
            policy: new.policy_name.to_owned(),
            policy_sha256: new.registered.policy.sha256.clone(),
            created: Instant::now(),
            created_at: super::audit::now_rfc3339(),
            limits,
            layers,
            pid,
            activity: Mutex::new(Activity {
                last: Instant::now(),
                pending: 0,
                execution_count: 0,
            }),
            commands,
            end,
            done,
        });
        let actor = Actor {
            sessions: Arc::clone(self),
            handle: Arc::clone(&handle),
            client: new.client.to_owned(),
            worker,
            requests,
            end: end_rx,
            done: done_tx,
        };
        reservation.commit(&handle);
        self.metrics.session_created();
        tokio::spawn(actor.run());
        Ok(handle)
    }

    fn reserve(&self, owner: &str) -> Result<Reservation<'_>, ServiceError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(shutting_down());
        }
        let max = self.limits.max_sessions;
        if max == 0 {
            return Err(ServiceError::Forbidden(
                "sessions are turned off on this server (sessions.max_sessions = 0)".to_owned(),
            ));
        }
        let mut table = self
            .table
            .lock()
            .map_err(|_| ServiceError::Internal("the session table is poisoned".to_owned()))?;
        if table.total() >= max {
            return Err(ServiceError::SessionLimit(
                format!(
                    "the server holds its maximum of {max} sessions (sessions.max_sessions); end \
                     one (DELETE /v1/sessions/{{id}}) or retry when an idle one has expired"
                ),
                self.retry_after(&table),
            ));
        }
        let per_client = self.limits.max_per_client;
        if table.of(owner) >= per_client {
            return Err(ServiceError::SessionLimit(
                format!(
                    "this client holds its maximum of {per_client} sessions \
                     (sessions.max_sessions_per_client); end one (DELETE /v1/sessions/{{id}}) first"
                ),
                self.retry_after(&table),
            ));
        }
        *table.starting.entry(owner.to_owned()).or_default() += 1;
        Ok(Reservation {
            sessions: self,
            owner: owner.to_owned(),
            committed: false,
        })
    }

    /// Seconds until the first idle session expires (at least 1).
    fn retry_after(&self, table: &Table) -> u64 {
        let idle = self.limits.idle_timeout;
        table
            .live
            .values()
            .filter_map(|h| {
                let activity = h.activity.lock().ok()?;
                (activity.pending == 0).then(|| idle.saturating_sub(activity.last.elapsed()))
            })
            .min()
            .map_or(60, |left| left.as_secs().max(1))
    }

    /// The owner's session `id`, or `None`: no such session, or another owner's (the two are not
    /// told apart). With `touch`, its last activity is now (under the table's lock, so the idle
    /// reaper cannot end it between this and the request that follows); looking at a session
    /// does not keep it alive.
    pub fn find(&self, owner: &str, id: &str, touch: bool) -> Option<Arc<Handle>> {
        let table = self.table.lock().ok()?;
        let handle = table.live.get(id).filter(|h| h.owner == owner)?;
        if touch {
            handle.touch();
        }
        Some(Arc::clone(handle))
    }

    /// The owner's sessions, oldest first.
    pub fn list(&self, owner: &str) -> Vec<Arc<Handle>> {
        let mut found: Vec<Arc<Handle>> = self
            .table
            .lock()
            .map(|t| {
                t.live
                    .values()
                    .filter(|h| h.owner == owner)
                    .cloned()
                    .collect()
            })
            .unwrap_or_default();
        found.sort_by_key(|h| h.created);
        found
    }

    /// Sends one request to the session and waits for its final answer, passing streamed output
    /// to `chunks`. `Err`: the session ended under it (the message says how).
    pub async fn request(
        &self,
        handle: &Handle,
        op: WorkerRequest,
        hard_limit: Option<Duration>,
        client: &str,
        endpoint: &str,
        chunks: Option<mpsc::Sender<Chunk>>,
    ) -> Result<WorkerAnswer, String> {
        let _pending = Pending::new(handle);
        let (answers, mut replies) = mpsc::channel(CHUNK_BUFFER);
        let request = Request {
            op,
            hard_limit,
            client: client.to_owned(),
            endpoint: endpoint.to_owned(),
            answers,
        };
        if handle.commands.send(request).await.is_err() {
            return Err("the session has ended".to_owned());
        }
        loop {
            match replies.recv().await {
                Some(Answer::Chunk(chunk)) => {
                    if let Some(chunks) = &chunks {
                        // A reader that went away only stops getting chunks.
                        let _ = chunks.send(chunk).await;
                    }
                }
                Some(Answer::Final(answer)) => return Ok(answer),
                Some(Answer::Lost(message)) => return Err(message),
                None => return Err("the session has ended".to_owned()),
            }
        }
    }

    /// Ends a session (idempotent) and waits until its worker is gone and its directory removed.
    pub async fn end(&self, handle: &Handle, reason: &'static str, graceful: bool) -> EndSummary {
        self.forget(&handle.id);
        handle.end.send_if_modified(|current| {
            if current.is_none() {
                *current = Some(EndRequest { reason, graceful });
                true
            } else {
                false
            }
        });
        let mut done = handle.done.clone();
        let summary = done
            .wait_for(Option::is_some)
            .await
            .ok()
            .and_then(|summary| summary.clone());
        summary.unwrap_or_else(|| EndSummary {
            reason: reason.to_owned(),
            execution_count: 0,
            usage: None,
        })
    }

    fn forget(&self, id: &str) {
        if let Ok(mut table) = self.table.lock() {
            table.live.remove(id);
        }
    }

    /// Ends the sessions idle for longer than the idle timeout, and those older than the
    /// maximum lifetime (busy or not); returns how many.
    pub fn reap(self: &Arc<Self>) -> usize {
        let mut ending: Vec<(Arc<Handle>, &'static str)> = Vec::new();
        if let Ok(mut table) = self.table.lock() {
            table.live.retain(|_, handle| {
                let reason = if handle.created.elapsed() >= self.limits.max_lifetime {
                    Some("max_lifetime")
                } else {
                    handle.activity.lock().ok().and_then(|a| {
                        (a.pending == 0 && a.last.elapsed() >= self.limits.idle_timeout)
                            .then_some("idle_timeout")
                    })
                };
                match reason {
                    Some(reason) => {
                        ending.push((Arc::clone(handle), reason));
                        false
                    }
                    None => true,
                }
            });
        }
        let count = ending.len();
        for (handle, reason) in ending {
            let sessions = Arc::clone(self);
            tokio::spawn(async move {
                sessions.end(&handle, reason, true).await;
            });
        }
        count
    }

    /// Refuses new sessions from now on.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
    }

    /// Ends every session (at shutdown or when an MCP connection closes), within `limit`.
    pub async fn end_all(self: &Arc<Self>, reason: &'static str, limit: Duration) {
        let handles: Vec<Arc<Handle>> = self
            .table
            .lock()
            .map(|mut t| std::mem::take(&mut t.live).into_values().collect())
            .unwrap_or_default();
        let mut ends = tokio::task::JoinSet::new();
        for handle in &handles {
            let handle = Arc::clone(handle);
            let sessions = Arc::clone(self);
            ends.spawn(async move {
                sessions.end(&handle, reason, true).await;
            });
        }
        let all = async { while ends.join_next().await.is_some() {} };
        if tokio::time::timeout(limit, all).await.is_err() {
            for handle in &handles {
                kill_pid(handle.pid);
            }
        }
    }

    /// Kills every session's worker now (their jails die with them).
    pub fn kill_all(&self) {
        self.close();
        let handles: Vec<Arc<Handle>> = self
            .table
            .lock()
            .map(|t| t.live.values().cloned().collect())
            .unwrap_or_default();
        for handle in handles {
            handle.end.send_if_modified(|current| {
                if current.is_none() {
                    *current = Some(EndRequest {
                        reason: "shutdown",
                        graceful: false,
                    });
                    true
                } else {
                    false
                }
            });
            kill_pid(handle.pid);
        }
    }

    /// How often [`Sessions::reap`] should run for these limits.
    pub fn reap_interval(&self) -> Duration {
        (self.limits.idle_timeout.min(self.limits.max_lifetime) / 4)
            .clamp(Duration::from_millis(50), Duration::from_secs(1))
    }
}

/// Runs [`Sessions::reap`] every [`Sessions::reap_interval`], until the task is aborted.
pub async fn reap_periodically(sessions: Arc<Sessions>) {
    let mut every = tokio::time::interval(sessions.reap_interval());
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        every.tick().await;
        sessions.reap();
    }
}

/// A place in the caps held while a session starts.
struct Reservation<'a> {
    sessions: &'a Sessions,
    owner: String,
    committed: bool,
}

impl Reservation<'_> {
    /// The session started: it takes the reserved place in the table.
    fn commit(mut self, handle: &Arc<Handle>) {
        if let Ok(mut table) = self.sessions.table.lock() {
            table.live.insert(handle.id.clone(), Arc::clone(handle));
            release(&mut table, &self.owner);
        }
        self.committed = true;
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.committed {
            if let Ok(mut table) = self.sessions.table.lock() {
                release(&mut table, &self.owner);
            }
        }
    }
}

fn release(table: &mut Table, owner: &str) {
    if let Some(count) = table.starting.get_mut(owner) {
        *count = count.saturating_sub(1);
        if *count == 0 {
            table.starting.remove(owner);
        }
    }
}

/// A request sent and not answered, for as long as this lives (the session is not idle then).
struct Pending<'a>(&'a Handle);

impl<'a> Pending<'a> {
    fn new(handle: &'a Handle) -> Self {
        if let Ok(mut activity) = handle.activity.lock() {
            activity.pending += 1;
            activity.last = Instant::now();
        }
        Self(handle)
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if let Ok(mut activity) = self.0.activity.lock() {
            activity.pending = activity.pending.saturating_sub(1);
            activity.last = Instant::now();
        }
    }
}

/// A session worker's process and pipes.
struct Worker {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// The longest answer line read (a cell's record with its figures, a file's content).
    line_cap: usize,
    /// Removed once the worker is gone (the actor ends after waiting for it).
    _dir: JobDir,
    stderr: Option<tokio::task::JoinHandle<std::io::Result<Vec<u8>>>>,
}

impl Worker {
    async fn send(&mut self, request: &WorkerRequest) -> Result<(), String> {
        let line = serde_json::to_vec(request).map_err(|err| err.to_string())?;
        self.send_line(line).await
    }

    async fn send_line(&mut self, mut line: Vec<u8>) -> Result<(), String> {
        line.push(b'\n');
        let Some(stdin) = self.stdin.as_mut() else {
            return Err("the session worker's input is closed".to_owned());
        };
        match tokio::time::timeout(SEND_TIMEOUT, stdin.write_all(&line)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(err)) => Err(format!("the session worker stopped reading ({err})")),
            Err(_) => Err("the session worker did not read its request in time".to_owned()),
        }
    }

    /// The next answer line, parsed. `Err`: the worker ended, or sent something too large or not
    /// an answer (it is killed then; not cancel-safe).
    async fn read(&mut self) -> Result<WorkerAnswer, String> {
        let mut line = Vec::new();
        loop {
            let buffer = self
                .stdout
                .fill_buf()
                .await
                .map_err(|err| format!("cannot read the session worker's answer: {err}"))?;
            if buffer.is_empty() {
                return Err("the session worker ended".to_owned());
            }
            if let Some(end) = buffer.iter().position(|&b| b == b'\n') {
                line.extend_from_slice(&buffer[..end]);
                self.stdout.consume(end + 1);
                break;
            }
            let n = buffer.len();
            line.extend_from_slice(buffer);
            self.stdout.consume(n);
            if line.len() > self.line_cap {
                return Err(format!(
                    "the session worker's answer exceeded {} bytes",
                    self.line_cap
                ));
            }
        }
        serde_json::from_slice(&line).map_err(|err| {
            format!("the session worker sent something that is not an answer: {err}")
        })
    }

    async fn kill(&mut self) {
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }

    /// Closes the session cleanly (its jail ends and removes what it had); kills the worker if it
    /// does not finish in time. Returns the session's usage when the worker reported it.
    async fn close(&mut self) -> Option<warden_jail::Usage> {
        let closing = async {
            self.send(&WorkerRequest::Close).await.ok()?;
            self.stdin = None;
            loop {
                match self.read().await {
                    Ok(WorkerAnswer::Closed { usage }) => return usage,
                    Ok(_) => {}
                    Err(_) => return None,
                }
            }
        };
        let usage = tokio::time::timeout(CLOSE_TIMEOUT, closing)
            .await
            .ok()
            .flatten();
        match tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await {
            Ok(_) => {}
            Err(_) => self.kill().await,
        }
        usage
    }

    async fn stderr_text(&mut self) -> String {
        let Some(task) = self.stderr.take() else {
            return String::new();
        };
        match tokio::time::timeout(Duration::from_secs(2), task).await {
            Ok(Ok(Ok(bytes))) => {
                let text = String::from_utf8_lossy(&bytes);
                text.trim().lines().last().unwrap_or("").to_owned()
            }
            _ => String::new(),
        }
    }
}

/// How a request ended, for the actor.
enum Served {
    /// The session goes on.
    Alive,
    /// The session is over (the reason), cleanly (`true`) or its worker must be killed.
    Over(String, bool),
}

/// Owns one session's worker and serves its requests in order.
struct Actor {
    sessions: Arc<Sessions>,
    handle: Arc<Handle>,
    /// Who started the session (for the audit line of its end).
    client: String,
    worker: Worker,
    requests: mpsc::Receiver<Request>,
    end: watch::Receiver<Option<EndRequest>>,
    done: watch::Sender<Option<EndSummary>>,
}

impl Actor {
    async fn run(mut self) {
        let (reason, graceful) = loop {
            let request = tokio::select! {
                biased;
                _ = self.end.changed() => {
                    let ask = (*self.end.borrow()).unwrap_or(EndRequest { reason: "closed", graceful: true });
                    break (ask.reason.to_owned(), ask.graceful);
                }
                request = self.requests.recv() => request,
            };
            let Some(request) = request else {
                break ("closed".to_owned(), true);
            };
            match self.serve(request).await {
                Served::Alive => {}
                Served::Over(reason, graceful) => break (reason, graceful),
            }
        };
        self.sessions.forget(&self.handle.id);
        // Requests still queued are answered: the session is over.
        self.requests.close();
        while let Ok(request) = self.requests.try_recv() {
            let _ = request
                .answers
                .send(Answer::Lost(format!("the session has ended ({reason})")))
                .await;
        }
        let usage = if graceful {
            self.worker.close().await
        } else {
            self.worker.kill().await;
            None
        };
        let execution_count = self.handle.activity.lock().map_or(0, |a| a.execution_count);
        let summary = EndSummary {
            reason: reason.clone(),
            execution_count,
            usage,
        };
        self.sessions.metrics.session_ended(&reason);
        let mut audit = AuditRecord::new(&self.client, "session_end");
        audit.session = Some(self.handle.id.clone());
        audit.policy = Some(self.handle.policy.clone());
        audit.policy_sha256 = Some(self.handle.policy_sha256.clone());
        audit.status = reason;
        if let Some(usage) = usage {
            audit.wall_ms = Some(usage.wall_ms);
            audit.cpu_ms = Some(usage.cpu_ms);
            audit.memory_peak_bytes = Some(usage.memory_peak_bytes);
        }
        audit.duration_ms = millis(self.handle.created.elapsed());
        self.sessions.audit.write(&audit);
        // The worker is gone; its directory goes with `self.worker`.
        drop(self.worker);
        let _ = self.done.send(Some(summary));
    }

    /// Serves one request; says whether the session goes on.
    async fn serve(&mut self, request: Request) -> Served {
        let started = Instant::now();
        let code = match &request.op {
            WorkerRequest::Execute { code, .. } => Some(code.clone()),
            _ => None,
        };
        // With a hard limit the output is streamed, so a killed cell still shows what it wrote.
        let op = match (request.op, request.hard_limit) {
            (WorkerRequest::Execute { code, .. }, Some(_)) => {
                WorkerRequest::Execute { code, stream: true }
            }
            (op, _) => op,
        };
        if let Err(message) = self.worker.send(&op).await {
            let _ = request.answers.send(Answer::Lost(lost(&message))).await;
            return Served::Over("session_lost".to_owned(), false);
        }
        let deadline = request
            .hard_limit
            .map(|limit| tokio::time::Instant::now() + limit);
        let mut partial = Partial::default();
        loop {
            let answer = tokio::select! {
                biased;
                _ = self.end.changed() => {
                    let reason = (*self.end.borrow()).map_or("closed", |ask| ask.reason);
                    let _ = request.answers.send(Answer::Lost(format!(
                        "the session was ended ({reason}) while this request ran"
                    ))).await;
                    return Served::Over(reason.to_owned(), false);
                }
                () = sleep_until(deadline) => {
                    let limit = request.hard_limit.unwrap_or_default();
                    let record = partial.timeout_record(limit, started);
                    self.audit_cell(&request.client, &request.endpoint, code.as_deref(), &record, started);
                    let _ = request.answers.send(Answer::Final(WorkerAnswer::Cell(record))).await;
                    return Served::Over("timeout".to_owned(), false);
                }
                answer = self.worker.read() => answer,
            };
            match answer {
                Ok(WorkerAnswer::Chunk { name, text }) => {
                    partial.add(&name, &text);
                    // A client that stopped reading holds the cell back, but not an end.
                    let chunk = Answer::Chunk(Chunk { name, text });
                    tokio::select! {
                        biased;
                        _ = self.end.changed() => {
                            let reason = (*self.end.borrow()).map_or("closed", |ask| ask.reason);
                            return Served::Over(reason.to_owned(), false);
                        }
                        _ = request.answers.send(chunk) => {}
                    }
                }
                Ok(answer) => {
                    let mut over = None;
                    if let WorkerAnswer::Cell(record) = &answer {
                        self.audit_cell(
                            &request.client,
                            &request.endpoint,
                            code.as_deref(),
                            record,
                            started,
                        );
                        if let Some(count) = record.execution_count {
                            if let Ok(mut activity) = self.handle.activity.lock() {
                                activity.execution_count = count;
                            }
                        }
                        if !record.session_alive {
                            over = Some(record.status.as_str().to_owned());
                        }
                    }
                    if let WorkerAnswer::Failed {
                        kind: warden_worker::wire::FailKind::Ended,
                        ..
                    } = &answer
                    {
                        over = Some("session_lost".to_owned());
                    }
                    let _ = request.answers.send(Answer::Final(answer)).await;
                    self.handle.touch();
                    return match over {
                        Some(reason) => Served::Over(reason, true),
                        None => Served::Alive,
                    };
                }
                Err(message) => {
                    let message = lost(&message);
                    match code {
                        Some(_) => {
                            let record = partial.lost_record(&message, started);
                            self.audit_cell(
                                &request.client,
                                &request.endpoint,
                                code.as_deref(),
                                &record,
                                started,
                            );
                            let _ = request
                                .answers
                                .send(Answer::Final(WorkerAnswer::Cell(record)))
                                .await;
                        }
                        None => {
                            let _ = request.answers.send(Answer::Lost(message)).await;
                        }
                    }
                    return Served::Over("session_lost".to_owned(), false);
                }
            }
        }
    }

    fn audit_cell(
        &self,
        client: &str,
        endpoint: &str,
        code: Option<&str>,
        record: &CellRecord,
        started: Instant,
    ) {
        let status = record.status.as_str();
        let findings = &record.check.findings;
        self.sessions
            .metrics
            .cell(status, &CheckRecord::rule_ids(findings, true));
        let mut audit = AuditRecord::new(client, endpoint);
        audit.session = Some(self.handle.id.clone());
        audit.code_sha256 = code.map(|code| super::sha256(code.as_bytes()));
        audit.policy = Some(self.handle.policy.clone());
        audit.policy_sha256 = Some(self.handle.policy_sha256.clone());
        audit.decision = Some(record.check.decision.clone());
        audit.rules = CheckRecord::rule_ids(findings, false);
        audit.status = status.to_owned();
        audit.memory_peak_bytes = Some(record.usage.memory_peak_bytes);
        audit.duration_ms = millis(started.elapsed());
        self.sessions.audit.write(&audit);
    }
}

/// What a cell wrote before it was stopped (streamed; within the policy's caps already).
#[derive(Default)]
struct Partial {
    stdout: String,
    stderr: String,
}

impl Partial {
    fn add(&mut self, name: &str, text: &str) {
        if name == "stdout" {
            self.stdout.push_str(text);
        } else {
            self.stderr.push_str(text);
        }
    }

    fn record(&self, status: CellStatus, message: String, started: Instant) -> Box<CellRecord> {
        Box::new(CellRecord::ended(
            status,
            message,
            self.stdout.clone(),
            self.stderr.clone(),
            millis(started.elapsed()),
        ))
    }

    fn timeout_record(&self, limit: Duration, started: Instant) -> Box<CellRecord> {
        self.record(
            CellStatus::Timeout,
            format!(
                "the cell ran past the call's limit of {} ms; the session was ended and its state is lost",
                limit.as_millis()
            ),
            started,
        )
    }

    fn lost_record(&self, message: &str, started: Instant) -> Box<CellRecord> {
        self.record(
            CellStatus::SessionLost,
            format!("{message}; the session is over and its state is lost"),
            started,
        )
    }
}

/// The record of a cell whose session ended under it before it answered.
pub fn lost_cell(message: &str) -> CellRecord {
    *Partial::default().lost_record(message, Instant::now())
}

fn lost(message: &str) -> String {
    format!("the session was lost: {message}")
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

/// The largest answer line a session under `policy` can send: a cell's frame (its figures, up to
/// the gateway's 64 MiB), its output JSON-escaped, or a file's content in base64.
fn answer_cap(policy: &warden_policy::Policy) -> usize {
    let limits = &policy.limits;
    let output = limits
        .stdout_bytes
        .saturating_add(limits.stderr_bytes)
        .saturating_mul(6);
    let file = limits.output_bytes.saturating_mul(4) / 3;
    let cap = (64u64 << 20)
        .saturating_add(output)
        .max(file)
        .saturating_add(4 << 20);
    usize::try_from(cap).unwrap_or(usize::MAX)
}

/// A session id: 128 random bits, hex (unguessable; a session is also bound to its owner). When
/// `WARDEN_NODE` names this server's node, the id goes on with `-`, the server's boot epoch
/// (decimal), `.` and the node, so that a router in front of several servers sends a session's
/// requests to the node that holds it, and a node can tell its own sessions of an earlier life from
/// ones that never existed (docs/scale-out.md).
fn new_id(epoch: u64) -> String {
    with_node(random_hex(), node().map(|node| (epoch, node)))
}

fn with_node(hex: String, node: Option<(u64, &str)>) -> String {
    match node {
        Some((epoch, node)) => format!("{hex}-{epoch}.{node}"),
        None => hex,
    }
}

/// The node a session id names (what follows the first `.`), if it names one.
pub fn node_of(id: &str) -> Option<&str> {
    id.split_once('.')
        .map(|(_, node)| node)
        .filter(|node| !node.is_empty())
}

/// The boot epoch a session id names: the decimal after the 32 hex digits and `-`, before the `.`
/// (`None` for an id without one, such as the ids of servers before epochs).
fn epoch_of(id: &str) -> Option<u64> {
    let (head, _) = id.split_once('.')?;
    let (hex, epoch) = head.split_once('-')?;
    let digits_ok =
        !epoch.is_empty() && epoch.len() <= 20 && epoch.bytes().all(|b| b.is_ascii_digit());
    (is_hex_id(hex) && digits_ok)
        .then(|| epoch.parse().ok())
        .flatten()
}

fn is_hex_id(hex: &str) -> bool {
    hex.len() == 32 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Where a session this server does not hold is, as far as its id tells (only a server with a
/// node can tell; every other id is "no such session").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Elsewhere {
    /// The id names another node (`421 wrong_node`).
    OtherNode(String),
    /// The id is this node's, from an earlier life of the server: the session is gone with that
    /// life (`410 session_lost`).
    EarlierLife,
}

/// Where the session `id` is when this server (`node`, `epoch`) does not hold it: another node's,
/// this node's from an earlier life, or `None` (an id that never existed, another client's, or
/// one of this life that has ended: 404, as a single server answers). Judged from the id alone, so
/// it says nothing about the sessions of other clients.
fn elsewhere(id: &str, node: Option<&str>, epoch: u64) -> Option<Elsewhere> {
    let mine = node?;
    let (head, named) = id.split_once('.')?;
    let hex = head.split_once('-').map_or(head, |(hex, _)| hex);
    if !is_hex_id(hex) || !is_node_name(named) {
        return None;
    }
    if named != mine {
        return Some(Elsewhere::OtherNode(named.to_owned()));
    }
    // An id of this node without an epoch comes from a server before epochs: an earlier life.
    match epoch_of(id) {
        Some(then) if then >= epoch => None,
        Some(_) => Some(Elsewhere::EarlierLife),
        None if head == hex => Some(Elsewhere::EarlierLife),
        None => None,
    }
}

/// This server's boot epoch: the time it started, in milliseconds since 1970, and always past the
/// epoch the previous server on this state directory recorded (`<state_dir>/epoch`), so that a
/// clock set back does not give a new life the epoch of an old one. Called with the state
/// directory locked (`Executor::new`).
pub fn boot_epoch(state_dir: &std::path::Path) -> anyhow::Result<u64> {
    use anyhow::Context;
    let path = state_dir.join("epoch");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
    let previous = match std::fs::read_to_string(&path) {
        Ok(text) => text.trim().parse::<u64>().ok(),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => None,
        Err(err) => {
            return Err(err).with_context(|| format!("cannot read {}", path.display()));
        }
    };
    let epoch = previous.map_or(now, |previous| now.max(previous.saturating_add(1)));
    let temporary = state_dir.join("epoch.new");
    std::fs::write(&temporary, format!("{epoch}\n"))
        .and_then(|()| std::fs::rename(&temporary, &path))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(epoch)
}

/// This server's node: `WARDEN_NODE` (in Kubernetes, the pod's `spec.nodeName` through the downward
/// API) when it is a DNS name (lower-case letters, digits, `-` and `.`, at most 253), else none.
pub fn node() -> Option<&'static str> {
    static NODE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    NODE.get_or_init(|| {
        std::env::var("WARDEN_NODE")
            .ok()
            .filter(|name| is_node_name(name))
    })
    .as_deref()
}

fn is_node_name(name: &str) -> bool {
    let edges_ok =
        |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    name.len() <= 253
        && edges_ok(name.chars().next())
        && edges_ok(name.chars().last())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

fn random_hex() -> String {
    let mut bytes = [0u8; 16];
    let filled = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if filled.is_err() {
        // Never reached on Linux; still unique within the server.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (nanos ^ (u128::from(std::process::id()) << 64)).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn kill_pid(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        if pid > 0 {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

fn shutting_down() -> ServiceError {
    ServiceError::Rejected(super::admission::Rejection::ShuttingDown, 10)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_long_hex_and_differ() {
        // The tests run without WARDEN_NODE: the id is the bare 128 bits, as before epochs.
        let a = new_id(7);
        let b = new_id(7);
        assert_eq!(a.len(), 32);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn ids_name_the_node_and_the_epoch_when_there_is_a_node() {
        let hex = "0123456789abcdef0123456789abcdef".to_owned();
        let id = with_node(hex.clone(), Some((1_764_000_000_123, "worker-3.zone-b")));
        assert_eq!(id, format!("{hex}-1764000000123.worker-3.zone-b"));
        assert_eq!(node_of(&id), Some("worker-3.zone-b"));
        assert_eq!(epoch_of(&id), Some(1_764_000_000_123));
        assert_eq!(with_node(hex.clone(), None), hex);
        assert_eq!(node_of(&hex), None);
        assert_eq!(epoch_of(&hex), None);
        assert_eq!(node_of(&format!("{hex}.")), None);
        assert_eq!(epoch_of(&format!("{hex}-.n")), None);
        assert_eq!(epoch_of(&format!("{hex}-12a.n")), None);
        assert_eq!(epoch_of(&format!("{}-12.n", &hex[1..])), None);
        for good in ["n", "worker-3", "ip-10-0-0-7.ec2.internal"] {
            assert!(is_node_name(good), "{good}");
        }
        let long = "a".repeat(254);
        for bad in ["", "-a", "a-", "Node", "a/b", "a b", "a_b", &long] {
            assert!(!is_node_name(bad), "{bad}");
        }
    }

    #[test]
    fn an_id_not_held_is_placed_by_its_node_and_epoch() {
        let hex = "0123456789abcdef0123456789abcdef";
        let here = Some("n1");
        // Another node's, with or without an epoch.
        assert_eq!(
            elsewhere(&format!("{hex}-5.n2.zone"), here, 9),
            Some(Elsewhere::OtherNode("n2.zone".to_owned()))
        );
        assert_eq!(
            elsewhere(&format!("{hex}.n2"), here, 9),
            Some(Elsewhere::OtherNode("n2".to_owned()))
        );
        // This node's, from an earlier life (or from a server before epochs).
        assert_eq!(
            elsewhere(&format!("{hex}-8.n1"), here, 9),
            Some(Elsewhere::EarlierLife)
        );
        assert_eq!(
            elsewhere(&format!("{hex}.n1"), here, 9),
            Some(Elsewhere::EarlierLife)
        );
        // This life's or a later one's, malformed ids, and any id on a server without a node:
        // no such session.
        for id in [
            format!("{hex}-9.n1"),
            format!("{hex}-10.n1"),
            format!("{hex}-x.n1"),
            hex.to_owned(),
            format!("{}-8.n1", &hex[2..]),
            format!("{hex}-8.N1"),
            format!("{hex}-8."),
            "../etc".to_owned(),
        ] {
            assert_eq!(elsewhere(&id, here, 9), None, "{id}");
        }
        assert_eq!(elsewhere(&format!("{hex}-5.n2"), None, 9), None);
    }

    #[test]
    fn the_boot_epoch_only_grows() {
        let dir = tempfile::tempdir().unwrap();
        let first = boot_epoch(dir.path()).unwrap();
        let second = boot_epoch(dir.path()).unwrap();
        assert!(second > first, "{first} {second}");
        // A clock set back: the next life still comes after the recorded one.
        let ahead = second + 3_600_000;
        std::fs::write(dir.path().join("epoch"), format!("{ahead}\n")).unwrap();
        assert_eq!(boot_epoch(dir.path()).unwrap(), ahead + 1);
        assert!(!dir.path().join("epoch.new").exists());
    }

    #[test]
    fn the_caps_count_starting_sessions_per_owner() {
        let sessions = Sessions::new(
            SessionLimits {
                max_sessions: 2,
                max_per_client: 1,
                idle_timeout: Duration::from_secs(1),
                max_lifetime: Duration::from_secs(10),
            },
            1,
            Arc::new(Metrics::default()),
            Arc::new(AuditLog::open(&super::super::config::AuditTarget::Off).unwrap()),
        );
        let a = sessions.reserve("token:a").unwrap();
        assert!(matches!(
            sessions.reserve("token:a"),
            Err(ServiceError::SessionLimit(..))
        ));
        let b = sessions.reserve("token:b").unwrap();
        let err = sessions.reserve("token:c").err().unwrap();
        assert!(
            err.message().contains("maximum of 2 sessions"),
            "{}",
            err.message()
        );
        drop(a);
        drop(b);
        assert_eq!(sessions.count(), 0);
        sessions.close();
        assert!(matches!(
            sessions.reserve("token:a"),
            Err(ServiceError::Rejected(..))
        ));
    }
}
