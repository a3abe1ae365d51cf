//! Watching a run: capture, limits, the end, and cleanup.
//!
//! Owns: the poll loop over the program's stdout and stderr, the control socket, the init's pidfd and a
//! signalfd; bounded capture (bytes past a cap are counted and discarded, so warden's memory stays
//! bounded under a flood, and a flood far past the cap ends the run; a session's output goes to a
//! queue bounded in bytes, and past it the pipes are not read); the wall-clock deadline and the
//! tree-wide CPU budget (read from the cgroup); killing the tree (SIGKILL to the jail's init: the kernel
//! then kills every process of its pid namespace); copying the work dir back once the program has
//! ended (through `mirror.rs`); classifying the end into a [`Status`] — or into an error when a
//! stage failed, warden was interrupted, or the init ended without reporting the program's end
//! ([`JailError::InitLost`]); reading usage; removing the cgroup.
//!
//! Does not own: starting the run (`parent.rs`) or what the jail reports (`message.rs`).

use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{kill, Signal};
use nix::sys::signalfd::SignalFd;
use nix::sys::wait::WaitStatus;
use nix::unistd::Pid;

use crate::cgroup::{Cgroup, CgroupPlan, Stats};
use crate::error::JailError;
use crate::message::{self, ToChild, ToParent};
use crate::mirror::{self, CopyBack, CopyCaps, Manifest};
use crate::outcome::{Layers, LimitHit, Outcome, Status, Usage};
use crate::parent::Running;
use crate::plan::Plan;
use crate::sys::{self, ChildUsage};

/// Output past a stream's cap that is still drained (and discarded) before the run is ended.
const DRAIN_BYTES: u64 = 16 * 1024 * 1024;
/// How often the tree's CPU time is checked against its budget.
const CPU_CHECK: Duration = Duration::from_millis(100);
/// How long to wait for the pipes to close after the program ended (a process stuck in the kernel).
const DRAIN_GRACE: Duration = Duration::from_secs(2);
/// How often a stream paused on a full session tap is looked at again.
const TAP_RETRY: Duration = Duration::from_millis(5);
/// How often to try opening the jail's `/work` until the init has moved into the jail's root.
const WORK_TRY: Duration = Duration::from_millis(10);

/// Which of the program's output streams a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// The most bytes of a session's output the host holds that its consumer has not taken yet (plus at
/// most one read, 64 KiB). Past it the supervisor stops reading the jail's pipes until the consumer
/// takes some: the jail's writers then block once the pipe's own buffer (kernel memory, charged to
/// the jail's cgroup when it has one) is full. So output a session writes while nobody asks for it
/// (between cells) costs the host at most this much, whatever the jail does.
pub const TAP_BYTES: usize = 1 << 20;

/// Where a session's output goes as it arrives, instead of into the outcome: a queue bounded in
/// bytes ([`TAP_BYTES`]), in arrival order across both streams. The supervisor holds the sending
/// side ([`TapSender`]); the session the receiving one ([`TapReceiver`]). Once the receiver is
/// gone, output is read and dropped (so the jail can always wind down).
pub fn tap(cap: usize) -> (TapSender, TapReceiver) {
    let shared = Arc::new(TapShared {
        state: Mutex::new(TapState {
            chunks: VecDeque::new(),
            bytes: 0,
            senders: 1,
            receiver: true,
            discard: false,
        }),
        changed: Condvar::new(),
        cap,
    });
    (TapSender(shared.clone()), TapReceiver(shared))
}

struct TapState {
    chunks: VecDeque<(Stream, Vec<u8>)>,
    bytes: usize,
    senders: usize,
    receiver: bool,
    /// Output is read and dropped ([`TapReceiver::discard`]).
    discard: bool,
}

struct TapShared {
    state: Mutex<TapState>,
    changed: Condvar,
    cap: usize,
}

impl TapShared {
    fn lock(&self) -> std::sync::MutexGuard<'_, TapState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// The supervisor's side of a [`tap`].
pub struct TapSender(Arc<TapShared>);

impl TapSender {
    /// Whether the queue has room for another read (or nobody takes output any more).
    fn room(&self) -> bool {
        let state = self.0.lock();
        !state.receiver || state.discard || state.bytes < self.0.cap
    }

