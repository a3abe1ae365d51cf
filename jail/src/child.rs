//! The jail side: the confinement sequence, in order, in one place.
//!
//! Owns: what the jail's init (pid 1 of the new namespaces) and the program's process do between
//! `clone3` and `execve`, each step with the reason it sits where it does. Everything here was
//! prepared by the parent before cloning ([`Prepared`]); a failing step is reported to warden as a
//! [`StageError`] (its stage and the failed call) and the process exits. Nothing here panics: a
//! panic is caught at the entry points and turned into an exit code (125), which warden sees as the
//! program's exit code, or as an init that ended without reporting (`JailError::InitLost`).
//!
//! Does not own: what each layer contains (`mounts.rs`, `landlock.rs`, `seccomp.rs`, `rlimits.rs`,
//! `caps.rs`) or the parent's side of the handshake (`parent.rs`).

use std::convert::Infallible;
use std::ffi::CString;
use std::fmt::Display;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::panic::AssertUnwindSafe;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::signal::{kill, Signal};
use nix::sys::stat::Mode as FileMode;
use nix::unistd::{Gid, Pid, Uid};
use seccompiler::BpfProgram;

use crate::budgets;
use crate::caps;
use crate::error::SysError;
use crate::landlock::{self, LandlockPlan};
use crate::message::{self, Stage, StageError, ToChild, ToParent};
use crate::mounts::Op;
use crate::rlimits::{self, Rlimit};
use crate::seccomp;
use crate::sys::{self, Forked};

/// Everything the jail side needs, built by the parent before cloning.
pub struct Prepared {
    pub hostname: &'static str,
    pub mounts: Vec<Op>,
    pub exec_path: CString,
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    pub rlimits: Vec<Rlimit>,
    pub last_cap: u32,
    pub clear_groups: bool,
    pub run_as: u32,
    pub landlock: LandlockPlan,
    pub seccomp: Option<Vec<BpfProgram>>,
    /// cgroup v1: the `tasks` file of the run's cgroup in each hierarchy, opened by warden.
    pub cgroup_tasks: Vec<OwnedFd>,
    /// Root mode: the namespace was created with another euid (its owner, `userns.rs`); the init
    /// takes uid 0 inside (host root) before anything else.
    pub become_root: bool,
    /// Put the program in a time namespace whose clocks start at the run.
    pub time_namespace: bool,
    /// The jail's own kernel limits, written before the root is built (`budgets.rs`).
    pub sysctls: Vec<budgets::Prepared>,
    /// warden's argument and environment strings (which the init shares until it overwrites them).
    pub arg_env: Option<[(usize, usize); 2]>,
    /// Template mode: the interpreter keeps the init's privileges (`template.rs`).
    pub template: bool,
    /// Stay alive after the program ended until warden says `Finish` (it reads the work dir through
    /// our root); otherwise exit right away.
    pub linger: bool,
}

/// The program's ends of warden's pipes (numbered 10 or above, close-on-exec).
pub struct Pipes {
    /// Session mode: the read end of warden's command pipe; otherwise stdin is `/dev/null`.
    pub stdin: Option<OwnedFd>,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
}

/// Entry point of the jail's init, right after `clone3`; `control` is its end of the message
/// socket. Never returns.
pub fn init_main(prepared: &Prepared, control: OwnedFd, pipes: Pipes) -> ! {
    let run = || match init(prepared, &control, pipes) {
        Ok(code) => code,
        Err(err) => {
            let _ = message::send_to_parent(control.as_fd(), &ToParent::StageFailed(err));
            126
        }
    };
    let code = std::panic::catch_unwind(AssertUnwindSafe(run)).unwrap_or(125);
    sys::exit_now(code)
}

/// For `map_err` on a call made here: `call(arg)` failed in `stage`.
pub(crate) fn at(
    stage: Stage,
    call: &'static str,
    arg: impl Display,
) -> impl FnOnce(Errno) -> StageError {
    move |errno| StageError {
        stage,
        error: SysError::new(call, arg, errno),
    }
}

/// For `map_err` on a layer's step, which names its failed call itself.
pub(crate) fn in_stage(stage: Stage) -> impl FnOnce(SysError) -> StageError {
    move |error| StageError { stage, error }
}

