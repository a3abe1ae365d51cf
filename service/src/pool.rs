//! The warm pool: jails started before anything asked for them, per policy, each one's interpreter
//! up with the policy's `[runtime] preload` imported, waiting for one program (`POST /v1/runs`,
//! MCP's run tool) or one session (`POST /v1/sessions`). Each is used once, then discarded; the
//! pool refills in the background. An empty pool never fails a request: it starts cold.
//!
//! A pooled jail is a `warden session-worker` (a jail must be created by a single-threaded process)
//! that started a session's jail (the same confinement plan as a run's: namespaces, root, Landlock,
//! seccomp, its own cgroup, rlimits, the runtime layer; all in force before the driver reads a
//! byte) and imported the preload list in it, then waits for one claim ([`wire::Claim`]).
//!
//! Owns: `[pool]` (`enabled`, `depth`, `memory_mib`, `max_idle_ms`), the jails waiting, the refill
//! loop ([`maintain`]), its metrics, and discarding every waiting jail at shutdown. Does not own:
//! the jail, the run or the session (`warden_worker::pooled` and `warden_gateway::session`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use warden_gateway::pipeline::RunRecord;

use super::admission::Slot;
use super::config::RegisteredPolicy;
use super::executor::{ExecError, JobDir};
use warden_worker::wire::{self, Job, WorkerReply};
use super::Service;


/// Default `pool.depth`: jails kept waiting per policy.
pub const DEFAULT_DEPTH: usize = 2;
/// Default `pool.memory_mib`: what the waiting jails may hold in all (their proportional share of
/// memory, PSS).
pub const DEFAULT_MEMORY_MIB: u64 = 1024;
/// Default `pool.max_idle_ms`: a jail waiting longer is discarded and replaced (10 minutes).
pub const DEFAULT_MAX_IDLE_MS: u64 = 600_000;
/// Default `pool.template_forks`: jails one template forks before a fresh one replaces it.
pub const DEFAULT_TEMPLATE_FORKS: u64 = 1000;
/// Default `pool.template_max_age_ms`: a template older than this is replaced (10 minutes).
pub const DEFAULT_TEMPLATE_MAX_AGE_MS: u64 = 600_000;
/// One forked jail in this many has its PSS measured (`Pool::sampled_pss`).
const PSS_SAMPLE: u64 = 64;
/// How long a pooled jail may take to start and import its preload list.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// How often the pool looks at itself when nothing wakes it.
const TICK: Duration = Duration::from_millis(500);
/// After a jail failed to start, the next attempt for that policy waits this long.
const BACKOFF: Duration = Duration::from_secs(5);
/// The jail's own bound on its life goes this far past the longest it may wait plus serve.
const LIFETIME_SLACK: Duration = Duration::from_secs(60);
/// How long a claimed worker may take to end its jail after its reply before it is killed.
const REAP_WITHIN: Duration = Duration::from_secs(10);
/// A pooled worker back from a run waits at most this long for its next jail, then ends.
const IDLE_WORKER_TTL: Duration = Duration::from_secs(60);
/// A pooled worker serves at most this many jails, then ends (a fresh process replaces it).
const WORKER_USES: u64 = 1000;

/// `[pool]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RawPool {
    enabled: Option<bool>,
    depth: Option<usize>,
    memory_mib: Option<u64>,
    max_idle_ms: Option<u64>,
    template: Option<bool>,
    template_forks: Option<u64>,
    template_max_age_ms: Option<u64>,
}

/// `[pool]`, validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolConfig {
    /// Whether jails are pre-started at all (default true).
    pub enabled: bool,
    /// Jails kept waiting per policy.
    pub depth: usize,
    /// What the waiting jails may hold in all (PSS); none is started past it.
    pub memory_bytes: u64,
    /// A jail waiting longer is discarded and replaced.
    pub max_idle: Duration,
    /// Fork the pooled jails from a per-policy template that imported the preload once (default
    /// true); off: every pooled jail starts its own interpreter and imports the preload itself.
    pub template: bool,
    /// A template forks at most this many jails, then a fresh one (a new process: its own ASLR
    /// layout, stack canary and hash secret) takes over.
    pub template_forks: u64,
    /// ... and is replaced when it is older than this.
    pub template_max_age: Duration,
}

impl Default for PoolConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            depth: DEFAULT_DEPTH,
            memory_bytes: DEFAULT_MEMORY_MIB << 20,
            max_idle: Duration::from_millis(DEFAULT_MAX_IDLE_MS),
            template: true,
            template_forks: DEFAULT_TEMPLATE_FORKS,
            template_max_age: Duration::from_millis(DEFAULT_TEMPLATE_MAX_AGE_MS),
        }
    }
}

impl PoolConfig {
    pub(crate) fn from_raw(raw: &RawPool) -> anyhow::Result<Self> {
        let depth = raw.depth.unwrap_or(DEFAULT_DEPTH);
        anyhow::ensure!(
            (1..=64).contains(&depth),
            "pool.depth must be 1 to 64 (turn the pool off with pool.enabled = false)"
        );
        let memory_mib = raw.memory_mib.unwrap_or(DEFAULT_MEMORY_MIB);
        anyhow::ensure!(memory_mib >= 1, "pool.memory_mib must be at least 1");
        let max_idle_ms = raw.max_idle_ms.unwrap_or(DEFAULT_MAX_IDLE_MS);
        anyhow::ensure!(
            max_idle_ms >= 1000,
            "pool.max_idle_ms must be at least 1000"
        );
        let template_forks = raw.template_forks.unwrap_or(DEFAULT_TEMPLATE_FORKS);
        anyhow::ensure!(
            template_forks >= 1,
            "pool.template_forks must be at least 1"
        );
        let template_max_age_ms = raw
            .template_max_age_ms
            .unwrap_or(DEFAULT_TEMPLATE_MAX_AGE_MS);
        anyhow::ensure!(
            template_max_age_ms >= 1000,
            "pool.template_max_age_ms must be at least 1000"
        );
        Ok(Self {
            enabled: raw.enabled.unwrap_or(true),
            depth,
            memory_bytes: memory_mib.saturating_mul(1 << 20),
            max_idle: Duration::from_millis(max_idle_ms),
            template: raw.template.unwrap_or(true),
            template_forks,
            template_max_age: Duration::from_millis(template_max_age_ms),
        })
    }
}

