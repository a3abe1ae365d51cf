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
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::process::{Child, ChildStdin};
use warden_gateway::pipeline::RunRecord;
use warden_worker::wire::{self, Job};

use super::admission::Slot;
use super::config::RegisteredPolicy;
use super::executor::{ExecError, JobDir};
use super::Service;

mod config;
mod memory;
mod metrics;
mod process;
mod templates;

pub(crate) use config::RawPool;
pub use config::{
    PoolConfig, DEFAULT_DEPTH, DEFAULT_MAX_IDLE_MS, DEFAULT_MEMORY_MIB, DEFAULT_TEMPLATE_FORKS,
    DEFAULT_TEMPLATE_MAX_AGE_MS,
};
pub use memory::{smaps_field, tree_pss};
pub(crate) use process::Warm;
use process::{ask_idle_worker, ask_new_worker, discard, NewWorker};

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

/// Whether the static layer lets `job` reach a jail (allowed, or sent to review and approved),
/// by the report the server made for it: a program it stops never takes a pooled jail (it goes
/// the cold way, which starts no jail for it). A job without a report goes cold too.
fn would_run(job: &Job) -> bool {
    job.checked
        .as_ref()
        .is_some_and(|checked| checked.lets_run(job.approval.is_some()))
}

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
    /// Its end ends the relay.
    stdin: Option<ChildStdin>,
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
        if !self.usable() || !would_run(job) {
            return None;
        }
        let warm = if job.inputs.is_empty() {
            match self.take(want, false) {
                Some(warm) => warm,
                // The pool is empty (counted a miss): with the policy's template up, a jail
                // forked for this run now costs a fork where a cold start would import the
                // preload again; without it, the run goes cold.
                None => self.forked_now(service, want, job, false).await?,
            }
        } else {
            self.forked_now(service, want, job, true).await?
        };
        let pid = warm.process.child.id().unwrap_or(0);
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
    /// run that found the pool empty. A fork instead of a cold start. `hit`: counted a hit (the
    /// run found no jail missing). `None`: it runs cold.
    async fn forked_now(
        &self,
        service: &Service,
        want: &Want<'_>,
        job: &Job,
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
                if since.elapsed() < IDLE_WORKER_TTL
                    && matches!(worker.process.child.try_wait(), Ok(None))
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
        None => ask_new_worker(service, &job).await?,
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
            let _ = worker.process.child.kill().await;
            anyhow::bail!("{message}");
        }
        Ok(wire::PoolAnswer::Idle) | Err(_) => return Err(worker.out_of_turn("pooled").await),
    };
    let measure = || worker.process.child.id().map_or(0, tree_pss) + jail.map_or(0, tree_pss);
    // Reading a forked jail's smaps walks its page tables (the template's size): the jails of one
    // template are alike, so one in PSS_SAMPLE is measured and the others take its figure.
    let pss = if forked {
        service.pool().sampled_pss(policy, measure)
    } else {
        measure()
    };
    let NewWorker { process, uses } = worker;
    Ok(Warm {
        process,
        born: Instant::now(),
        pss,
        forked,
        uses,
    })
}
