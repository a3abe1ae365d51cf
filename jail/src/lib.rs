//! warden's jail: runs one Python program confined by Linux namespaces, a pivot_root'd minimal root,
//! Landlock, seccomp, cgroups and rlimits, and reports how it ended.
//!
//! Data flows one way: [`Config`] (validated settings) → [`Plan`] (pure data: what is mounted,
//! granted, filtered and limited) → [`run`] (spawn, confine, supervise) → [`Outcome`].
//!
//! ```no_run
//! let plan = warden_jail::Plan::new(&warden_jail::Config::default())?;
//! let outcome = warden_jail::run(&plan, "print('hello')\n", None)?;
//! assert_eq!(outcome.status, warden_jail::Status::Ok);
//! # Ok::<(), warden_jail::JailError>(())
//! ```
//!
//! One file per layer: `userns.rs` (id maps), `mounts.rs`, `landlock.rs`, `seccomp.rs`, `cgroup.rs`,
//! `rlimits.rs`, `caps.rs`; the work dir's copy-in and copy-back is `mirror.rs`, the stage dir the
//! root is built on `stage.rs`, the interpreter's resolution `interpreter.rs`. The ordered confinement sequence is in `child.rs`, the parent's side
//! in `parent.rs` and `supervise.rs`, the messages between them in `message.rs`; every `unsafe`
//! block, and every raw call `nix` does not wrap, is in `sys.rs`. A failed call is a [`SysError`]
//! wherever it happens; a run that could not be set up is a [`JailError`].
//!
//! Which layers a host can enforce, and why not, is [`Host::layer`] (what a plan fails closed with,
//! and what `warden doctor` reports).
//!
//! [`run`] must be called from a single-threaded process (it clones with fork semantics); a
//! multi-threaded server should run `warden run` as a subprocess.

mod budgets;
mod caps;
mod cgroup;
mod child;
mod config;
mod error;
mod interpreter;
mod landlock;
mod message;
mod mirror;
mod mounts;
mod netns;
mod outcome;
mod parent;
mod plan;
mod rlimits;
mod seccomp;
mod session;
mod stage;
mod supervise;
mod sys;
pub mod template;
mod userns;

use std::os::fd::AsFd;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use nix::sys::signal::{SigSet, SigmaskHow, Signal};
use nix::sys::signalfd::{SfdFlags, SignalFd};

pub use budgets::{KernelHost, KernelPlan, Memory, INOTIFY_INSTANCES, INOTIFY_WATCHES, SIGNALS};
pub use cgroup::{CgroupHost, Version as CgroupVersion};
pub use config::{
    Bootstrap, Config, Input, Intents, Layer, Limits, MemoryEnforcement, BOOTSTRAP_PATH,
    HOOK_SETTINGS_PATH, NATIVE_MODULE_PATH, PROGRAM_PATH, WORKDIR,
};
pub use error::{JailError, SysError};
pub use interpreter::{resolve as resolve_interpreter, Interpreter};
pub use landlock::LandlockPlan;
pub use message::Stage;
pub use mirror::{CopyBack, Refusal, RefusedFile, COPY_BACK_TIME};
pub use outcome::{Layers, LimitHit, Outcome, Status, Usage};
pub use plan::{Availability, Host, Plan, BOOTSTRAP, NAMESPACES};
pub use seccomp::SeccompPlan;
pub use session::{Event, Interrupter, Session};
pub use supervise::{defer_teardown, finish_teardown, Stream, TAP_BYTES};
pub use sys::thread_count;
pub use userns::Mode;

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

/// Prints a timestamped phase marker to warden's stderr when `WARDEN_TRACE` is set (benchmarking).
#[doc(hidden)]
pub fn trace(phase: &str) {
    use std::io::Write;
    struct Trace {
        start: std::time::Instant,
        out: std::fs::File,
    }
    static TRACE: std::sync::OnceLock<Option<Trace>> = std::sync::OnceLock::new();
    let trace = TRACE.get_or_init(|| {
        std::env::var_os("WARDEN_TRACE")?;
        let out = std::io::stderr().as_fd().try_clone_to_owned().ok()?;
        Some(Trace {
            start: std::time::Instant::now(),
            out: std::fs::File::from(out),
        })
    });
    if let Some(trace) = trace {
        let line = format!(
            "warden-trace {:>8.3} ms {phase}\n",
            trace.start.elapsed().as_secs_f64() * 1000.0
        );
        let _ = (&trace.out).write_all(line.as_bytes());
    }
}