/// A pooled jail, waiting: its worker, the worker's pipes and private directory.
pub struct Warm {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    dir: JobDir,
    stderr: tokio::task::JoinHandle<std::io::Result<Vec<u8>>>,
    born: Instant,
    /// Proportional memory (PSS) of the worker and its jail when it became ready.
    pss: u64,
    /// Forked from the policy's template.
    forked: bool,
    /// Jails this worker has served before this one.
    uses: u64,
}

/// The parts of a claimed jail a session's actor takes over.
pub(crate) struct SessionParts {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: BufReader<ChildStdout>,
    pub dir: JobDir,
    pub stderr: tokio::task::JoinHandle<std::io::Result<Vec<u8>>>,
}

impl Warm {
    pub(crate) fn into_session_parts(self) -> SessionParts {
        SessionParts {
            child: self.child,
            stdin: self.stdin,
            stdout: self.stdout,
            dir: self.dir,
            stderr: self.stderr,
        }
    }

    /// Whether the worker is still there.
    fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Runs `job` in this jail; the worker ends with it. `Err(None)`: the jail was gone before it
    /// took the program (the caller runs it cold). The worker sends the record as soon as it is
    /// complete and ends its jail after it: the record comes back at once, and the worker's end
    /// is awaited by the returned [`Reaping`] (which the caller hands to a task of its own).
    async fn run(
        mut self,
        job: &Job,
        guard: Duration,
        reply_cap: u64,
    ) -> (Result<RunRecord, Option<ExecError>>, Reaping) {
        let claim = wire::Claim::Run {
            job: std::borrow::Cow::Borrowed(job),
        };
        let mut line = match serde_json::to_vec(&claim) {
            Ok(line) => line,
            Err(err) => {
                return (
                    Err(Some(ExecError::Spawn(err.to_string()))),
                    self.into_reaping(),
                )
            }
        };
        line.push(b'\n');
        if self.stdin.write_all(&line).await.is_err() || self.stdin.flush().await.is_err() {
            return (Err(None), self.into_reaping());
        }
        let Warm {
            child,
            stdin,
            mut stdout,
            dir,
            stderr,
            uses,
            ..
        } = self;
        let mut reaping = Reaping {
            child,
            dir,
            back: None,
        };
        // One line: the reply (the worker writes nothing else on its standard output).
        let work = async {
            let mut out = Vec::new();
            let read = (&mut stdout)
                .take(reply_cap + 1)
                .read_until(b'\n', &mut out)
                .await;
            read.map(|_| out)
        };
        let out = match tokio::time::timeout(guard, work).await {
            Ok(out) => out,
            Err(_) => {
                let _ = reaping.child.start_kill();
                return (Err(Some(ExecError::Guard(guard))), reaping);
            }
        };
        let out = match out {
            Ok(out) => out,
            Err(e) => {
                let _ = reaping.child.start_kill();
                let err = ExecError::Worker(format!("cannot read its reply: {e}"));
                return (Err(Some(err)), reaping);
            }
        };
        if out.len() as u64 > reply_cap {
            let _ = reaping.child.start_kill();
            let err = ExecError::Worker(format!("its reply exceeded {reply_cap} bytes"));
            return (Err(Some(err)), reaping);
        }
        let reply = match serde_json::from_slice::<WorkerReply>(&out) {
            Ok(reply) => reply,
            Err(_) if out.is_empty() => return (Err(None), reaping),
            Err(_) => {
                // No reply: the worker failed; what it said is on its standard error.
                drop(stdin);
                let _ = reaping.child.wait().await;
                let stderr = match stderr.await {
                    Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).trim().to_owned(),
                    _ => String::new(),
                };
                let err = ExecError::Worker(format!("no reply: {stderr}"));
                return (Err(Some(err)), reaping);
            }
        };
        // A worker that answered may come back for another jail once this one has ended.
        reaping.back = Some(Back {
            stdin,
            stdout,
            stderr,
            uses: uses + 1,
        });
        let result = match reply {
            WorkerReply::Record(record) => Ok(*record),
            WorkerReply::NotTaken(_) => Err(None),
            WorkerReply::Error(message) => Err(Some(ExecError::Job(message))),
        };
        (result, reaping)
    }

    fn into_reaping(self) -> Reaping {
        Reaping {
            child: self.child,
            dir: self.dir,
            back: None,
        }
    }
}

/// Whether the static layer lets `job` reach a jail (allowed, or sent to review and approved):
/// a program it stops never takes a pooled jail (it goes the cold way, which starts no jail for
/// it). The worker judges it again, as every run is judged.
async fn would_run(want: &Want<'_>, job: &Job) -> bool {
    let policy = want.registered.policy.clone();
    let code = job.code.clone().into_bytes();
    let approved = job.approval.is_some();
    tokio::task::spawn_blocking(move || {
        let report = warden_gateway::pipeline::check(&policy, &code);
        report.decoded.is_some()
            && match report.decision {
                warden_policy::Decision::Allow => true,
                warden_policy::Decision::Review => approved,
                warden_policy::Decision::Deny => false,
            }
    })
    .await
    .unwrap_or(false)
}

/// A claimed pooled worker after its reply: it ends its jail (every process, mount, cgroup and
/// temporary directory of it), then either exits or says it is idle (`warden_worker::pooled`). Whoever holds
/// this waits for that.
struct Reaping {
    child: Child,
    dir: JobDir,
    /// The worker's pipes, when it answered and may come back idle.
    back: Option<Back>,
}

/// What the pool keeps of a worker that may come back.
struct Back {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    stderr: tokio::task::JoinHandle<std::io::Result<Vec<u8>>>,
    uses: u64,
}