    fn send(&self, stream: Stream, bytes: &[u8]) {
        let mut state = self.0.lock();
        if state.receiver && !state.discard {
            state.bytes += bytes.len();
            state.chunks.push_back((stream, bytes.to_vec()));
            self.0.changed.notify_all();
        }
    }
}

impl Clone for TapSender {
    fn clone(&self) -> Self {
        self.0.lock().senders += 1;
        TapSender(self.0.clone())
    }
}

impl Drop for TapSender {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.senders = state.senders.saturating_sub(1);
        self.0.changed.notify_all();
    }
}

/// The session's side of a [`tap`].
pub struct TapReceiver(Arc<TapShared>);

/// Why [`TapReceiver::recv_timeout`] returned nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TapEmpty {
    /// Nothing came in time.
    Timeout,
    /// Nothing is queued and the supervisor is gone: nothing will come.
    Ended,
}

impl TapReceiver {
    /// The next chunk, waiting at most `timeout`.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<(Stream, Vec<u8>), TapEmpty> {
        // No deadline when `timeout` is too far to add: an hour at a time.
        let deadline = Instant::now().checked_add(timeout);
        let mut state = self.0.lock();
        loop {
            if let Some((stream, bytes)) = state.chunks.pop_front() {
                state.bytes -= bytes.len();
                return Ok((stream, bytes));
            }
            if state.senders == 0 {
                return Err(TapEmpty::Ended);
            }
            let left = deadline.map_or(Duration::from_secs(3600), |deadline| {
                deadline.saturating_duration_since(Instant::now())
            });
            if left.is_zero() {
                return Err(TapEmpty::Timeout);
            }
            state = self
                .0
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// How many bytes are queued, not taken yet.
    pub fn queued_bytes(&self) -> usize {
        self.0.lock().bytes
    }

    /// From now on output is read and dropped instead of queued (for a jail whose output nobody
    /// reads and whose writers must never block: a pool's template); the end still comes.
    pub fn discard(&self) {
        let mut state = self.0.lock();
        state.discard = true;
        state.chunks.clear();
        state.bytes = 0;
    }
}

impl Drop for TapReceiver {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        state.receiver = false;
        state.chunks.clear();
        state.bytes = 0;
    }
}

/// A session's side of the supervisor: its output tap, the read end of a pipe whose writer ends
/// the session (a byte, or closing it, kills the tree), and what the host side may change while it
/// runs.
pub struct SessionIo {
    pub tap: TapSender,
    pub stop: OwnedFd,
    pub shared: Arc<SessionShared>,
}

/// What a session's host side and its supervisor share.
pub struct SessionShared {
    /// The tree's CPU budget as a reading of its cgroup's counter, in µs, when lower than the
    /// plan's (a pooled run's: the counter at its delivery plus the run's `cpu_time_ms`).
    pub cpu_budget_us: AtomicU64,
    /// Whether the supervisor is killing the tree. Held while freezing or thawing: a freeze never
    /// follows the kill's thaw (a v1 frozen task does not die).
    pub killing: Mutex<bool>,
}

impl SessionShared {
    pub fn new() -> Self {
        SessionShared {
            cpu_budget_us: AtomicU64::new(u64::MAX),
            killing: Mutex::new(false),
        }
    }
}

impl Default for SessionShared {
    fn default() -> Self {
        Self::new()
    }
}

/// Captured output of one stream.
struct Capture {
    fd: Option<OwnedFd>,
    data: Vec<u8>,
    cap: u64,
    total: u64,
    tap: Option<(Stream, TapSender)>,
}

impl Capture {
    fn new(fd: OwnedFd, cap: u64, tap: Option<(Stream, TapSender)>) -> Self {
        Capture {
            fd: Some(fd),
            data: Vec::new(),
            cap,
            total: 0,
            tap,
        }
    }

    /// Reads what is available; closes on end of file.
    fn read_available(&mut self) {
        let Some(fd) = &self.fd else { return };
        let mut buf = [0u8; 65536];
        loop {
            match nix::unistd::read(fd, &mut buf) {
                Ok(0) => {
                    self.fd = None;
                    return;
                }
                Ok(n) if self.tap.is_some() => {
                    if let Some((stream, tap)) = &self.tap {
                        tap.send(*stream, &buf[..n]);
                    }
                    if n < buf.len() || !self.has_room() {
                        return;
                    }
                }
                Ok(n) => {
                    self.total += n as u64;
                    let room = self.cap.saturating_sub(self.data.len() as u64) as usize;
                    self.data.extend_from_slice(&buf[..n.min(room)]);
                    if n < buf.len() {
                        return;
                    }
                }
                Err(Errno::EINTR) => {}
                Err(_) => return,
            }
        }
    }