/// The jail's init: builds the root, starts the program, reaps, reports.
fn init(p: &Prepared, control_fd: &OwnedFd, pipes: Pipes) -> Result<i32, StageError> {
    let control = control_fd.as_fd();
    // 1. Die with warden: if warden is killed, the kernel sends us SIGKILL, and since we are pid 1 of
    //    the namespace, every process in it dies with us. First, before anything can go wrong.
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(at(
        Stage::Init,
        "prctl(PR_SET_PDEATHSIG)",
        "",
    ))?;
    // 2. Wait until warden has written our uid/gid maps: until then we have no valid ids and cannot
    //    create files. End of file means warden died before the pdeathsig was armed.
    match message::recv_from_parent(control).map_err(at(Stage::Init, "recv", "control socket"))? {
        Some(ToChild::Go) => {}
        Some(ToChild::Finish) | None => return Ok(0),
    }
    // 2b. Root mode: warden created our user namespace as the run's owner uid, so that is our euid;
    //     take uid 0 inside (host root, which the map keeps for us) before creating anything. An
    //     euid change clears the parent-death signal: arm it again, then make sure warden did not
    //     die in between (its end of the control socket would be closed).
    if p.become_root {
        let root = (Gid::from_raw(0), Uid::from_raw(0));
        nix::unistd::setresgid(root.0, root.0, root.0).map_err(at(Stage::Ids, "setresgid", 0))?;
        nix::unistd::setresuid(root.1, root.1, root.1).map_err(at(Stage::Ids, "setresuid", 0))?;
        nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(at(
            Stage::Init,
            "prctl(PR_SET_PDEATHSIG)",
            "",
        ))?;
        if warden_gone(control) {
            return Ok(0);
        }
    }
    // 3. Join the run's cgroup (v1) before anything else is created, so every later process is born
    //    in it. We move ourselves by writing 0 to `tasks`: a single thread moving itself needs no
    //    global lock, whereas warden moving us through cgroup.procs waits for an RCU grace period
    //    (~10 ms). The files were opened by warden, whose credentials the kernel checks. (On v2 we
    //    were cloned straight into the cgroup.)
    for tasks in &p.cgroup_tasks {
        nix::unistd::write(tasks, b"0").map_err(at(Stage::Cgroup, "write", "tasks"))?;
    }
    crate::trace("init: in cgroup");
    // 3b. A cgroup namespace rooted at the run's cgroup, so /proc/self/cgroup shows `/` rather than
    //     the host's layout and warden's pid (v1: the clone's namespace was rooted where warden was;
    //     v2 with CLONE_INTO_CGROUP and no cgroup at all need nothing).
    if !p.cgroup_tasks.is_empty() {
        sys::unshare(libc::CLONE_NEWCGROUP).map_err(at(
            Stage::Namespaces,
            "unshare",
            "CLONE_NEWCGROUP",
        ))?;
    }
    // 3c. A time namespace for our children whose monotonic and boot clocks start now: the program's
    //     uptime (sysinfo, CLOCK_BOOTTIME) is the run's, not the host's. Offsets can only be set
    //     before a process enters it, so we stay outside and the program is born in it.
    if p.time_namespace {
        sys::unshare(libc::CLONE_NEWTIME).map_err(at(
            Stage::Namespaces,
            "unshare",
            "CLONE_NEWTIME",
        ))?;
        let offset = |clock| sys::clock_seconds(clock).map(|now| 1 - now);
        let monotonic = offset(libc::CLOCK_MONOTONIC).map_err(at(
            Stage::Namespaces,
            "clock_gettime",
            "CLOCK_MONOTONIC",
        ))?;
        let boottime = offset(libc::CLOCK_BOOTTIME).map_err(at(
            Stage::Namespaces,
            "clock_gettime",
            "CLOCK_BOOTTIME",
        ))?;
        let offsets = format!("monotonic {monotonic} 0\nboottime {boottime} 0\n");
        let path = c"/proc/self/timens_offsets";
        let fd = nix::fcntl::open(path, OFlag::O_WRONLY | OFlag::O_CLOEXEC, FileMode::empty())
            .map_err(at(Stage::Namespaces, "open", "/proc/self/timens_offsets"))?;
        nix::unistd::write(&fd, offsets.as_bytes()).map_err(at(
            Stage::Namespaces,
            "write",
            "/proc/self/timens_offsets",
        ))?;
    }
    // 3d. The jail's own kernel budgets (inotify, namespaces, IPC, memfd exec), through the host's
    //     /proc while it is still there: each value is that of the writer's namespaces. After the
    //     unshares above, which these limits would refuse.
    for sysctl in &p.sysctls {
        budgets::write(sysctl).map_err(in_stage(Stage::Sysctls))?;
    }
    crate::trace("init: own namespaces and sysctls");
    // 3e. Our command line is warden's, with its host paths (rules file, program, job dir) and its
    //     environment: the program must not read them from /proc/1 (it cannot see pid 1 anyway where
    //     proc hides other users' processes). We never read them again.
    if let Some(areas) = p.arg_env {
        // SAFETY: `areas` were read by warden before cloning, in the address space ours is a copy
        // of; the init never reads its argv or environment.
        unsafe { sys::overwrite_arg_env(areas, INIT_NAME.to_bytes()) };
    }
    let _ = nix::sys::prctl::set_name(INIT_NAME);
    // 4. Our own hostname (the UTS namespace is ours): the host's name is not the program's business.
    nix::unistd::sethostname(p.hostname).map_err(at(Stage::Hostname, "sethostname", p.hostname))?;
    // 5. The file system: private propagation, tmpfs root, binds, /dev, /proc, the program text,
    //    pivot_root, read-only root. Here, before the program exists, while we hold CAP_SYS_ADMIN in
    //    the namespace, and as pid 1 so that the new /proc belongs to our pid namespace.
    for op in &p.mounts {
        op.run().map_err(in_stage(Stage::Mounts))?;
    }
    crate::trace("init: mounts done");
    // 6. Our own stdio no longer points at warden's terminal or pipes.
    let null = open_null().map_err(at(Stage::Stdio, "open", "/dev/null"))?;
    for fd in 0..3 {
        sys::dup_onto(null.as_fd(), fd).map_err(at(Stage::Stdio, "dup2", fd))?;
    }
    drop(null);
    // 7. The program runs in a child: pid 1 must stay to reap orphans, and when pid 1 exits the kernel
    //    kills the whole namespace — the tree kill does not depend on the program's cooperation.
    let program = match sys::fork_single_threaded().map_err(at(Stage::Fork, "fork", ""))? {
        Forked::Child => program_main(p, control_fd, pipes),
        Forked::Parent { pid, .. } => pid,
    };
    // 8. Close our copies of the program's pipes, so warden sees end-of-file when the program is done.
    drop(pipes);
    // 9. Reap until the program ends, then kill whatever it left behind and reap that too.
    let status = reap(program);
    let _ = message::send_to_parent(control, &ToParent::Exited { status });
    // 10. Exit, which tears the namespaces down — after warden is done with the jail when it copies
    //     the work dir back through our root.
    if p.linger {
        let _ = message::recv_from_parent(control);
    }
    Ok(0)
}