impl Reaping {
    /// Waits for the worker to end its jail, at most `within`. `Some`: it did, and waits idle for
    /// its next job. Otherwise it has exited (killed past `within`: its jail's init dies with it)
    /// and its private directory is removed.
    async fn finish(mut self, within: Duration) -> Option<NewWorker> {
        let deadline = tokio::time::Instant::now() + within;
        if let Some(mut back) = self.back.take() {
            let mut line = String::new();
            let mut limited = (&mut back.stdout).take(4096);
            let read = limited.read_line(&mut line);
            let idle = matches!(tokio::time::timeout_at(deadline, read).await, Ok(Ok(n)) if n > 0)
                && matches!(
                    serde_json::from_str::<wire::PoolAnswer>(&line),
                    Ok(wire::PoolAnswer::Idle)
                );
            if idle {
                return Some(NewWorker {
                    child: self.child,
                    stdin: back.stdin,
                    stdout: back.stdout,
                    dir: self.dir,
                    stderr: back.stderr,
                    uses: back.uses,
                });
            }
            // Anything else: the worker ends.
            drop(back);
        }
        if tokio::time::timeout_at(deadline, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
        drop(self.dir);
        None
    }
}

/// A counter family of the metrics: name, help, and its value in a policy's [`Stats`].
type Counter = (&'static str, &'static str, fn(&Stats) -> u64);

/// Counters of one policy's pool.
#[derive(Debug, Default, Clone)]
struct Stats {
    hits_runs: u64,
    hits_sessions: u64,
    misses: u64,
    /// Misses of runs served by a jail forked from the template at the claim.
    forked_on_miss: u64,
    refills: u64,
    refill_seconds: f64,
    refill_failures: u64,
    /// Discarded without use (too old, or found dead).
    discarded: u64,
    /// Jails forked from the policy's template (the others started their own interpreter).
    forked: u64,
    /// Templates started (a fresh one replaces one that forked its share or grew old).
    templates: u64,
    /// Jails started by a worker back from an earlier run (no new worker process).
    reused: u64,
    last_error: Option<String>,
    retry_at: Option<Instant>,
}

#[derive(Default)]
struct State {
    ready: BTreeMap<String, Vec<Warm>>,
    starting: BTreeMap<String, usize>,
    stats: BTreeMap<String, Stats>,
    /// Pids of pooled workers running a claimed program (killed at shutdown).
    busy: BTreeSet<u32>,
    /// Workers back from a run, holding no jail, waiting for their next (oldest first).
    idle: Vec<(NewWorker, Instant)>,
}

/// A policy's template: the worker relaying fork requests to it, and its socket.
struct Template {
    child: Child,
    stdin: ChildStdin,
    dir: JobDir,
    socket: std::path::PathBuf,
    born: Instant,
    forks: u64,
}

/// A policy's template, as the pool knows it.
enum TemplateSlot {
    Ready(Box<Template>),
    /// It could not start: pooled jails start on their own until then.
    Failed {
        retry_at: Instant,
    },
}

/// The server's pool.
pub struct Pool {
    pub config: PoolConfig,
    state: Mutex<State>,
    /// Per policy, the template its pooled jails are forked from (`warden_worker::template`).
    templates: tokio::sync::Mutex<BTreeMap<String, TemplateSlot>>,
    /// Templates retired (too many forks, too old, or at shutdown) whose workers have not exited.
    retiring: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Per policy: forked jails counted, and the PSS last measured of one ([`Pool::sampled_pss`]).
    sampled: Mutex<BTreeMap<String, (u64, u64)>>,
    wake: tokio::sync::Notify,
    closed: AtomicBool,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("config", &self.config)
            .finish()
    }
}

/// What a request needs of a pooled jail: its policy, and a memory limit no lower than the
/// policy's (the jail's was set when it started).
pub struct Want<'a> {
    pub policy: &'a str,
    pub registered: &'a RegisteredPolicy,
    pub memory_mib: Option<u64>,
}

impl Pool {
    pub fn new(config: PoolConfig) -> Self {
        Self {
            config,
            state: Mutex::new(State::default()),
            templates: tokio::sync::Mutex::new(BTreeMap::new()),
            retiring: Mutex::new(Vec::new()),
            sampled: Mutex::new(BTreeMap::new()),
            wake: tokio::sync::Notify::new(),
            closed: AtomicBool::new(false),
        }
    }

    /// A waiting jail for `want`, or `None` (the pool is off, empty, or the request's limits do
    /// not fit the jail: it starts cold). `session`: for the metrics.
    pub(crate) fn take(&self, want: &Want<'_>, session: bool) -> Option<Warm> {
        if !self.config.enabled || self.closed.load(Ordering::SeqCst) {
            return None;
        }
        let policy_mib = want.registered.policy.limits.memory_bytes >> 20;
        if want
            .memory_mib
            .is_some_and(|mib| mib > 0 && mib < policy_mib)
        {
            return None;
        }
        let mut state = self.state.lock().ok()?;
        let mut found = None;
        let mut dead = 0;
        if let Some(ready) = state.ready.get_mut(want.policy) {
            while !ready.is_empty() {
                let mut warm = ready.remove(0);
                if warm.alive() {
                    found = Some(warm);
                    break;
                }
                dead += 1;
            }
        }
        let stats = state.stats.entry(want.policy.to_owned()).or_default();
        stats.discarded += dead;
        match (&found, session) {
            (Some(_), true) => stats.hits_sessions += 1,
            (Some(_), false) => stats.hits_runs += 1,
            (None, _) => stats.misses += 1,
        }
        drop(state);
        self.wake.notify_one();
        found
    }

    /// Runs `job` in a pooled jail when one fits; `None`: run it cold. The record comes back as
    /// soon as the worker sends it; the worker then ends its jail, and until it has exited (reaped
    /// by a task of the pool's) it stays counted busy and holds `slot` (the run slot), which is
    /// taken from the caller when a pooled jail was used.
    pub(crate) async fn run(
        self: &Arc<Self>,
        service: &Service,
        want: &Want<'_>,
        job: &Job,
        guard: Duration,
        reply_cap: u64,
        slot: &mut Option<Slot>,
    ) -> Option<Result<RunRecord, ExecError>> {
        if !self.usable() {
            return None;
        }
        let warm = if job.inputs.is_empty() {
            // The static check before the claim, when a jail could be claimed (a run that goes
            // cold is checked by its worker).
            let ready = self.ready(want.policy) > 0;
            if ready && !would_run(want, job).await {
                return None;
            }
            match self.take(want, false) {
                Some(warm) => warm,
                // The pool is empty (counted a miss): with the policy's template up, a jail
                // forked for this run now costs a fork where a cold start would import the
                // preload again; without it, the run goes cold.
                None => self.forked_now(service, want, job, !ready, false).await?,
            }
        } else {
            self.forked_now(service, want, job, true, true).await?
        };
        let pid = warm.child.id().unwrap_or(0);
        self.mark_busy(pid, true);
        let (result, reaping) = warm.run(job, guard, reply_cap).await;
        let pool = Arc::clone(self);
        // A jail that did not take the program ran nothing: the slot stays for the cold run.
        let held = if matches!(result, Err(None)) {
            None
        } else {
            slot.take()
        };
        tokio::spawn(async move {
            let back = reaping.finish(REAP_WITHIN).await;
            pool.mark_busy(pid, false);
            drop(held);
            if let Some(worker) = back {
                pool.park(worker).await;
            }
        });
        match result {
            Ok(record) => Some(Ok(record)),
            Err(Some(err)) => Some(Err(err)),
            Err(None) => None,
        }
    }