    /// Whether the stream is to be read now: open, and a session's tap has room.
    fn readable(&self) -> bool {
        self.fd.is_some() && self.has_room()
    }

    fn has_room(&self) -> bool {
        self.tap.as_ref().is_none_or(|(_, tap)| tap.room())
    }

    /// Open but not read for now (a session's tap is full).
    fn paused(&self) -> bool {
        self.fd.is_some() && !self.has_room()
    }

    fn truncated(&self) -> bool {
        self.total > self.cap
    }

    fn flooded(&self) -> bool {
        self.total > self.cap.saturating_add(DRAIN_BYTES)
    }
}

/// Whether a run's outcome may be returned before its init has exited ([`defer_teardown`]).
static DEFER: AtomicBool = AtomicBool::new(false);

/// The jails whose outcome was returned while their init was still exiting.
static PENDING: Mutex<Vec<Left>> = Mutex::new(Vec::new());

/// The run cgroups of wardens that are gone, to look for after the run ([`reap_stale`]).
static REAP: Mutex<Option<CgroupPlan>> = Mutex::new(None);

/// Removes the run cgroups of wardens that are gone before a run starts — or, when the caller
/// defers the teardown ([`defer_teardown`]), in [`finish_teardown`]: the new run's cgroup has a
/// name of its own either way, and the scan reads `/proc` once per owner of a run directory, which
/// a busy server has hundreds of.
pub(crate) fn reap_stale(plan: &CgroupPlan) {
    if DEFER.load(Ordering::Relaxed) {
        *REAP.lock().unwrap_or_else(|p| p.into_inner()) = Some(plan.clone());
    } else {
        plan.reap_stale();
    }
}

/// A jail left to finish: its init (killed and reaped when `run` is dropped) and its cgroup.
struct Left {
    run: Running,
    cgroup: Option<Cgroup>,
}

/// Lets [`crate::run`] return a run's outcome as soon as it is complete — the program ended, every
/// other process of the jail is gone, both pipes are closed, the work dir is copied back and the
/// cgroup's counters are read — instead of after the init's exit (the kernel's teardown of the
/// jail's namespaces) and the cgroup's removal. The caller must then call [`finish_teardown`]
/// before it exits (`warden run` does, after printing the record). Off unless asked for.
pub fn defer_teardown(on: bool) {
    DEFER.store(on, Ordering::Relaxed);
}

/// Waits for the init of every run whose outcome was returned early ([`defer_teardown`]) and
/// removes its cgroup. Returns the first removal that failed (the rest are still attempted).
pub fn finish_teardown() -> Result<(), JailError> {
    let left = std::mem::take(&mut *PENDING.lock().unwrap_or_else(|p| p.into_inner()));
    let mut result = Ok(());
    for Left { run, cgroup } in left {
        // Kills (it is exiting already) and reaps the init: its namespaces are gone after this.
        drop(run);
        crate::trace("init reaped");
        if let Some(cgroup) = cgroup {
            if let Err(err) = cgroup.remove() {
                if result.is_ok() {
                    result = Err(err);
                }
            }
            crate::trace("cgroup removed");
        }
    }
    if let Some(plan) = REAP.lock().unwrap_or_else(|p| p.into_inner()).take() {
        plan.reap_stale();
        crate::trace("stale cgroups reaped");
    }
    result
}

/// Why warden ended the run itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kill {
    WallTime,
    CpuTime,
    /// The program had ended but the jail did not wind down within the drain grace (a process
    /// stuck in the kernel): not a limit the program hit.
    Stuck,
    Output,
    Signal(i32),
    /// warden ended a session (its owner asked, or a cell did not stop when interrupted).
    Stopped,
}

