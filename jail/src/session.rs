//! A jail that waits for code: the interpreter starts confined exactly as for a run (same
//! namespaces, root, Landlock, seccomp, cgroup, rlimits, runtime layer), but the bootstrap runs
//! warden's session driver instead of a program. The driver reads requests from its standard input
//! (warden's command pipe) and answers each with one line on its standard output.
//!
//! Owns: starting a session's jail, the command pipe (writes bounded by a deadline), the output
//! as it arrives (through the supervisor's tap, on a thread of its own), and ending the session
//! (closing the command pipe, then killing the tree after a grace). Everything that comes out of
//! the jail is untrusted bytes here; the gateway frames and parses them (`gateway/src/session.rs`).
//!
//! Does not own: the protocol's content, the policy, or the cell record.

use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};

use crate::cgroup::SharedCgroup;
use crate::error::JailError;
use crate::outcome::Outcome;
use crate::plan::Plan;
use crate::supervise::{SessionIo, SessionShared, Stream, TapEmpty, TapReceiver};
use crate::{mirror, parent, stage, supervise, template, SEQUENCE};

/// What a session produced, in arrival order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Bytes the interpreter wrote to its standard output (the driver's answers) or standard error
    /// (whatever wrote to the descriptor directly: native code, a cell's `os.write(2, …)`).
    Output(Stream, Vec<u8>),
    /// The jail has ended; [`Session::finish`] says how.
    Ended,
}

/// Interrupts a session's running cell from any thread (`warden repl`'s Ctrl-C): SIGINT to the
/// session's interpreter, the child of the jail's init, which the driver turns into a
/// KeyboardInterrupt in the cell while one runs and ignores between cells.
#[derive(Debug, Clone, Copy)]
pub struct Interrupter {
    init: u32,
}

impl Interrupter {
    /// Sends the interrupt; `false` when the interpreter is gone (nothing to interrupt).
    pub fn interrupt(&self) -> bool {
        // The init's direct children are the interpreter (and, where the policy allows processes,
        // orphans the init adopted: an interrupt is what a terminal would send them too). One
        // read: the kernel renders the list anew at each read, and a short read could miss one.
        let path = format!("/proc/{0}/task/{0}/children", self.init);
        let Ok(text) = std::fs::read_to_string(path) else {
            return false;
        };
        let mut sent = false;
        for pid in text
            .split_whitespace()
            .filter_map(|p| p.parse::<i32>().ok())
        {
            let pid = nix::unistd::Pid::from_raw(pid);
            sent |= nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).is_ok();
        }
        sent
    }
}

/// A live session: a confined interpreter running warden's driver.
pub struct Session {
    commands: Option<OwnedFd>,
    stop: Option<OwnedFd>,
    /// The jail's output, bounded ([`supervise::TAP_BYTES`]); `None` once the supervisor is joined.
    events: Option<TapReceiver>,
    supervisor: Option<JoinHandle<Result<Outcome, JailError>>>,
    ended: bool,
    started: Instant,
    init: u32,
    /// The jail's cgroup (its CPU counter and freezer), when it has one.
    cgroup: Option<SharedCgroup>,
    shared: Arc<SessionShared>,
    frozen: bool,
}

impl Session {
    /// Starts a session's jail from `plan` (built from a config whose bootstrap has `session` set).
    /// With `workdir`, that host directory is copied into `/work` now and `/work` is copied back
    /// into it when the session ends. Must be called from a single-threaded process, as [`crate::run`];
    /// the session then runs its supervisor on a thread of its own.
    pub fn start(plan: &Plan, workdir: Option<&Path>) -> Result<Session, JailError> {
        if !plan.session {
            return Err(JailError::Config(
                "a session needs a plan in session mode (Bootstrap::session)".into(),
            ));
        }
        let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let manifest = workdir.map(mirror::manifest).transpose()?;
        let stage = stage::Stage::prepare(&plan.stage_dir, plan.mode)?;
        let running = parent::spawn(plan, stage.path(), b"", sequence, workdir)?;
        Session::supervised(plan, running, workdir, manifest, Some(stage))
    }