    /// A jail forked for `job` now, from the policy's template when it is up: for a run with
    /// input files, which cannot take a jail that is waiting already (its inputs must be in
    /// `/work` before the program starts, read-only unless the policy says otherwise), and for a
    /// run that found the pool empty. A fork instead of a cold start. `check`: the static check
    /// was not made yet; `hit`: counted a hit (the run found no jail missing). `None`: it runs
    /// cold.
    async fn forked_now(
        &self,
        service: &Service,
        want: &Want<'_>,
        job: &Job,
        check: bool,
        hit: bool,
    ) -> Option<Warm> {
        let policy_mib = want.registered.policy.limits.memory_bytes >> 20;
        if job
            .limits
            .memory_mib
            .is_some_and(|mib| mib > 0 && mib < policy_mib)
        {
            return None;
        }
        let channel = self.template_up(want.policy).await?;
        if check && !would_run(want, job).await {
            return None;
        }
        let lifetime = self.config.max_idle + service.config.sessions.max_lifetime + LIFETIME_SLACK;
        let warm = start(
            service,
            want.policy,
            want.registered,
            lifetime,
            Some(channel),
        )
        .await
        .ok()?;
        if let Ok(mut state) = self.state.lock() {
            let stats = state.stats.entry(want.policy.to_owned()).or_default();
            if hit {
                stats.hits_runs += 1;
            } else {
                stats.forked_on_miss += 1;
            }
        }
        Some(warm)
    }

    /// The socket of `policy`'s template when one is up and may fork again (counted), without
    /// starting one.
    async fn template_up(&self, policy: &str) -> Option<std::path::PathBuf> {
        if !self.config.template {
            return None;
        }
        let mut templates = self.templates.lock().await;
        let Some(TemplateSlot::Ready(template)) = templates.get_mut(policy) else {
            return None;
        };
        let usable = template.forks < self.config.template_forks
            && template.born.elapsed() < self.config.template_max_age
            && matches!(template.child.try_wait(), Ok(None));
        usable.then(|| {
            template.forks += 1;
            template.socket.clone()
        })
    }

    /// The PSS of a forked jail of `policy`: measured for one jail in [`PSS_SAMPLE`], the last
    /// measure otherwise.
    fn sampled_pss(&self, policy: &str, measure: impl FnOnce() -> u64) -> u64 {
        let Ok(mut sampled) = self.sampled.lock() else {
            return measure();
        };
        let entry = sampled.entry(policy.to_owned()).or_insert((0, 0));
        if entry.0 % PSS_SAMPLE == 0 || entry.1 == 0 {
            entry.1 = measure();
        }
        entry.0 += 1;
        entry.1
    }

    /// Whether the pool hands out jails at all (on, and not closed).
    fn usable(&self) -> bool {
        self.config.enabled && !self.closed.load(Ordering::SeqCst)
    }

    fn mark_busy(&self, pid: u32, busy: bool) {
        if let Ok(mut state) = self.state.lock() {
            if busy {
                state.busy.insert(pid);
            } else {
                state.busy.remove(&pid);
            }
        }
    }

    /// Jails waiting for `policy`.
    pub fn ready(&self, policy: &str) -> usize {
        self.state
            .lock()
            .map_or(0, |s| s.ready.get(policy).map_or(0, Vec::len))
    }

    /// A worker back from a run: kept for the next jail the pool starts (at most `2 × depth`
    /// of them, each for [`IDLE_WORKER_TTL`] and [`WORKER_USES`] jails), or ended.
    async fn park(&self, worker: NewWorker) {
        let refused = match self.state.lock() {
            // `closed` is read under the lock: `close` sets it before it takes the idle workers.
            Ok(mut state)
                if worker.uses < WORKER_USES
                    && !self.closed.load(Ordering::SeqCst)
                    && state.idle.len() < self.config.depth * 2 =>
            {
                state.idle.push((worker, Instant::now()));
                None
            }
            _ => Some(worker),
        };
        match refused {
            Some(worker) => worker.end().await,
            None => self.wake.notify_one(),
        }
    }

    /// A worker back from a run, for a new jail (the most recent: its pages are the warmest).
    /// Those found gone or too old are dropped (killed, their directories removed) after the lock.
    fn unpark(&self) -> Option<NewWorker> {
        let mut gone = Vec::new();
        let found = {
            let mut state = self.state.lock().ok()?;
            let mut found = None;
            while let Some((mut worker, since)) = state.idle.pop() {
                if since.elapsed() < IDLE_WORKER_TTL && matches!(worker.child.try_wait(), Ok(None))
                {
                    found = Some(worker);
                    break;
                }
                gone.push(worker);
            }
            found
        };
        drop(gone);
        found
    }