/// The init's name in `/proc/<pid>/comm` and `cmdline`.
const INIT_NAME: &std::ffi::CStr = c"warden-init";

/// Whether warden closed its end of the control socket (it died).
fn warden_gone(control: BorrowedFd<'_>) -> bool {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds = [PollFd::new(control, PollFlags::POLLIN)];
    match poll(&mut fds, PollTimeout::ZERO) {
        Ok(0) => false,
        Ok(_) => fds[0]
            .revents()
            .is_some_and(|events| events.intersects(PollFlags::POLLHUP | PollFlags::POLLERR)),
        Err(_) => true,
    }
}

fn open_null() -> Result<OwnedFd, Errno> {
    nix::fcntl::open(c"/dev/null", OFlag::O_RDWR, FileMode::empty())
}

/// Waits for the program; kills the rest of the namespace when it ends; returns its wait status.
pub(crate) fn reap(program: Pid) -> i32 {
    let mut status = None;
    loop {
        match sys::wait4(Pid::from_raw(-1), false) {
            Ok(Some((pid, raw, _))) if pid == program => {
                status = Some(raw);
                // Double-forked daemons and stray children do not outlive the program.
                let _ = kill(Pid::from_raw(-1), Signal::SIGKILL);
            }
            Ok(_) => {}
            Err(Errno::ECHILD) => break,
            Err(_) => break,
        }
    }
    status.unwrap_or(0)
}