/// Runs `program` (Python source, already decoded) in a new jail built from `plan`.
///
/// The program's `/work` is a private, size-capped tmpfs. With `workdir`, that host directory's tree
/// is copied in before the program starts, and every regular file the program created or changed is
/// copied back into it afterwards (symlinks and special files never cross, in either direction).
///
/// `Err` means the jail could not be set up and nothing of the program ran (the result record's
/// `setup_failed`) — except [`JailError::InitLost`]: the jail's init ended without reporting how the
/// program ended, so whether it ran is unknown. Every way the program itself can end is an
/// [`Outcome`]. SIGINT, SIGTERM and SIGHUP are held during the run: one of them kills the jail,
/// cleans up and returns [`JailError::Interrupted`].
pub fn run(plan: &Plan, program: &str, workdir: Option<&Path>) -> Result<Outcome, JailError> {
    trace("run");
    let program = program.strip_prefix('\u{feff}').unwrap_or(program);
    let sequence = SEQUENCE.fetch_add(1, Ordering::Relaxed);
    let manifest = workdir
        .map(|dir| mirror::manifest(dir).map(|m| (dir, m)))
        .transpose()?;
    // Checked (or made fresh) before each run; a fresh one is removed when `stage` is dropped, after
    // the jail is gone.
    let stage = stage::Stage::prepare(&plan.stage_dir, plan.mode)?;
    let signals = SignalGuard::block()?;
    trace("stage dir, signals");
    let running = parent::spawn(plan, stage.path(), program.as_bytes(), sequence, workdir)?;
    let outcome = supervise::supervise(plan, running, signals.fd.as_ref(), manifest, None)?;
    trace("done");
    match bootstrap_failure(&outcome) {
        Some(line) => Err(JailError::Bootstrap(line)),
        None => Ok(outcome),
    }
}

/// The bootstrap's failure line, when the run ended because the runtime layer or the exec ban could
/// not be installed (exit status 125 and a last line of standard error starting `warden-bootstrap: `).
fn bootstrap_failure(outcome: &Outcome) -> Option<String> {
    if outcome.exit_code != Some(plan::BOOTSTRAP_FAILED_STATUS) {
        return None;
    }
    let stderr = String::from_utf8_lossy(&outcome.stderr);
    let last = stderr.trim_end().lines().last()?;
    last.starts_with(plan::BOOTSTRAP_FAILED_PREFIX)
        .then(|| last.to_owned())
}

/// The layers `plan` puts in force, as the result record reports them.
pub fn layers(plan: &Plan) -> Layers {
    supervise::layers(plan)
}

/// Blocks the terminating signals for the length of a run and restores the mask afterwards.
struct SignalGuard {
    previous: SigSet,
    fd: Option<SignalFd>,
}

impl SignalGuard {
    fn block() -> Result<Self, JailError> {
        let mut set = SigSet::empty();
        for signal in [Signal::SIGINT, Signal::SIGTERM, Signal::SIGHUP] {
            set.add(signal);
        }
        let mut previous = SigSet::empty();
        nix::sys::signal::sigprocmask(SigmaskHow::SIG_BLOCK, Some(&set), Some(&mut previous))
            .map_err(|errno| JailError::syscall("sigprocmask", "SIG_BLOCK", errno))?;
        let fd = SignalFd::with_flags(&set, SfdFlags::SFD_CLOEXEC | SfdFlags::SFD_NONBLOCK).ok();
        Ok(SignalGuard { previous, fd })
    }
}

impl Drop for SignalGuard {
    fn drop(&mut self) {
        self.fd = None;
        let _ = nix::sys::signal::sigprocmask(SigmaskHow::SIG_SETMASK, Some(&self.previous), None);
    }
}