struct Watch<'a> {
    plan: &'a Plan,
    run: Running,
    stdout: Capture,
    stderr: Capture,
    signals: Option<&'a SignalFd>,
    control_open: bool,
    killed: Option<Kill>,
    program_status: Option<i32>,
    program_ended: Option<Instant>,
    /// When winding down last made progress (the program's end, then the end of the copy-back):
    /// the drain grace counts from here.
    winding_since: Option<Instant>,
    stage_error: Option<JailError>,
    /// The init's resource usage, once it has been reaped.
    init_exit: Option<ChildUsage>,
    /// The init's raw wait status, once it has been reaped.
    init_status: Option<i32>,
    finish_sent: bool,
    /// The host work dir and what was copied in from it.
    workdir: Option<(&'a Path, Manifest)>,
    /// The jail's `/work`, opened from the host once the init is in the jail's root: the copy back
    /// reads through it, also after a kill has torn the jail's mount namespace down.
    work: Option<OwnedFd>,
    /// When to try opening `work` next.
    next_work_try: Instant,
    /// What came back from the work dir, once copied.
    copy_back: Option<CopyBack>,
    /// A session's stop pipe (see [`SessionIo`]).
    stop: Option<OwnedFd>,
    /// What a session's host side shares with the supervisor (see [`SessionIo`]).
    shared: Option<Arc<SessionShared>>,
    /// The cgroup's counters, read while the init tears the jail down (see `run_loop`).
    stats: Option<Stats>,
}

/// Watches `run` to its end and returns how it ended. `signals`: a signalfd for SIGINT/SIGTERM/SIGHUP,
/// which end the run early.
/// With `workdir`, files the program created or changed in `/work` are copied back into it. With
/// `tap` (a session), output goes to it as it arrives, uncapped here, and the outcome holds none.
pub fn supervise<'a>(
    plan: &'a Plan,
    mut run: Running,
    signals: Option<&'a SignalFd>,
    workdir: Option<(&'a Path, Manifest)>,
    session: Option<SessionIo>,
) -> Result<Outcome, JailError> {
    let (tap, stop, shared) = match session {
        Some(SessionIo { tap, stop, shared }) => (Some(tap), Some(stop), Some(shared)),
        None => (None, None, None),
    };
    let stdout = Capture::new(
        take(&mut run.stdout)?,
        plan.limits.stdout_bytes,
        tap.clone().map(|tap| (Stream::Stdout, tap)),
    );
    let stderr = Capture::new(
        take(&mut run.stderr)?,
        plan.limits.stderr_bytes,
        tap.map(|tap| (Stream::Stderr, tap)),
    );
    let mut watch = Watch {
        plan,
        run,
        stdout,
        stderr,
        signals,
        control_open: true,
        killed: None,
        program_status: None,
        program_ended: None,
        winding_since: None,
        stage_error: None,
        init_exit: None,
        init_status: None,
        finish_sent: false,
        workdir,
        work: None,
        next_work_try: Instant::now(),
        copy_back: None,
        stop,
        shared,
        stats: None,
    };
    watch.run_loop()?;
    watch.finish()
}

/// Moves a descriptor out of `Running` (leaving a placeholder that is closed at once).
fn take(fd: &mut OwnedFd) -> Result<OwnedFd, JailError> {
    let placeholder = nix::fcntl::open(
        c"/dev/null",
        nix::fcntl::OFlag::O_RDONLY | nix::fcntl::OFlag::O_CLOEXEC,
        nix::sys::stat::Mode::empty(),
    )
    .map_err(|errno| JailError::syscall("open", "/dev/null", errno))?;
    Ok(std::mem::replace(fd, placeholder))
}