/// Entry point of the program's process, right after the fork. Never returns.
fn program_main(p: &Prepared, control: &OwnedFd, pipes: Pipes) -> ! {
    let run = || match confine_and_exec(p, pipes) {
        Ok(never) => match never {},
        Err(err) => {
            let _ = message::send_to_parent(control.as_fd(), &ToParent::StageFailed(err));
            127
        }
    };
    let code = std::panic::catch_unwind(AssertUnwindSafe(run)).unwrap_or(125);
    sys::exit_now(code)
}

/// The program's confinement, in order. Ends in `execve` or an error.
fn confine_and_exec(p: &Prepared, side: Pipes) -> Result<Infallible, StageError> {
    let confinement = Confinement {
        rlimits: &p.rlimits,
        last_cap: p.last_cap,
        clear_groups: p.clear_groups,
        run_as: p.run_as,
        landlock: &p.landlock,
        seccomp: p.seccomp.as_deref(),
        reset_dispositions: true,
        keep: None,
        template: p.template,
    };
    confine(&confinement, side)?;
    crate::trace("program: exec");
    // 13. The interpreter, with the absolute path it was configured as in argv[0].
    let Err(errno) = nix::unistd::execve(&p.exec_path, &p.argv, &p.envp);
    Err(StageError {
        stage: Stage::Exec,
        error: SysError::new("execve", p.exec_path.to_string_lossy(), errno),
    })
}

/// The program process's confinement, shared by a cold jail (before `execve`) and a forked run
/// (`template.rs`, before it returns into the interpreter).
pub(crate) struct Confinement<'a> {
    pub rlimits: &'a [Rlimit],
    pub last_cap: u32,
    pub clear_groups: bool,
    pub run_as: u32,
    pub landlock: &'a LandlockPlan,
    pub seccomp: Option<&'a [BpfProgram]>,
    /// Reset every signal disposition (a process about to exec from warden's) or only empty the
    /// mask (an interpreter that keeps its own handlers).
    pub reset_dispositions: bool,
    /// `None`: mark every descriptor above 2 close-on-exec. `Some(fd)`: close every one but `fd`.
    pub keep: Option<std::os::fd::RawFd>,
    /// A warm pool's template (`template.rs`): it keeps the init's ids and capabilities, for
    /// creating each run's namespaces, and gets none of the program's limits or filters — every
    /// run forked from it takes them before it returns into the interpreter. It runs no untrusted
    /// code.
    pub template: bool,
}