    /// Starts a session's jail by asking the template listening on `channel` to fork one
    /// (`template.rs`): the interpreter is the template's, with what it imported, confined as
    /// [`Session::start`]'s would be. `workdir`: copied into `/work` before the program starts (a
    /// run's input files), and back when the session ends.
    pub fn fork(plan: &Plan, workdir: Option<&Path>, channel: &Path) -> Result<Session, JailError> {
        if !plan.session {
            return Err(JailError::Config(
                "a session needs a plan in session mode (Bootstrap::session)".into(),
            ));
        }
        let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        let manifest = workdir.map(mirror::manifest).transpose()?;
        let running = template::spawn(plan, channel, sequence, workdir)?;
        Session::supervised(plan, running, workdir, manifest, None)
    }

    /// The session around a jail that runs: its command pipe, and its supervisor on a thread.
    fn supervised(
        plan: &Plan,
        mut running: parent::Running,
        workdir: Option<&Path>,
        manifest: Option<mirror::Manifest>,
        stage: Option<stage::Stage>,
    ) -> Result<Session, JailError> {
        let init = running.init.as_raw() as u32;
        let commands = running
            .stdin
            .take()
            .ok_or_else(|| JailError::Config("the session's command pipe is missing".into()))?;
        nix::fcntl::fcntl(&commands, nix::fcntl::FcntlArg::F_SETFL(OFlag::O_NONBLOCK))
            .map_err(|errno| JailError::syscall("fcntl", "O_NONBLOCK", errno))?;
        let (stop_read, stop_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)
            .map_err(|errno| JailError::syscall("pipe2", "O_CLOEXEC", errno))?;
        let (tap, events) = supervise::tap(supervise::TAP_BYTES);
        let cgroup = running.cgroup.as_ref().map(crate::cgroup::Cgroup::share);
        let shared = Arc::new(SessionShared::new());
        let supervisor_shared = shared.clone();
        let plan = plan.clone();
        let workdir: Option<PathBuf> = workdir.map(Path::to_path_buf);
        let supervisor = std::thread::Builder::new()
            .name("warden-session".into())
            .spawn(move || {
                let io = SessionIo {
                    tap,
                    stop: stop_read,
                    shared: supervisor_shared,
                };
                let watched = workdir.as_deref().zip(manifest);
                let outcome = supervise::supervise(&plan, running, None, watched, Some(io));
                // The stage dir goes once the jail is gone.
                drop(stage);
                outcome
            })
            .map_err(|err| {
                JailError::Config(format!("cannot start the session's supervisor: {err}"))
            })?;
        Ok(Session {
            commands: Some(commands),
            stop: Some(stop_write),
            events: Some(events),
            supervisor: Some(supervisor),
            ended: false,
            started: Instant::now(),
            init,
            cgroup,
            shared,
            frozen: false,
        })
    }

    /// When the session started.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The jail's init, as a pid of warden's pid namespace.
    pub fn init_pid(&self) -> u32 {
        self.init
    }

    /// The command channel's descriptor (a template's: fork requests go through it natively).
    pub fn commands(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.commands.as_ref().map(AsFd::as_fd)
    }

    /// The jail's CPU time so far (its cgroup's counter, every process of the tree), in µs; `None`
    /// without a cgroup.
    pub fn cpu_us(&self) -> Option<u64> {
        self.cgroup.as_ref().and_then(SharedCgroup::cpu_us)
    }

    /// Limits the jail's CPU time from now on to `ms` more (every process of the tree, through its
    /// cgroup's counter: the supervisor kills the tree past it, as a cold run's). `false` without
    /// a cgroup (then only the plan's per-process RLIMIT_CPU holds).
    pub fn limit_cpu_from_now(&self, ms: u64) -> bool {
        let Some(now) = self.cpu_us() else {
            return false;
        };
        let budget = now.saturating_add(ms.saturating_mul(1000));
        self.shared.cpu_budget_us.store(budget, Ordering::Relaxed);
        true
    }

    /// Freezes every process of the jail (`true`: none runs until thawed) or thaws them, through
    /// the cgroup freezer. `false`: not done (no cgroup with a freezer, or the tree is being
    /// killed); thawing always succeeds when there is nothing to thaw.
    pub fn freeze(&mut self, frozen: bool) -> bool {
        if frozen == self.frozen {
            return true;
        }
        let Some(cgroup) = &self.cgroup else {
            return !frozen;
        };
        let killing = self
            .shared
            .killing
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if frozen && *killing {
            return false;
        }
        let done = cgroup.freeze(frozen);
        if done || !frozen {
            self.frozen = frozen && done;
        }
        done
    }