    /// Refuses to hand out jails from now on, and discards every waiting one (their workers see
    /// the end of their input and end their jails cleanly), and every idle worker.
    pub async fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let (waiting, idle): (Vec<Warm>, Vec<NewWorker>) = self
            .state
            .lock()
            .map(|mut s| {
                let waiting = s.ready.values_mut().flat_map(std::mem::take).collect();
                let idle = std::mem::take(&mut s.idle).into_iter().map(|(w, _)| w);
                (waiting, idle.collect())
            })
            .unwrap_or_default();
        self.wake.notify_one();
        let mut ends = tokio::task::JoinSet::new();
        for warm in waiting {
            ends.spawn(discard(warm));
        }
        for worker in idle {
            ends.spawn(worker.end());
        }
        while ends.join_next().await.is_some() {}
        // The claimed workers still ending their jails after their reply, and the jails still
        // starting (each is discarded as it becomes ready: `finish_start`): waited for, then the
        // claimed ones are killed. A worker killed while it starts a jail would leave that jail's
        // cgroup for the next run's reaping of stale ones.
        let deadline = Instant::now() + REAP_WITHIN;
        while (self.busy() > 0 || self.starting() > 0) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.kill_busy();
    }

    /// Jails being started into the pool (all policies).
    fn starting(&self) -> usize {
        self.state.lock().map_or(0, |s| s.starting.values().sum())
    }

    /// Claimed workers not reaped yet (running a program, or ending its jail after the reply).
    pub fn busy(&self) -> usize {
        self.state.lock().map_or(0, |s| s.busy.len())
    }

    /// Kills every pooled worker still running a program (shutdown past its grace).
    pub fn kill_busy(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let pids: Vec<u32> = self
            .state
            .lock()
            .map(|s| s.busy.iter().copied().collect())
            .unwrap_or_default();
        for pid in pids {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }

    /// The pool's metrics, in the exposition format.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let Ok(state) = self.state.lock() else {
            return out;
        };
        let family = |out: &mut String, name: &str, kind: &str, help: &str| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        };
        let mut names: BTreeSet<&String> = state.stats.keys().collect();
        names.extend(state.ready.keys());
        family(
            &mut out,
            "warden_pool_ready",
            "gauge",
            "Pre-started jails waiting, by policy.",
        );
        for name in &names {
            let n = state.ready.get(*name).map_or(0, Vec::len);
            let _ = writeln!(out, "warden_pool_ready{{policy=\"{name}\"}} {n}");
        }
        family(
            &mut out,
            "warden_pool_depth",
            "gauge",
            "Jails the pool keeps waiting per policy (pool.depth; 0 when the pool is off).",
        );
        let depth = if self.config.enabled {
            self.config.depth
        } else {
            0
        };
        let _ = writeln!(out, "warden_pool_depth {depth}");
        family(
            &mut out,
            "warden_pool_busy",
            "gauge",
            "Claimed pooled workers not reaped yet (running a program, or ending its jail after the record was sent).",
        );
        let _ = writeln!(out, "warden_pool_busy {}", state.busy.len());
        family(
            &mut out,
            "warden_pool_idle_workers",
            "gauge",
            "Pooled workers back from a run, holding no jail, kept for the next jail the pool starts.",
        );
        let _ = writeln!(out, "warden_pool_idle_workers {}", state.idle.len());
        family(
            &mut out,
            "warden_pool_memory_bytes",
            "gauge",
            "Proportional memory (PSS) of the waiting jails, measured when each became ready.",
        );
        let memory: u64 = state.ready.values().flatten().map(|w| w.pss).sum();
        let _ = writeln!(out, "warden_pool_memory_bytes {memory}");
        family(
            &mut out,
            "warden_pool_hits_total",
            "counter",
            "Requests served by a pre-started jail, by policy and kind.",
        );
        for (name, s) in &state.stats {
            let _ = writeln!(
                out,
                "warden_pool_hits_total{{policy=\"{name}\",kind=\"run\"}} {}",
                s.hits_runs
            );
            let _ = writeln!(
                out,
                "warden_pool_hits_total{{policy=\"{name}\",kind=\"session\"}} {}",
                s.hits_sessions
            );
        }
        let counters: [Counter; 8] = [
            (
                "warden_pool_forked_total",
                "Jails forked from the policy's template (which imported the preload once).",
                |s| s.forked,
            ),
            (
                "warden_pool_workers_reused_total",
                "Pooled jails started by a worker back from an earlier run (no new worker process).",
                |s| s.reused,
            ),
            (
                "warden_pool_templates_started_total",
                "Templates started (a fresh process replaces one that forked its share or aged).",
                |s| s.templates,
            ),
            (
                "warden_pool_misses_total",
                "Requests that found no jail waiting (or did not fit one).",
                |s| s.misses,
            ),
            (
                "warden_pool_forked_on_miss_total",
                "Runs that found no jail waiting and got one forked from the template at once \
                 (the other misses started cold).",
                |s| s.forked_on_miss,
            ),
            (
                "warden_pool_refills_total",
                "Jails started into the pool.",
                |s| s.refills,
            ),
            (
                "warden_pool_refill_failures_total",
                "Jails that failed to start into the pool.",
                |s| s.refill_failures,
            ),
            (
                "warden_pool_discarded_total",
                "Waiting jails discarded unused (too old, or found dead).",
                |s| s.discarded,
            ),
        ];
        for (name, help, get) in counters {
            family(&mut out, name, "counter", help);
            for (policy, s) in &state.stats {
                let _ = writeln!(out, "{name}{{policy=\"{policy}\"}} {}", get(s));
            }
        }
        family(
            &mut out,
            "warden_pool_refill_seconds",
            "summary",
            "Time to start a jail into the pool (interpreter up, preload imported).",
        );
        for (policy, s) in &state.stats {
            let _ = writeln!(
                out,
                "warden_pool_refill_seconds_sum{{policy=\"{policy}\"}} {:.6}\nwarden_pool_refill_seconds_count{{policy=\"{policy}\"}} {}",
                s.refill_seconds, s.refills
            );
        }
        out
    }
}

/// Ends a waiting jail: the end of its worker's input ends the session cleanly (every process,
/// mount and cgroup of the jail); a worker that does not end soon is killed.
async fn discard(warm: Warm) {
    end_worker(warm.child, warm.stdin, warm.dir).await;
}

/// Ends a pooled worker by the end of its input (a jail it holds ends cleanly with it), killing
/// it when it does not end soon, then removes its private directory.
async fn end_worker(mut child: Child, stdin: ChildStdin, dir: JobDir) {
    drop(stdin);
    if tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
    drop(dir);
}