/// The confinement steps, in order: session, streams, signals, rlimits, capabilities, ids,
/// no_new_privs, descriptors, work dir, Landlock, seccomp.
pub(crate) fn confine(c: &Confinement<'_>, side: Pipes) -> Result<(), StageError> {
    // 1. A session of its own: no controlling terminal, so nothing can push keystrokes into one
    //    (TIOCSTI) or receive its signals.
    nix::unistd::setsid().map_err(at(Stage::Session, "setsid", ""))?;
    // 2. Standard streams: stdin from the jail's /dev/null (a session's: warden's command pipe),
    //    stdout/stderr into warden's capture pipes. Our channel descriptors are numbered 10 and above,
    //    so these duplications cannot overwrite them.
    match &side.stdin {
        Some(commands) => {
            sys::dup_onto(commands.as_fd(), 0).map_err(at(Stage::Stdio, "dup2", "stdin"))?
        }
        None => {
            let null = open_null().map_err(at(Stage::Stdio, "open", "/dev/null"))?;
            sys::dup_onto(null.as_fd(), 0).map_err(at(Stage::Stdio, "dup2", "stdin"))?;
        }
    }
    sys::dup_onto(side.stdout.as_fd(), 1).map_err(at(Stage::Stdio, "dup2", "stdout"))?;
    sys::dup_onto(side.stderr.as_fd(), 2).map_err(at(Stage::Stdio, "dup2", "stderr"))?;
    // 3. Default signal dispositions and an empty mask: warden ignores SIGPIPE and blocks SIGINT/TERM,
    //    and both would otherwise be inherited across execve.
    if c.reset_dispositions {
        sys::reset_signals().map_err(at(Stage::Signals, "sigprocmask", ""))?;
    } else {
        sys::unblock_signals().map_err(at(Stage::Signals, "sigprocmask", ""))?;
    }
    if c.template {
        return confine_template(c);
    }
    // 4. rlimits, while nothing has been dropped yet (lowering needs no privilege, but the fallback
    //    NPROC must be in place before the uid changes so it counts the program's processes).
    rlimits::apply(c.rlimits).map_err(in_stage(Stage::Rlimits))?;
    // 5. Empty the capability bounding and ambient sets now: it takes CAP_SETPCAP, which the uid change
    //    below takes away.
    caps::drop_bounding_and_ambient(c.last_cap).map_err(in_stage(Stage::Capabilities))?;
    // 6. The program's ids: no supplementary groups (when setgroups is not denied), then gid before
    //    uid (after setuid we could no longer change the gid).
    let id = c.run_as;
    if c.clear_groups {
        nix::unistd::setgroups(&[]).map_err(at(Stage::Ids, "setgroups", "[]"))?;
    }
    nix::unistd::setresgid(Gid::from_raw(id), Gid::from_raw(id), Gid::from_raw(id)).map_err(at(
        Stage::Ids,
        "setresgid",
        id,
    ))?;
    nix::unistd::setresuid(Uid::from_raw(id), Uid::from_raw(id), Uid::from_raw(id)).map_err(at(
        Stage::Ids,
        "setresuid",
        id,
    ))?;
    // 7. Clear every remaining capability explicitly: an unprivileged spawn keeps the same uid, so the
    //    kernel would not clear them on the change above.
    caps::clear().map_err(in_stage(Stage::Capabilities))?;
    // 8. no_new_privs: execve can never grant privileges again (setuid binaries, file caps); it is also
    //    what lets an unprivileged process install Landlock and seccomp.
    nix::sys::prctl::set_no_new_privs().map_err(at(
        Stage::NoNewPrivs,
        "prctl(PR_SET_NO_NEW_PRIVS)",
        "",
    ))?;
    // 9. No inherited descriptors: everything above 2 closes on execve. Our control socket stays usable
    //    until then for reporting a failure.
    //    A forked program never execs: everything but its streams (and `keep`, closed by the
    //    caller last) is closed now instead. Our pipe ends are on 0-2 now.
    drop(side);
    no_inherited_descriptors(c.keep)?;
    // 10. Start in the work dir.
    nix::unistd::chdir(c"/work").map_err(at(Stage::Workdir, "chdir", "/work"))?;
    // 11. Landlock, now that the mounts are final (a Landlock-restricted process can no longer change
    //     them) and before seccomp (which does not admit the Landlock calls).
    landlock::apply(c.landlock).map_err(in_stage(Stage::Landlock))?;
    // 12. seccomp last: from here on the only call we make is execve.
    if let Some(filters) = c.seccomp {
        seccomp::apply(filters).map_err(in_stage(Stage::Seccomp))?;
    }
    Ok(())
}

/// A template's remaining steps: no inherited descriptors, the work dir — and nothing of the
/// program's limits, ids or filters, which each run forked from it takes itself (`template.rs`).
fn confine_template(c: &Confinement<'_>) -> Result<(), StageError> {
    no_inherited_descriptors(c.keep)?;
    nix::unistd::chdir(c"/work").map_err(at(Stage::Workdir, "chdir", "/work"))
}

/// Marks every descriptor above 2 close-on-exec (`keep: None`), or closes every one but `keep`.
fn no_inherited_descriptors(keep: Option<std::os::fd::RawFd>) -> Result<(), StageError> {
    match keep {
        None => sys::cloexec_from(3).map_err(at(
            Stage::Stdio,
            "close_range(CLOSE_RANGE_CLOEXEC)",
            "3..",
        )),
        Some(keep) => sys::close_all_from(3, keep).map_err(at(Stage::Stdio, "close_range", "3..")),
    }
}