impl Watch<'_> {
    fn deadline(&self) -> Instant {
        self.run.started + Duration::from_millis(self.plan.limits.wall_time_ms)
    }

    fn kill_tree(&mut self, why: Kill) {
        if self.killed.is_none() && self.init_exit.is_none() {
            if !matches!(why, Kill::Signal(_)) {
                // The files written before the kill come back (marked partial): hold the work dir.
                self.grab_work();
            }
            self.killed = Some(why);
            if let Some(shared) = &self.shared {
                // A session may be frozen between cells: thawed first (a v1 frozen task does not
                // die), and never frozen again.
                let mut killing = shared
                    .killing
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                *killing = true;
                if let Some(cgroup) = &self.run.cgroup {
                    cgroup.freeze(false);
                }
            }
            let _ = kill(self.run.init, Signal::SIGKILL);
        }
    }

    fn done(&self) -> bool {
        (self.init_exit.is_some() || self.may_leave_init())
            && self.stdout.fd.is_none()
            && self.stderr.fd.is_none()
    }

    /// Whether the outcome may be built before the init has exited (only when the caller asked,
    /// [`defer_teardown`]): the program reported its end, the init reaped every other process of
    /// the jail before saying so (`child.rs`), the work dir is copied back and the init told to
    /// go, and the cgroup's counters — final, since nothing but the exiting init is left — have
    /// been read. The init's exit (the namespaces' teardown) and the cgroup's removal then wait
    /// for [`finish_teardown`].
    fn may_leave_init(&self) -> bool {
        DEFER.load(Ordering::Relaxed)
            && self.finish_sent
            && self.program_status.is_some()
            && self.killed.is_none()
            && self.stage_error.is_none()
            && self
                .stats
                .as_ref()
                .is_some_and(|stats| stats.cpu_us.is_some() && stats.memory_peak_bytes.is_some())
    }

    fn run_loop(&mut self) -> Result<(), JailError> {
        let mut next_cpu_check = Instant::now() + CPU_CHECK;
        loop {
            if self.done() {
                return Ok(());
            }
            let now = Instant::now();
            if self.wants_work() && now >= self.next_work_try {
                self.next_work_try = now + WORK_TRY;
                self.grab_work();
            }
            // The wall clock limits the program; once it has ended, the time spent winding down
            // (draining pipes, copying the work dir back) is bounded by the drain grace instead.
            if self.killed.is_none() && self.program_ended.is_none() && now >= self.deadline() {
                self.kill_tree(Kill::WallTime);
            }
            if now >= next_cpu_check {
                next_cpu_check = now + CPU_CHECK;
                self.check_cpu();
            }
            // After the program ended, its pipes close as soon as the init has killed the rest; a
            // process stuck in the kernel must not keep warden waiting forever.
            if let Some(since) = self.winding_since.or(self.program_ended) {
                if now.duration_since(since) > DRAIN_GRACE {
                    self.stdout.fd = None;
                    self.stderr.fd = None;
                    if self.init_exit.is_none() {
                        self.kill_tree(Kill::Stuck);
                    }
                }
            }
            let mut wake = next_cpu_check.min(self.deadline());
            if let Some(since) = self.winding_since.or(self.program_ended) {
                wake = wake.min(since + DRAIN_GRACE);
            }
            if self.wants_work() {
                wake = wake.min(self.next_work_try);
            }
            if self.stdout.paused() || self.stderr.paused() {
                // Look again soon whether the session took some of its output.
                wake = wake.min(now + TAP_RETRY);
            }
            self.poll_once(wake.saturating_duration_since(now))?;
            if self.program_status.is_some()
                && !self.finish_sent
                && self.stdout.fd.is_none()
                && self.stderr.fd.is_none()
            {
                // Everything is read and every other process of the jail is dead: copy the work dir
                // back, then let the init go (its exit tears the namespaces down).
                self.finish_sent = true;
                crate::trace("output closed");
                if self.workdir.is_some() && self.init_exit.is_none() {
                    self.grab_work();
                    self.copy_back();
                    // The copy has its own time bound (mirror::COPY_BACK_TIME); the init's exit
                    // gets its own grace after it.
                    self.winding_since = Some(Instant::now());
                }
                let _ = message::send_to_child(self.run.control.as_fd(), ToChild::Finish);
                // The program and every other process of the jail have ended: the counters are
                // final. Read them while the init's exit tears the namespaces down, not after.
                self.stats = self.run.cgroup.as_ref().map(|c| c.stats());
            }
        }
    }

    /// Whether the jail's `/work` is still to be opened.
    fn wants_work(&self) -> bool {
        self.workdir.is_some()
            && self.work.is_none()
            && self.copy_back.is_none()
            && self.init_exit.is_none()
            && self.killed.is_none()
    }

    /// Opens the jail's `/work` if it is not open yet and the init is alive and in the jail's root.
    fn grab_work(&mut self) {
        if self.workdir.is_some() && self.work.is_none() && self.init_exit.is_none() {
            self.work = mirror::open_jail_work(self.run.init);
        }
    }

    /// Copies the work dir back (once), when it could be opened. Only when every process of the jail
    /// has ended: the program has exited and the init killed the rest, or the init is gone.
    fn copy_back(&mut self) {
        let (Some((host, before)), Some(work), None) =
            (&self.workdir, self.work.take(), &self.copy_back)
        else {
            return;
        };
        crate::trace("copy back");
        let signaled = self
            .program_status
            .is_some_and(|raw| libc::WIFSIGNALED(raw));
        let caps = CopyCaps {
            files: self.plan.limits.work_files,
            bytes: self.plan.limits.work_bytes,
            time: mirror::COPY_BACK_TIME,
        };
        let partial = self.killed.is_some() || self.program_status.is_none() || signaled;
        self.copy_back = Some(mirror::copy_out(&work, host, before, caps, partial));
    }

    /// The tree's CPU budget as a reading of its cgroup's counter: the plan's, or a session's
    /// lower one (a pooled run's, see [`SessionShared`]).
    fn cpu_budget_us(&self) -> u64 {
        let plan = self.plan.limits.cpu_time_ms.saturating_mul(1000);
        self.shared.as_ref().map_or(plan, |shared| {
            plan.min(shared.cpu_budget_us.load(Ordering::Relaxed))
        })
    }

    fn check_cpu(&mut self) {
        let budget_us = self.cpu_budget_us();
        let used = self.run.cgroup.as_ref().and_then(|c| c.cpu_us());
        if used.is_some_and(|used| used > budget_us) {
            self.kill_tree(Kill::CpuTime);
        }
    }

    fn poll_once(&mut self, timeout: Duration) -> Result<(), JailError> {
        #[derive(Clone, Copy, PartialEq)]
        enum Source {
            Stdout,
            Stderr,
            Control,
            Init,
            Signals,
            Stop,
        }
        let mut ready = Vec::with_capacity(5);
        {
            let mut sources: Vec<(Source, BorrowedFd<'_>)> = Vec::with_capacity(5);
            // A stream whose session tap is full is not read (the jail's writer then blocks).
            if let (Some(fd), true) = (&self.stdout.fd, self.stdout.readable()) {
                sources.push((Source::Stdout, fd.as_fd()));
            }
            if let (Some(fd), true) = (&self.stderr.fd, self.stderr.readable()) {
                sources.push((Source::Stderr, fd.as_fd()));
            }
            if self.control_open {
                sources.push((Source::Control, self.run.control.as_fd()));
            }
            if self.init_exit.is_none() {
                sources.push((Source::Init, self.run.pidfd.as_fd()));
            }
            if let Some(signals) = self.signals {
                sources.push((Source::Signals, signals.as_fd()));
            }
            if let Some(stop) = &self.stop {
                sources.push((Source::Stop, stop.as_fd()));
            }
            let mut fds: Vec<PollFd<'_>> = sources
                .iter()
                .map(|(_, fd)| PollFd::new(*fd, PollFlags::POLLIN))
                .collect();
            let timeout = PollTimeout::try_from(timeout.max(Duration::from_millis(1)))
                .unwrap_or(PollTimeout::MAX);
            match poll(&mut fds, timeout) {
                Ok(_) | Err(Errno::EINTR) => {}
                Err(errno) => return Err(JailError::syscall("poll", "supervisor", errno)),
            }
            for ((source, _), fd) in sources.iter().zip(&fds) {
                if fd.revents().is_some_and(|r| !r.is_empty()) {
                    ready.push(*source);
                }
            }
        }
        if ready.contains(&Source::Stdout) {
            self.stdout.read_available();
        }
        if ready.contains(&Source::Stderr) {
            self.stderr.read_available();
        }
        if self.stdout.flooded() || self.stderr.flooded() {
            self.kill_tree(Kill::Output);
        }
        if ready.contains(&Source::Control) {
            self.read_control();
        }
        if ready.contains(&Source::Init) {
            self.reap_init()?;
        }
        if ready.contains(&Source::Stop) {
            self.stop = None;
            self.kill_tree(Kill::Stopped);
        }
        if ready.contains(&Source::Signals) {
            if let Some(Ok(Some(info))) = self.signals.map(SignalFd::read_signal) {
                self.kill_tree(Kill::Signal(info.ssi_signo as i32));
            }
        }
        Ok(())
    }

    /// Reads one message from the jail, if one is waiting; returns whether one was.
    fn read_control(&mut self) -> bool {
        match message::recv_from_child(self.run.control.as_fd()) {
            Ok(Some(ToParent::Exited { status })) => {
                crate::trace("exited");
                self.program_status = Some(status);
                self.program_ended = Some(Instant::now());
                true
            }
            Ok(Some(ToParent::StageFailed(failed))) => {
                self.stage_error = Some(failed.into());
                true
            }
            // Read by the fork's setup (`template.rs`) before supervision starts.
            Ok(Some(ToParent::Mounted)) => true,
            Ok(None) => {
                self.control_open = false;
                false
            }
            Err(Errno::EAGAIN) => false,
            Err(_) => {
                self.control_open = false;
                false
            }
        }
    }

    fn reap_init(&mut self) -> Result<(), JailError> {
        if self.run.adopted_init() {
            // A forked run's init is the template's child: its pidfd being readable is its end
            // (the template reaps it). Its usage is the cgroup's.
            crate::trace("init ended");
            self.init_exit = Some(ChildUsage::default());
            self.run.disarm();
            while self.control_open && self.read_control() {}
            if self.program_ended.is_none() {
                self.program_ended = Some(Instant::now());
            }
            return Ok(());
        }
        match sys::wait4(self.run.init, true) {
            Ok(Some((_, status, usage))) => {
                crate::trace("init reaped");
                self.init_exit = Some(usage);
                self.init_status = Some(status);
                self.run.disarm();
                // Everything the jail sent is queued by now (the init, and with it every process of
                // its namespace, has exited): read it before the end is classified, even when poll
                // saw the exit before the message.
                while self.control_open && self.read_control() {}
                if self.program_ended.is_none() {
                    self.program_ended = Some(Instant::now());
                }
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(errno) => Err(JailError::syscall("wait4", self.run.init, errno)),
        }
    }

    fn finish(mut self) -> Result<Outcome, JailError> {
        crate::trace("finish");
        let ended = self.program_ended.unwrap_or_else(Instant::now);
        let wall_ms = ended.duration_since(self.run.started).as_millis() as u64;
        let stats = match self.stats.take() {
            Some(stats) => stats,
            None => self
                .run
                .cgroup
                .as_ref()
                .map(|c| c.stats())
                .unwrap_or_default(),
        };
        // The init still exiting: the outcome is complete (`may_leave_init`); the init and the
        // cgroup wait for `finish_teardown`.
        let left = self.init_exit.is_none();
        let mut cgroup = self.run.cgroup.take();
        if !left {
            if let Some(cgroup) = cgroup.take() {
                cgroup.remove()?;
                crate::trace("cgroup removed");
            }
        }
        if let Some(err) = self.stage_error.take() {
            return Err(err);
        }
        if let Some(Kill::Signal(signal)) = self.killed {
            return Err(JailError::Interrupted(signal));
        }
        // The init reports the program's end before it exits. Without that report, and with neither
        // warden nor the OOM killer (which takes the whole group on cgroup v2) to explain the end,
        // the init was lost: nothing is known of how the program ended.
        if self.program_status.is_none() && self.killed.is_none() && stats.oom_kills == 0 {
            return Err(JailError::InitLost(describe_exit(self.init_status)));
        }
        // A kill ended the jail before the copy back: every process is gone now (the init's exit
        // waits for its namespace to empty), and the descriptor still holds the work dir.
        self.copy_back();
        let rusage = self.init_exit.unwrap_or_default();
        let mut limits = Vec::new();
        match self.killed {
            Some(Kill::WallTime) => limits.push(LimitHit::WallTime),
            Some(Kill::CpuTime) => limits.push(LimitHit::CpuTime),
            _ => {}
        }
        let (exit_code, signal) = match self
            .program_status
            .map(|raw| WaitStatus::from_raw(Pid::from_raw(1), raw))
        {
            Some(Ok(WaitStatus::Exited(_, code))) => (Some(code), None),
            Some(Ok(WaitStatus::Signaled(_, signal, _))) => (None, Some(signal as i32)),
            _ if self.killed.is_some() => (None, Some(Signal::SIGKILL as i32)),
            _ => (None, None),
        };
        let cpu_us = stats.cpu_us.unwrap_or(rusage.cpu_us);
        let cpu_budget_us = self.cpu_budget_us();
        if signal == Some(Signal::SIGXCPU as i32)
            || (signal == Some(Signal::SIGKILL as i32)
                && self.killed.is_none()
                && cpu_us >= cpu_budget_us)
        {
            limits.push(LimitHit::CpuTime);
        }
        let cgroup_memory = self.plan.cgroup.is_some();
        let memory_error = !cgroup_memory
            && exit_code.is_some_and(|c| c != 0)
            && ends_with_memory_error(&self.stderr.data);
        if stats.oom_kills > 0 || memory_error {
            limits.push(LimitHit::Memory);
        }
        if stats.pids_limit_hits > 0 {
            limits.push(LimitHit::Pids);
        }
        if self.stdout.truncated() || self.killed == Some(Kill::Output) && self.stdout.flooded() {
            limits.push(LimitHit::Stdout);
        }
        if self.stderr.truncated() {
            limits.push(LimitHit::Stderr);
        }
        limits.sort();
        limits.dedup();
        let status = Status::from_limits(&limits, exit_code);
        let outcome = Outcome {
            status,
            exit_code,
            signal,
            stdout_truncated: self.stdout.truncated(),
            stderr_truncated: self.stderr.truncated(),
            stdout: std::mem::take(&mut self.stdout.data),
            stderr: std::mem::take(&mut self.stderr.data),
            limits_hit: limits,
            usage: Usage {
                wall_ms,
                cpu_ms: cpu_us / 1000,
                memory_peak_bytes: stats.memory_peak_bytes.unwrap_or(rusage.max_rss_bytes),
            },
            layers: layers(self.plan),
            copy_back: self.copy_back.take(),
        };
        if left {
            crate::trace("outcome built, the init still exiting");
            PENDING
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(Left {
                    run: self.run,
                    cgroup,
                });
        }
        Ok(outcome)
    }
}

/// How a process ended, from its raw wait status, in words.
fn describe_exit(status: Option<i32>) -> String {
    match status.map(|raw| WaitStatus::from_raw(Pid::from_raw(1), raw)) {
        Some(Ok(WaitStatus::Exited(_, code))) => format!("it exited with status {code}"),
        Some(Ok(WaitStatus::Signaled(_, signal, _))) => format!("it was killed by {signal}"),
        _ => "its wait status is unknown".into(),
    }
}

/// Whether Python's last words were a `MemoryError` (the RLIMIT_AS fallback's way of failing).
fn ends_with_memory_error(stderr: &[u8]) -> bool {
    let text = String::from_utf8_lossy(stderr);
    text.trim_end()
        .lines()
        .last()
        .is_some_and(|line| line.starts_with("MemoryError"))
}

/// The layers of `plan`, as the result record reports them.
pub fn layers(plan: &Plan) -> Layers {
    Layers {
        namespaces: plan.namespaces.iter().map(|ns| (*ns).to_owned()).collect(),
        landlock: plan.landlock.report(),
        seccomp: plan.seccomp.is_some(),
        cgroup: plan
            .cgroup
            .as_ref()
            .map_or("none", |c| c.version.name())
            .to_owned(),
        rlimits: !plan.rlimits.is_empty(),
        memory: plan.kernel.memory.name().to_owned(),
        memfd_exec: plan.kernel.memfd_exec.to_owned(),
        runtime_hooks: plan.argv.iter().any(|arg| arg == "--hook"),
        exec_ban: plan.argv.iter().any(|arg| arg == "--ban-exec"),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_init_is_described_by_its_wait_status() {
        assert_eq!(describe_exit(Some(9)), "it was killed by SIGKILL");
        assert_eq!(describe_exit(Some(125 << 8)), "it exited with status 125");
        assert_eq!(describe_exit(None), "its wait status is unknown");
    }

    #[test]
    fn a_memory_error_is_recognised_by_pythons_last_line() {
        assert!(ends_with_memory_error(
            b"Traceback (most recent call last):\n  File \"x\", line 1\nMemoryError\n"
        ));
        assert!(!ends_with_memory_error(b"MemoryError\nValueError: x\n"));
    }
}