/// Keeps every policy's pool filled, discards jails waiting too long, until the pool is closed.
pub async fn maintain(service: Arc<Service>) {
    let pool = Arc::clone(service.pool());
    if !pool.config.enabled {
        return;
    }
    let lifetime = pool.config.max_idle + service.config.sessions.max_lifetime + LIFETIME_SLACK;
    loop {
        if pool.closed.load(Ordering::SeqCst) {
            return;
        }
        let (stale, idle) = pool.take_stale();
        for warm in stale {
            tokio::spawn(discard(warm));
        }
        for worker in idle {
            tokio::spawn(worker.end());
        }
        for (name, registered) in &service.config.policies {
            while let Some(()) = pool.reserve_start(name) {
                let service = Arc::clone(&service);
                let pool = Arc::clone(&pool);
                let name = name.clone();
                let registered = registered.clone();
                tokio::spawn(async move {
                    let started = Instant::now();
                    let result = start(&service, &name, &registered, lifetime, None).await;
                    pool.finish_start(&name, result, started).await;
                });
            }
        }
        tokio::select! {
            () = pool.wake.notified() => {}
            () = tokio::time::sleep(TICK) => {}
        }
    }
}

impl Pool {
    /// Counts one more jail starting for `policy` when the pool wants one: below its depth, past
    /// the backoff of a failure, within the memory budget.
    fn reserve_start(&self, policy: &str) -> Option<()> {
        if self.closed.load(Ordering::SeqCst) {
            return None;
        }
        let mut state = self.state.lock().ok()?;
        let ready = state.ready.get(policy).map_or(0, Vec::len);
        let starting = state.starting.get(policy).copied().unwrap_or(0);
        if ready + starting >= self.config.depth {
            return None;
        }
        if state
            .stats
            .get(policy)
            .and_then(|s| s.retry_at)
            .is_some_and(|at| Instant::now() < at)
        {
            return None;
        }
        let warm: Vec<u64> = state.ready.values().flatten().map(|w| w.pss).collect();
        let held: u64 = warm.iter().sum();
        let each = if warm.is_empty() {
            0
        } else {
            held / warm.len() as u64
        };
        let all_starting: usize = state.starting.values().sum();
        let expected = held + each * (all_starting as u64 + 1);
        if expected > self.config.memory_bytes {
            return None;
        }
        *state.starting.entry(policy.to_owned()).or_default() += 1;
        Some(())
    }

    async fn finish_start(&self, policy: &str, result: anyhow::Result<Warm>, started: Instant) {
        let mut leftover = None;
        if let Ok(mut state) = self.state.lock() {
            // Read under the lock: `close` sets it before it takes the waiting jails, so a jail
            // ready after that is never left among them.
            let late = self.closed.load(Ordering::SeqCst);
            let stats = state.stats.entry(policy.to_owned()).or_default();
            match result {
                Ok(warm) => {
                    stats.refills += 1;
                    stats.forked += u64::from(warm.forked);
                    stats.refill_seconds += started.elapsed().as_secs_f64();
                    stats.retry_at = None;
                    if late {
                        leftover = Some(warm);
                    } else {
                        state.ready.entry(policy.to_owned()).or_default().push(warm);
                    }
                }
                Err(err) => {
                    stats.refill_failures += 1;
                    let message = format!("{err:#}");
                    if stats.last_error.as_deref() != Some(message.as_str()) {
                        eprintln!(
                            "warden: the pool of policy {policy} could not start a jail: {message}"
                        );
                    }
                    stats.last_error = Some(message);
                    stats.retry_at = Some(Instant::now() + BACKOFF);
                }
            }
            if leftover.is_none() {
                Self::started(&mut state, policy);
            }
        }
        if let Some(warm) = leftover {
            // Counted starting until it has ended: shutdown waits for it (`close`).
            discard(warm).await;
            if let Ok(mut state) = self.state.lock() {
                Self::started(&mut state, policy);
            }
        }
        self.wake.notify_one();
    }

    /// One jail of `policy` less starting.
    fn started(state: &mut State, policy: &str) {
        if let Some(n) = state.starting.get_mut(policy) {
            *n = n.saturating_sub(1);
        }
    }

    /// Removes the jails that waited longer than `max_idle`, and the idle workers that waited
    /// longer than [`IDLE_WORKER_TTL`].
    fn take_stale(&self) -> (Vec<Warm>, Vec<NewWorker>) {
        let Ok(mut state) = self.state.lock() else {
            return (Vec::new(), Vec::new());
        };
        let (old, young): (Vec<_>, Vec<_>) = std::mem::take(&mut state.idle)
            .into_iter()
            .partition(|(_, since)| since.elapsed() >= IDLE_WORKER_TTL);
        state.idle = young;
        let idle = old.into_iter().map(|(worker, _)| worker).collect();
        let max_idle = self.config.max_idle;
        let mut stale = Vec::new();
        let mut counts: BTreeMap<String, u64> = BTreeMap::new();
        for (policy, ready) in &mut state.ready {
            let (old, keep): (Vec<Warm>, Vec<Warm>) = std::mem::take(ready)
                .into_iter()
                .partition(|w| w.born.elapsed() >= max_idle);
            *ready = keep;
            *counts.entry(policy.clone()).or_default() += old.len() as u64;
            stale.extend(old);
        }
        for (policy, n) in counts {
            state.stats.entry(policy).or_default().discarded += n;
        }
        (stale, idle)
    }
}

impl Pool {
    /// The socket of `policy`'s template, starting one (or a fresh one, when the current one has
    /// forked `template_forks` runs or is older than `template_max_age`) when needed. `None`: no
    /// template (off, or it could not start lately): the jail starts on its own.
    async fn template_for(
        &self,
        service: &Service,
        policy: &str,
        registered: &RegisteredPolicy,
        lifetime: Duration,
    ) -> Option<std::path::PathBuf> {
        if !self.config.template || self.closed.load(Ordering::SeqCst) {
            return None;
        }
        let mut templates = self.templates.lock().await;
        // A template whose worker is gone (its jail died) is replaced.
        let alive = match templates.get_mut(policy) {
            Some(TemplateSlot::Ready(template)) => matches!(template.child.try_wait(), Ok(None)),
            _ => false,
        };
        match templates.get_mut(policy) {
            Some(TemplateSlot::Ready(template))
                if alive
                    && template.forks < self.config.template_forks
                    && template.born.elapsed() < self.config.template_max_age =>
            {
                template.forks += 1;
                return Some(template.socket.clone());
            }
            Some(TemplateSlot::Failed { retry_at }) if Instant::now() < *retry_at => return None,
            _ => {}
        }
        if let Some(TemplateSlot::Ready(old)) = templates.remove(policy) {
            self.retire(*old, lifetime);
        }
        let bound = lifetime + self.config.template_max_age;
        match start_template(service, registered, bound).await {
            Ok(mut template) => {
                if let Ok(mut state) = self.state.lock() {
                    state.stats.entry(policy.to_owned()).or_default().templates += 1;
                }
                template.forks = 1;
                let socket = template.socket.clone();
                templates.insert(policy.to_owned(), TemplateSlot::Ready(Box::new(template)));
                Some(socket)
            }
            Err(err) => {
                eprintln!("warden: the template of policy {policy} could not start: {err:#}");
                templates.insert(
                    policy.to_owned(),
                    TemplateSlot::Failed {
                        retry_at: Instant::now() + BACKOFF * 6,
                    },
                );
                None
            }
        }
    }

