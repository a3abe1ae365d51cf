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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};
use warden_gateway::pipeline::AppliedLimits;
use warden_gateway::session::{CellRecord, CellStatus};
use warden_policy::CheckRecord;

use super::audit::{AuditLog, AuditRecord};
use super::config::{RegisteredPolicy, SessionLimits};
use super::executor::{ExecError, Executor};
use super::metrics::Metrics;
use super::ServiceError;
use warden_worker::wire::{Claim, InputFile, SessionJob, WorkerAnswer, WorkerRequest};

mod actor;
mod ids;

pub use actor::lost_cell;
use actor::{answer_cap, Actor, Worker};
pub use ids::{boot_epoch, node, node_of, Elsewhere};
use ids::{elsewhere, new_id};

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
        let process = match new.warm {
            Some(warm) => warm.into_process(),
            None => executor.start_session_worker().map_err(|err| match err {
                ExecError::ShuttingDown => shutting_down(),
                err => ServiceError::Internal(format!("the session could not start: {err}")),
            })?,
        };
        let pid = process.child.id().unwrap_or(0);
        let mut worker = Worker {
            process,
            line_cap: answer_cap(&new.registered.policy),
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