    /// Whether the jail is frozen ([`Session::freeze`]).
    pub fn frozen(&self) -> bool {
        self.frozen
    }

    /// Whether the jail has ended.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Writes `bytes` to the driver's standard input, all of them before `deadline`. `Err`: the
    /// driver is gone (EPIPE) or did not read in time (ETIMEDOUT).
    pub fn send(&mut self, bytes: &[u8], deadline: Instant) -> Result<(), Errno> {
        // A frozen jail is thawed for anything it is sent.
        self.freeze(false);
        let Some(commands) = &self.commands else {
            return Err(Errno::EPIPE);
        };
        let mut rest = bytes;
        while !rest.is_empty() {
            match nix::unistd::write(commands, rest) {
                Ok(n) => rest = &rest[n..],
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(Errno::ETIMEDOUT);
                    }
                    let mut fds = [PollFd::new(commands.as_fd(), PollFlags::POLLOUT)];
                    let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
                    match poll(&mut fds, timeout) {
                        Ok(_) | Err(Errno::EINTR) => {}
                        Err(errno) => return Err(errno),
                    }
                }
                Err(errno) => return Err(errno),
            }
        }
        Ok(())
    }

    /// The next event, waiting at most `timeout`; `None` when nothing came in that time.
    pub fn next_event(&mut self, timeout: Duration) -> Option<Event> {
        if self.ended {
            return Some(Event::Ended);
        }
        let Some(events) = &self.events else {
            self.ended = true;
            return Some(Event::Ended);
        };
        match events.recv_timeout(timeout) {
            Ok((stream, bytes)) => Some(Event::Output(stream, bytes)),
            Err(TapEmpty::Timeout) => None,
            Err(TapEmpty::Ended) => {
                self.ended = true;
                Some(Event::Ended)
            }
        }
    }

    /// A handle that interrupts the running cell from another thread.
    pub fn interrupter(&self) -> Interrupter {
        Interrupter { init: self.init }
    }

    /// Ends the session now: the supervisor kills the tree (the work dir is still copied back).
    pub fn kill(&mut self) {
        self.freeze(false);
        if let Some(stop) = self.stop.take() {
            let _ = nix::unistd::write(&stop, b"x");
        }
    }

    /// Ends the session: closes the command pipe (the driver exits at end of input), waits up to
    /// `grace` for the jail to end, kills it otherwise, and returns how it ended (usage for the
    /// whole session; its output went to the events, not into the outcome).
    pub fn finish(mut self, grace: Duration) -> Result<Outcome, JailError> {
        // A frozen driver could not see the end of its input.
        self.freeze(false);
        self.commands = None;
        let deadline = Instant::now() + grace;
        while !self.ended {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.kill();
                break;
            }
            let _ = self.next_event(left);
        }
        self.join()
    }

    /// Bytes of output the jail wrote that nobody took yet (at most [`supervise::TAP_BYTES`] plus
    /// one read).
    pub fn queued_bytes(&self) -> usize {
        self.events.as_ref().map_or(0, TapReceiver::queued_bytes)
    }

    /// From now on the jail's output is dropped as it arrives, never queued and never holding its
    /// writers (a pool's template, whose output nobody reads while it forks runs).
    pub fn discard_output(&self) {
        if let Some(events) = &self.events {
            events.discard();
        }
    }

    fn join(&mut self) -> Result<Outcome, JailError> {
        // Output nobody will take is dropped from now on, so the supervisor can drain the jail.
        self.events = None;
        match self.supervisor.take().map(JoinHandle::join) {
            Some(Ok(outcome)) => outcome,
            Some(Err(_)) => Err(JailError::Config(
                "the session's supervisor panicked".into(),
            )),
            None => Err(JailError::Config("the session was already finished".into())),
        }
    }
}

impl Drop for Session {
    /// A session dropped without `finish` is killed and waited for: nothing is left behind.
    fn drop(&mut self) {
        if self.supervisor.is_some() {
            self.commands = None;
            self.kill();
            let _ = self.join();
        }
    }
}