    /// Ends a template's relay; its worker exits once every run forked from it has ended (at
    /// most `within` later, then it is killed).
    fn retire(&self, template: Template, within: Duration) {
        let Template {
            mut child,
            stdin,
            dir,
            ..
        } = template;
        drop(stdin);
        let task = tokio::spawn(async move {
            if tokio::time::timeout(within, child.wait()).await.is_err() {
                let _ = child.kill().await;
            }
            drop(dir);
        });
        if let Ok(mut retiring) = self.retiring.lock() {
            retiring.retain(|task| !task.is_finished());
            retiring.push(task);
        }
    }

    /// Ends every template (shutdown, after the sessions): waits for their workers for up to
    /// `within`, then kills them (their jails, and anything forked from them, die with them).
    pub async fn close_templates(&self, within: Duration) {
        let templates: Vec<Template> = std::mem::take(&mut *self.templates.lock().await)
            .into_values()
            .filter_map(|slot| match slot {
                TemplateSlot::Ready(template) => Some(*template),
                TemplateSlot::Failed { .. } => None,
            })
            .collect();
        for template in templates {
            self.retire(template, within);
        }
        let tasks: Vec<_> = self
            .retiring
            .lock()
            .map(|mut r| std::mem::take(&mut *r))
            .unwrap_or_default();
        for task in tasks {
            let _ = task.await;
        }
    }
}

/// Starts `registered`'s template: a session worker in template mode, its jail, the preload.
async fn start_template(
    service: &Service,
    registered: &RegisteredPolicy,
    lifetime: Duration,
) -> anyhow::Result<Template> {
    let job = wire::TemplateJob {
        template: pool_start(registered, lifetime, None, false),
    };
    let (mut worker, answer) = ask_new_worker(service, "template", &job).await?;
    match serde_json::from_str::<wire::TemplateAnswer>(&answer) {
        Ok(wire::TemplateAnswer::Ready {
            socket,
            preload_failed,
        }) => {
            if !preload_failed.is_empty() {
                eprintln!(
                    "warden: a template could not preload: {}",
                    preload_failed.join("; ")
                );
            }
            // Its standard error is read to the end (and dropped) so that it never blocks.
            drop(worker.stderr);
            Ok(Template {
                child: worker.child,
                stdin: worker.stdin,
                dir: worker.dir,
                socket,
                born: Instant::now(),
                forks: 0,
            })
        }
        Ok(wire::TemplateAnswer::Failed { message }) => {
            let _ = worker.child.kill().await;
            anyhow::bail!("{message}");
        }
        Err(_) => Err(worker.out_of_turn("template").await),
    }
}

/// What the pool starts a worker with, for `registered`.
fn pool_start(
    registered: &RegisteredPolicy,
    lifetime: Duration,
    template: Option<std::path::PathBuf>,
    defer: bool,
) -> wire::PoolStart {
    wire::PoolStart {
        policy_text: registered.text.clone(),
        policy_resolved: Some(registered.resolved.clone()),
        policy_base_dir: registered.base_dir.clone(),
        policy_sha256: registered.policy.sha256.clone(),
        lifetime_ms: u64::try_from(lifetime.as_millis()).unwrap_or(u64::MAX),
        template,
        defer,
    }
}

/// A `warden session-worker` the pool started (or one back from a run), with its pipes and
/// directory.
struct NewWorker {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    dir: JobDir,
    stderr: tokio::task::JoinHandle<std::io::Result<Vec<u8>>>,
    /// Jails it served before.
    uses: u64,
}

impl NewWorker {
    /// Ends it (the end of its input; killed when it does not end soon).
    async fn end(self) {
        end_worker(self.child, self.stdin, self.dir).await;
    }

    /// Kills a worker whose answer was not one, and says what its standard error said.
    async fn out_of_turn(mut self, what: &str) -> anyhow::Error {
        let _ = self.child.kill().await;
        let stderr = match self.stderr.await {
            Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).trim().to_owned(),
            _ => String::new(),
        };
        anyhow::anyhow!("the {what} worker answered out of turn: {stderr}")
    }
}

/// Starts a session worker, sends it `job` and reads its first answer (the worker is killed when
/// that fails).
async fn ask_new_worker(
    service: &Service,
    what: &str,
    job: &impl serde::Serialize,
) -> anyhow::Result<(NewWorker, String)> {
    let (mut child, dir) = service
        .executor()
        .spawn_session_worker()
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        anyhow::bail!("the {what} worker's pipes are missing");
    };
    let stderr = tokio::spawn(super::executor::read_capped(stderr, 64 * 1024));
    let mut stdout = BufReader::new(stdout);
    match first_answer(&mut stdin, &mut stdout, job).await {
        Ok(answer) => Ok((
            NewWorker {
                child,
                stdin,
                stdout,
                dir,
                stderr,
                uses: 0,
            },
            answer,
        )),
        Err(err) => {
            let _ = child.kill().await;
            Err(err)
        }
    }
}

/// Sends `job` to a worker back from a run, when one waits, and reads its answer (counted
/// reused). `None`: no idle worker answered (those that did not are killed).
async fn ask_idle_worker(
    pool: &Pool,
    policy: &str,
    job: &wire::PoolJob,
) -> Option<(NewWorker, String)> {
    // Only a jail forked from the template is started by a worker used again.
    job.pool.template.as_ref()?;
    while let Some(mut worker) = pool.unpark() {
        match first_answer(&mut worker.stdin, &mut worker.stdout, job).await {
            Ok(answer) if !answer.is_empty() => {
                if let Ok(mut state) = pool.state.lock() {
                    state.stats.entry(policy.to_owned()).or_default().reused += 1;
                }
                return Some((worker, answer));
            }
            _ => {
                let _ = worker.child.kill().await;
            }
        }
    }
    None
}

/// Sends a worker its first line and reads its first answer (within [`START_TIMEOUT`]).
async fn first_answer(
    stdin: &mut ChildStdin,
    stdout: &mut BufReader<ChildStdout>,
    job: &impl serde::Serialize,
) -> anyhow::Result<String> {
    let mut line = serde_json::to_vec(job)?;
    line.push(b'\n');
    let ready = async {
        stdin.write_all(&line).await?;
        stdin.flush().await?;
        let mut answer = String::new();
        stdout.take(1 << 20).read_line(&mut answer).await?;
        anyhow::Ok(answer)
    };
    match tokio::time::timeout(START_TIMEOUT, ready).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(err)) => anyhow::bail!("the worker failed: {err}"),
        Err(_) => anyhow::bail!("the worker did not start within {START_TIMEOUT:?}"),
    }
}

/// Starts one pooled jail for `registered`: a session worker, its jail (forked from the policy's
/// template when it has one, else started on its own with the preload imported).
async fn start(
    service: &Service,
    policy: &str,
    registered: &RegisteredPolicy,
    lifetime: Duration,
    deferred: Option<std::path::PathBuf>,
) -> anyhow::Result<Warm> {
    let defer = deferred.is_some();
    let template = match deferred {
        Some(channel) => Some(channel),
        None => {
            service
                .pool()
                .template_for(service, policy, registered, lifetime)
                .await
        }
    };
    let template_given = template.is_some();
    let job = wire::PoolJob {
        pool: pool_start(registered, lifetime, template, defer),
    };
    let (mut worker, answer) = match ask_idle_worker(service.pool(), policy, &job).await {
        Some(asked) => asked,
        None => ask_new_worker(service, "pooled", &job).await?,
    };
    let (forked, jail) = match serde_json::from_str::<wire::PoolAnswer>(&answer) {
        Ok(wire::PoolAnswer::Ready {
            preload_failed,
            forked: was_forked,
            template_error,
            jail_pid,
            ..
        }) => {
            if let (false, Some(why)) = (was_forked, template_error.filter(|_| template_given)) {
                eprintln!("warden: a pooled jail was not forked from its template: {why}");
            }
            if !preload_failed.is_empty() {
                eprintln!(
                    "warden: a pooled jail could not preload: {}",
                    preload_failed.join("; ")
                );
            }
            // A forked jail is the template's child, not the worker's: measured on its own.
            (was_forked, jail_pid.filter(|_| was_forked))
        }
        Ok(wire::PoolAnswer::Failed { message }) => {
            let _ = worker.child.kill().await;
            anyhow::bail!("{message}");
        }
        Ok(wire::PoolAnswer::Idle) | Err(_) => return Err(worker.out_of_turn("pooled").await),
    };
    let measure = || worker.child.id().map_or(0, tree_pss) + jail.map_or(0, tree_pss);
    // Reading a forked jail's smaps walks its page tables (the template's size): the jails of one
    // template are alike, so one in PSS_SAMPLE is measured and the others take its figure.
    let pss = if forked {
        service.pool().sampled_pss(policy, measure)
    } else {
        measure()
    };
    let NewWorker {
        child,
        stdin,
        stdout,
        dir,
        stderr,
        uses,
    } = worker;
    Ok(Warm {
        child,
        stdin,
        stdout,
        dir,
        stderr,
        born: Instant::now(),
        pss,
        forked,
        uses,
    })
}

/// The proportional memory (PSS, bytes) of `pid` and every process below it, from
/// `/proc/PID/smaps_rollup` (0 for what cannot be read).
pub fn tree_pss(pid: u32) -> u64 {
    let mut total = 0;
    let mut todo = vec![pid];
    let mut seen = BTreeSet::new();
    while let Some(pid) = todo.pop() {
        if !seen.insert(pid) || seen.len() > 4096 {
            continue;
        }
        total += smaps_field(pid, "Pss:");
        todo.extend(children(pid));
    }
    total
}

/// A field of `/proc/PID/smaps_rollup`, in bytes (0 when unreadable).
pub fn smaps_field(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|line| line.starts_with(field))
                .and_then(|line| line.split_whitespace().nth(1))
                .and_then(|kib| kib.parse::<u64>().ok())
        })
        .map_or(0, |kib| kib * 1024)
}

fn children(pid: u32) -> Vec<u32> {
    use std::io::Read;
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    let mut buf = vec![0u8; 64 << 10];
    for task in tasks.flatten() {
        // One `read`: the kernel renders the list anew at each read from an entry index, so a
        // child reaped between two smaller reads would hide a live sibling.
        let Ok(mut file) = std::fs::File::open(task.path().join("children")) else {
            continue;
        };
        let Ok(n) = file.read(&mut buf) else {
            continue;
        };
        found.extend(
            String::from_utf8_lossy(&buf[..n])
                .split_whitespace()
                .filter_map(|p| p.parse::<u32>().ok()),
        );
    }
    found
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<PoolConfig> {
        let raw: RawPool =
            warden_policy::settings::parse_toml(text).map_err(|err| anyhow::anyhow!("{err}"))?;
        PoolConfig::from_raw(&raw)
    }

    #[test]
    fn the_pool_is_on_by_default_and_its_keys_are_checked() {
        assert_eq!(parse("").unwrap(), PoolConfig::default());
        let config = parse("enabled = false\ndepth = 3\nmemory_mib = 512\n").unwrap();
        assert!(!config.enabled);
        assert_eq!(config.depth, 3);
        assert_eq!(config.memory_bytes, 512 << 20);
        for bad in ["depth = 0", "memory_mib = 0", "max_idle_ms = 5", "size = 2"] {
            assert!(parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn the_memory_of_this_process_tree_is_measured() {
        assert!(tree_pss(std::process::id()) > 0);
    }
}
