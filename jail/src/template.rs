//! Runs forked from a template: a jail whose interpreter imported the data stack once, and which
//! creates each run's jail by forking itself, so that a run pays neither the interpreter's start
//! nor its imports.
//!
//! Three parties:
//!
//! - **the template** ([`serve`], called by the interpreter of a jail started in template mode,
//!   after its preload): a process that never runs untrusted code. It keeps what a jail's init has
//!   (capabilities in the jail's user namespace) and none of a program's confinement (no Landlock,
//!   no seccomp filter), because each fork needs to create namespaces and mounts. It reads fork
//!   requests from its channel (its standard input, a socket), checks that it is single-threaded,
//!   and `clone3`s a child into new mount, pid, network, IPC and UTS namespaces; the child's pidfd
//!   goes back with the answer.
//! - **the child** (pid 1 of the new pid namespace, the run's init): joins the run's cgroup (the
//!   descriptors came with the request, opened by warden) and a cgroup namespace rooted there, takes
//!   its hostname, mounts a fresh `/work`, `/tmp` and `/proc`, waits for warden's go, then forks the
//!   program's process, reaps and reports exactly as a cold jail's init does (`child.rs`).
//! - **the program's process**: confined in the order a cold run's is (`child::confine`: session,
//!   standard streams, rlimits, capabilities, ids, no_new_privs, Landlock, seccomp), every
//!   descriptor but its three streams closed — and then it *returns* into the interpreter, which
//!   reseeds what a fork copied and waits for its program on standard input.
//!
//! The requests come from warden ([`spawn`], parent side, in a run's worker): the per-run parts of
//! its [`Plan`] ([`ChildSpec`]) with the descriptors of the run (control socket, standard streams,
//! cgroup files). Everything that comes back (the pidfd, the answer) is checked; nothing the
//! program does can reach the template (it runs in namespaces below the template's, as another
//! uid, with its own cgroup).
//!
//! Does not own: starting the template's jail (an ordinary session jail in template mode,
//! `parent.rs`/`child.rs`), what the interpreter does around the fork (`bootstrap.py`, the native
//! module's `template_serve`), or the pool (`service`).

use std::io::{IoSlice, IoSliceMut};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::time::Duration;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::signal::Signal;
use nix::sys::socket::{
    connect, recvmsg, sendmsg, setsockopt, socket, socketpair, sockopt, AddressFamily,
    ControlMessage, ControlMessageOwned, MsgFlags, SockFlag, SockType, UnixAddr,
};
use nix::sys::stat::Mode as FileMode;
use nix::sys::time::TimeVal;
use nix::unistd::Pid;
use seccompiler::{sock_filter, BpfProgram};
use serde::{Deserialize, Serialize};

use crate::child::{self, at, in_stage, Confinement, Pipes};
use crate::error::{JailError, SysError};
use crate::landlock::LandlockPlan;
use crate::message::{self, Stage, StageError, ToChild, ToParent};
use crate::mounts::{self, Mount};
use crate::parent::{nonblocking, pipe, Running};
use crate::plan::Plan;
use crate::rlimits;
use crate::sys::{self, Forked};
use crate::{cgroup, WORKDIR};

/// The namespaces each forked run gets of its own (the user namespace is the template's).
const FORK_FLAGS: libc::c_int = libc::CLONE_NEWNS
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS;

/// The largest request or answer (a request carries the compiled seccomp filters).
const MESSAGE_MAX: usize = 512 * 1024;

/// How long warden waits for the template's answer.
const ANSWER_TIME: Duration = Duration::from_secs(10);

/// One seccomp filter as `(code, jt, jf, k)` instructions.
pub type Filter = Vec<(u16, u8, u8, u32)>;

/// The per-run parts of a [`Plan`], as a forked child builds its jail from them.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChildSpec {
    pub hostname: String,
    pub run_as: u32,
    pub clear_groups: bool,
    /// `(RLIMIT_* name, soft, hard)`.
    pub rlimits: Vec<(String, u64, u64)>,
    pub landlock: LandlockPlan,
    /// Each filter as `(code, jt, jf, k)` instructions.
    pub seccomp: Option<Vec<Filter>>,
    /// The fresh file systems of the run: `/work`, `/tmp` and `/proc`.
    pub mounts: Vec<Mount>,
    /// How many cgroup files (v1 `tasks`, v2 `cgroup.procs`) follow the streams.
    pub cgroup_files: usize,
    /// Session mode: a command pipe comes with the request (the program's standard input).
    pub session: bool,
    /// A host directory comes last (opened by warden): its tree is copied into `/work` before the
    /// program starts, as a cold jail copies the run's work dir in (the run's input files).
    #[serde(default)]
    pub workdir: bool,
}

impl ChildSpec {
    /// The per-run parts of `plan`.
    pub fn of(plan: &Plan) -> Result<ChildSpec, JailError> {
        let seccomp = plan
            .seccomp
            .as_ref()
            .map(crate::seccomp::compile)
            .transpose()?
            .map(|filters| {
                filters
                    .iter()
                    .map(|filter| filter.iter().map(|i| (i.code, i.jt, i.jf, i.k)).collect())
                    .collect()
            });
        let mounts = plan
            .mounts
            .iter()
            .filter(|mount| match mount {
                Mount::Tmpfs { target, .. } => {
                    target == Path::new(WORKDIR) || target == Path::new("/tmp")
                }
                Mount::Proc { .. } => true,
                _ => false,
            })
            .cloned()
            .collect();
        Ok(ChildSpec {
            hostname: plan.hostname.to_owned(),
            run_as: plan.run_as,
            clear_groups: plan.id_maps.clear_groups,
            rlimits: plan
                .rlimits
                .iter()
                .map(|limit| (limit.name.to_owned(), limit.soft, limit.hard))
                .collect(),
            landlock: plan.landlock.clone(),
            seccomp,
            mounts,
            cgroup_files: 0,
            session: plan.session,
            workdir: false,
        })
    }
}

/// The template's answer to one request.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum Answer {
    /// The child exists; its pidfd comes with the answer.
    Forked,
    Refused {
        reason: String,
    },
}

// ---------------------------------------------------------------------------------------------
// Warden's side.

/// Asks the template listening on `channel` (a Unix seqpacket socket) for a run's jail built from
/// `plan`; returns it running, as [`crate::parent::spawn`] does for a cold jail. The template
/// forwards nothing back but a pidfd: the run's init reports over the control socket made here.
pub fn spawn(
    plan: &Plan,
    channel: &Path,
    sequence: u64,
    workdir: Option<&Path>,
) -> Result<Running, JailError> {
    let cgroup = match &plan.cgroup {
        Some(cgroup_plan) => {
            cgroup_plan.reap_stale();
            Some(cgroup_plan.create(&cgroup::run_name(sequence))?)
        }
        None => None,
    };
    let mut spec = ChildSpec::of(plan)?;
    let cgroup_files = match &cgroup {
        Some(cgroup) => cgroup.attach_files()?,
        None => Vec::new(),
    };
    spec.cgroup_files = cgroup_files.len();
    // Only a work dir with something in it is copied in (a pooled jail's starts empty).
    let workdir = match workdir {
        Some(dir) if std::fs::read_dir(dir).is_ok_and(|mut d| d.next().is_some()) => Some(
            nix::fcntl::open(
                dir,
                OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC | OFlag::O_NOFOLLOW,
                FileMode::empty(),
            )
            .map_err(|errno| JailError::syscall("open", dir.display(), errno))?,
        ),
        _ => None,
    };
    spec.workdir = workdir.is_some();
    let (control, control_child) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|errno| JailError::syscall("socketpair", "AF_UNIX, SOCK_SEQPACKET", errno))?;
    let (stdout, stdout_child) = pipe()?;
    let (stderr, stderr_child) = pipe()?;
    let (stdin, stdin_child) = if plan.session {
        let (child_end, ours) = pipe()?;
        (Some(ours), Some(child_end))
    } else {
        (None, None)
    };
    nonblocking(&stdout)?;
    nonblocking(&stderr)?;
    let request = serde_json::to_vec(&spec)
        .map_err(|err| JailError::Config(format!("the fork request: {err}")))?;
    let mut fds: Vec<RawFd> = vec![
        control_child.as_raw_fd(),
        stdout_child.as_raw_fd(),
        stderr_child.as_raw_fd(),
    ];
    fds.extend(stdin_child.as_ref().map(AsRawFd::as_raw_fd));
    fds.extend(cgroup_files.iter().map(AsRawFd::as_raw_fd));
    fds.extend(workdir.as_ref().map(AsRawFd::as_raw_fd));

    let sock = socket(
        AddressFamily::Unix,
        SockType::SeqPacket,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .map_err(|errno| JailError::syscall("socket", "AF_UNIX, SOCK_SEQPACKET", errno))?;
    let address = UnixAddr::new(channel)
        .map_err(|errno| JailError::syscall("socket address", channel.display(), errno))?;
    connect(sock.as_raw_fd(), &address)
        .map_err(|errno| JailError::syscall("connect", channel.display(), errno))?;
    let timeout = TimeVal::new(ANSWER_TIME.as_secs() as _, 0);
    setsockopt(&sock, sockopt::ReceiveTimeout, &timeout)
        .map_err(|errno| JailError::syscall("setsockopt", "SO_RCVTIMEO", errno))?;
    crate::trace("template: request");
    send_with_fds(sock.as_fd(), &request, &fds)
        .map_err(|errno| JailError::syscall("sendmsg", "fork request", errno))?;
    drop((
        control_child,
        stdout_child,
        stderr_child,
        stdin_child,
        cgroup_files,
        workdir,
    ));
    let (answer, mut received) = recv_with_fds(sock.as_fd(), 1)
        .map_err(|errno| JailError::syscall("recvmsg", "fork answer", errno))?;
    let answer: Answer = serde_json::from_slice(&answer)
        .map_err(|err| JailError::Config(format!("the template's answer is not valid: {err}")))?;
    let pidfd = match answer {
        Answer::Forked if received.len() == 1 => received.remove(0),
        Answer::Forked => {
            return Err(JailError::Config(
                "the template answered without the run's pidfd".into(),
            ))
        }
        Answer::Refused { reason } => {
            return Err(JailError::Config(format!(
                "the template refused the fork: {reason}"
            )))
        }
    };
    let init = pid_of(pidfd.as_fd())?;
    crate::trace("template: forked");
    // Its own file systems first: the supervisor reads the work dir through its root.
    wait_mounted(control.as_fd())?;
    let running = Running::adopted(init, pidfd, control, stdin, stdout, stderr, cgroup);
    message::send_to_child(running.control.as_fd(), ToChild::Go)
        .map_err(|errno| JailError::syscall("send", "go", errno))?;
    Ok(running)
}

/// Waits for the run's init to say it has its own file systems (or why it could not).
fn wait_mounted(control: BorrowedFd<'_>) -> Result<(), JailError> {
    use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
    let mut fds = [PollFd::new(control, PollFlags::POLLIN)];
    let timeout = PollTimeout::try_from(ANSWER_TIME).unwrap_or(PollTimeout::MAX);
    match poll(&mut fds, timeout) {
        Ok(0) => {
            return Err(JailError::Config(
                "the forked run's init did not set up in time".into(),
            ))
        }
        Ok(_) => {}
        Err(errno) => return Err(JailError::syscall("poll", "control socket", errno)),
    }
    match message::recv_from_child(control) {
        Ok(Some(ToParent::Mounted)) => Ok(()),
        Ok(Some(ToParent::StageFailed(failed))) => Err(failed.into()),
        Ok(_) => Err(JailError::Config(
            "the forked run's init ended while setting up".into(),
        )),
        Err(errno) => Err(JailError::syscall("recv", "control socket", errno)),
    }
}

/// The pid (in our pid namespace) of the process `pidfd` refers to, from its fdinfo.
fn pid_of(pidfd: BorrowedFd<'_>) -> Result<Pid, JailError> {
    let path = format!("/proc/self/fdinfo/{}", pidfd.as_raw_fd());
    let text = std::fs::read_to_string(&path)
        .map_err(|err| JailError::Config(format!("cannot read {path}: {err}")))?;
    text.lines()
        .find_map(|line| line.strip_prefix("Pid:"))
        .and_then(|pid| pid.trim().parse::<i32>().ok())
        .filter(|pid| *pid > 0)
        .map(Pid::from_raw)
        .ok_or_else(|| JailError::Config("the run's init ended before it was supervised".into()))
}

/// One message with descriptors attached.
pub fn send_with_fds(sock: BorrowedFd<'_>, bytes: &[u8], fds: &[RawFd]) -> Result<(), Errno> {
    let iov = [IoSlice::new(bytes)];
    let rights = [ControlMessage::ScmRights(fds)];
    let cmsgs: &[ControlMessage<'_>] = if fds.is_empty() { &[] } else { &rights };
    loop {
        match sendmsg::<UnixAddr>(sock.as_raw_fd(), &iov, cmsgs, MsgFlags::MSG_NOSIGNAL, None) {
            Ok(_) => return Ok(()),
            Err(Errno::EINTR) => continue,
            Err(errno) => return Err(errno),
        }
    }
}

/// One message and the descriptors attached to it (at most `max_fds`; more is an error, and
/// every descriptor received is owned, so none leaks). An empty message is the peer's end.
pub fn recv_with_fds(
    sock: BorrowedFd<'_>,
    max_fds: usize,
) -> Result<(Vec<u8>, Vec<OwnedFd>), Errno> {
    // The buffer is the waiting message's size (a fork request is tens of KiB, an answer tens of
    // bytes): zeroing `MESSAGE_MAX` for each message cost more than the message.
    let waiting = loop {
        match nix::sys::socket::recv(
            sock.as_raw_fd(),
            &mut [],
            MsgFlags::MSG_PEEK | MsgFlags::MSG_TRUNC,
        ) {
            Ok(len) => break len,
            Err(Errno::EINTR) => continue,
            Err(errno) => return Err(errno),
        }
    };
    let mut buf = vec![0u8; waiting.clamp(1, MESSAGE_MAX)];
    let mut space = nix::cmsg_space!([RawFd; 16]);
    let (len, fds, truncated) = loop {
        let mut iov = [IoSliceMut::new(&mut buf)];
        match recvmsg::<UnixAddr>(
            sock.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::MSG_CMSG_CLOEXEC,
        ) {
            Ok(msg) => {
                let mut fds = Vec::new();
                for cmsg in msg.cmsgs().map_err(|_| Errno::EBADMSG)? {
                    if let ControlMessageOwned::ScmRights(raw) = cmsg {
                        // SAFETY: the kernel installed these descriptors in our table for this
                        // message; nothing else owns them.
                        fds.extend(
                            raw.into_iter()
                                .map(|fd| unsafe { OwnedFd::from_raw_fd(fd) }),
                        );
                    }
                }
                let truncated = msg
                    .flags
                    .intersects(MsgFlags::MSG_TRUNC | MsgFlags::MSG_CTRUNC);
                break (msg.bytes, fds, truncated);
            }
            Err(Errno::EINTR) => continue,
            Err(errno) => return Err(errno),
        }
    };
    if truncated || fds.len() > max_fds {
        return Err(Errno::EMSGSIZE);
    }
    buf.truncate(len);
    Ok((buf, fds))
}

// ---------------------------------------------------------------------------------------------
// The template's side.

/// What the interpreter around [`serve`] does at each fork, as `os.fork` would
/// (`PyOS_BeforeFork`, `PyOS_AfterFork_Parent`, `PyOS_AfterFork_Child`).
pub struct ForkHooks {
    pub before: fn(),
    pub parent: fn(),
    pub child: fn(),
}

/// How [`serve`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    /// In a run's program process: confined, its streams the run's; the interpreter goes on.
    Child,
    /// In the template: its channel closed and every child it made has ended.
    End,
}

/// The template's loop: answers fork requests from `channel` until it closes. Returns
/// [`Served::Child`] in each run's confined program process, [`Served::End`] in the template.
pub fn serve(channel: BorrowedFd<'_>, hooks: &ForkHooks) -> Result<Served, JailError> {
    // Each run's init is our child: with SIGCHLD ignored the kernel reaps it when it exits, so no
    // run leaves a zombie behind while the template waits for its next request (and the drain at
    // the end still waits for every one of them: wait4 then blocks until none is left).
    // SAFETY: installing SIG_IGN runs no handler code; the template is single-threaded.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_IGN) };
    huge_pages();
    loop {
        reap_ended();
        let (request, fds) = match recv_with_fds(channel, 16) {
            Ok(message) => message,
            Err(Errno::EMSGSIZE) => {
                answer(channel, &refused("the request is too large"), None);
                continue;
            }
            Err(errno) => return Err(JailError::syscall("recvmsg", "template channel", errno)),
        };
        if request.is_empty() {
            // The channel closed: no more runs. Children still running keep their namespaces,
            // which are below ours, so we stay until they have ended.
            while sys::wait4(Pid::from_raw(-1), false).is_ok() {}
            return Ok(Served::End);
        }
        let spec: ChildSpec = match serde_json::from_slice(&request) {
            Ok(spec) => spec,
            Err(err) => {
                answer(
                    channel,
                    &refused(&format!("not a fork request: {err}")),
                    None,
                );
                continue;
            }
        };
        let wanted = 3 + usize::from(spec.session) + spec.cgroup_files + usize::from(spec.workdir);
        if fds.len() != wanted {
            answer(
                channel,
                &refused(&format!("{} descriptors, not {wanted}", fds.len())),
                None,
            );
            continue;
        }
        // A thread missing from the child could hold a lock the child needs (BLAS and OpenMP
        // pools are off in the template's environment; this is the check).
        match sys::thread_count() {
            Ok(1) => {}
            Ok(n) => {
                answer(
                    channel,
                    &refused(&format!(
                        "the template has {n} threads; it forks only with one"
                    )),
                    None,
                );
                continue;
            }
            Err(err) => {
                answer(channel, &refused(&format!("/proc/self/task: {err}")), None);
                continue;
            }
        }
        (hooks.before)();
        let forked = sys::clone_jail(FORK_FLAGS as u64, None);
        match forked {
            Ok(Forked::Child) => {
                // The run's init. The template's channel is not ours.
                return child_init(&spec, fds, channel, hooks);
            }
            Ok(Forked::Parent { pidfd, .. }) => {
                (hooks.parent)();
                match pidfd {
                    Some(pidfd) => answer(channel, &Answer::Forked, Some(pidfd.as_fd())),
                    None => answer(channel, &refused("clone3 gave no pidfd"), None),
                }
            }
            Err(errno) => {
                (hooks.parent)();
                answer(channel, &refused(&format!("clone3: {errno}")), None);
            }
        }
        drop(fds);
    }
}

/// Backs the template's private anonymous memory (the interpreter's heap and arenas: what the
/// preload made) with huge pages where a whole aligned 2 MiB fits: each fork then copies one
/// entry per 2 MiB instead of 512 page-table entries, and each run's exit tears down as few (a
/// run's first write to such a range splits it in the run only, which copies the 4 KiB page it
/// wrote). Best effort: a kernel without `MADV_COLLAPSE` (before 6.1), with transparent huge
/// pages off, or without free huge pages, leaves the memory as it was, which changes nothing but
/// the cost of a fork.
fn huge_pages() {
    const HUGE: usize = 2 << 20;
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return;
    };
    for line in maps.lines() {
        // start-end perms offset dev inode [path]
        let fields: Vec<&str> = line.split_whitespace().collect();
        let anonymous = match fields.get(5) {
            None => true,
            Some(name) => *name == "[heap]",
        };
        if fields.len() < 5 || fields[1] != "rw-p" || fields[4] != "0" || !anonymous {
            continue;
        }
        let Some((start, end)) = fields[0].split_once('-') else {
            continue;
        };
        let (Ok(start), Ok(end)) = (
            usize::from_str_radix(start, 16),
            usize::from_str_radix(end, 16),
        ) else {
            continue;
        };
        let first = start.div_ceil(HUGE) * HUGE;
        let last = end / HUGE * HUGE;
        if last <= first {
            continue;
        }
        let (address, length) = (first as *mut libc::c_void, last - first);
        // Collapsed only: no `MADV_HUGEPAGE`, so a run's later faults get small pages as before
        // (a huge page for each small allocation would cost a run memory).
        // SAFETY: advice on a range of our own private anonymous mappings, read from
        // /proc/self/maps just now (the template is single-threaded: nothing unmaps it meanwhile);
        // it changes which pages back the memory, never its contents.
        unsafe { libc::madvise(address, length, libc::MADV_COLLAPSE) };
    }
}

fn refused(reason: &str) -> Answer {
    Answer::Refused {
        reason: reason.to_owned(),
    }
}

fn answer(channel: BorrowedFd<'_>, answer: &Answer, pidfd: Option<BorrowedFd<'_>>) {
    let bytes = serde_json::to_vec(answer).unwrap_or_default();
    let fds: Vec<RawFd> = pidfd.iter().map(AsRawFd::as_raw_fd).collect();
    let _ = send_with_fds(channel, &bytes, &fds);
}

/// Reaps the template's children that have ended (each run's init), without waiting.
fn reap_ended() {
    while let Ok(Some(_)) = sys::wait4(Pid::from_raw(-1), true) {}
}

/// The run's init, right after the clone (pid 1 of its pid namespace). Returns only in the
/// program's process, confined.
fn child_init(
    spec: &ChildSpec,
    mut fds: Vec<OwnedFd>,
    channel: BorrowedFd<'_>,
    hooks: &ForkHooks,
) -> Result<Served, JailError> {
    let control = fds.remove(0);
    let stdout = fds.remove(0);
    let stderr = fds.remove(0);
    let stdin = spec.session.then(|| fds.remove(0));
    let workdir = if spec.workdir { fds.pop() } else { None };
    let cgroup_files = fds;
    let channel_fd = channel.as_raw_fd();
    // The interpreter's name, which the program's process takes back from the init's.
    let name = nix::sys::prctl::get_name().ok();
    // The run's init reaps its program itself, as a cold jail's does (and the program's own
    // children are its business): the default disposition, not the template's.
    // SAFETY: installing SIG_DFL runs no handler code; this process is single-threaded.
    unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
    let init = || -> Result<Option<i32>, StageError> {
        // Never the template's channel: only the template answers on it.
        // SAFETY: the channel is the template's descriptor, copied into this process by the
        // clone; closing our copy affects no other process, and nothing here uses it again.
        unsafe { libc::close(channel_fd) };
        let pipes = Pipes {
            stdin,
            stdout,
            stderr,
        };
        match init_steps(spec, control.as_fd(), &cgroup_files, workdir, pipes)? {
            InitEnd::Program(pipes) => {
                drop(cgroup_files);
                if let Some(name) = &name {
                    let _ = nix::sys::prctl::set_name(name);
                }
                program_steps(spec, control.as_fd(), pipes)?;
                Ok(None)
            }
            InitEnd::Exit(code) => Ok(Some(code)),
        }
    };
    match init() {
        Ok(None) => {
            // The program's process, confined: only its three streams are open (the control
            // socket closes last, here).
            drop(control);
            (hooks.child)();
            Ok(Served::Child)
        }
        Ok(Some(code)) => sys::exit_now(code),
        Err(err) => {
            let _ = message::send_to_parent(control.as_fd(), &ToParent::StageFailed(err));
            sys::exit_now(126)
        }
    }
}

enum InitEnd {
    /// We are the program's process (the fork's child side), with its streams.
    Program(Pipes),
    /// The init is done: exit with this code.
    Exit(i32),
}

/// The run's init: the steps of a cold init that are per run (`child.rs`), then the fork.
fn init_steps(
    spec: &ChildSpec,
    control: BorrowedFd<'_>,
    cgroup_files: &[OwnedFd],
    workdir: Option<OwnedFd>,
    pipes: Pipes,
) -> Result<InitEnd, StageError> {
    // 1. Die with the template (and so with its jail and warden).
    nix::sys::prctl::set_pdeathsig(Signal::SIGKILL).map_err(at(
        Stage::Init,
        "prctl(PR_SET_PDEATHSIG)",
        "",
    ))?;
    let _ = nix::sys::prctl::set_name(c"warden-init");
    // 2. Into the run's cgroup, first: everything after is charged to it and every later process
    //    is born in it. Writing 0 moves the writer; the files were opened by warden.
    for file in cgroup_files {
        nix::unistd::write(file, b"0").map_err(at(Stage::Cgroup, "write", "cgroup attach"))?;
    }
    if !cgroup_files.is_empty() {
        sys::unshare(libc::CLONE_NEWCGROUP).map_err(at(
            Stage::Namespaces,
            "unshare",
            "CLONE_NEWCGROUP",
        ))?;
    }
    // 3. Our own hostname, in our own UTS namespace.
    nix::unistd::sethostname(&spec.hostname).map_err(at(
        Stage::Hostname,
        "sethostname",
        &spec.hostname,
    ))?;
    // 4. A fresh /work, /tmp and /proc (of our pid namespace) over the template's: nothing a run
    //    writes is seen by another. Our mount namespace is a copy of the template's, private.
    let ops =
        mounts::prepare(&spec.mounts, Path::new("/"), b"", 0, None).map_err(|err| StageError {
            stage: Stage::Mounts,
            error: SysError::new("prepare", err, Errno::EINVAL),
        })?;
    for op in &ops {
        op.run().map_err(in_stage(Stage::Mounts))?;
    }
    // 4b. The run's work dir (its input files) into the fresh /work, through the descriptor warden
    //     opened (our fresh /proc shows it as ours), as a cold jail's init copies it in.
    if let Some(dir) = workdir {
        let path = std::path::PathBuf::from(format!("/proc/self/fd/{}", dir.as_raw_fd()));
        crate::mirror::copy_in(&path, Path::new(WORKDIR), crate::userns::PROGRAM_ID)
            .map_err(in_stage(Stage::Mounts))?;
    }
    // warden reads the work dir through our root from now on: it must be ours already.
    message::send_to_parent(control, &ToParent::Mounted).map_err(at(
        Stage::Init,
        "send",
        "mounted",
    ))?;
    // 5. Our own streams no longer are the template's.
    let null = nix::fcntl::open(c"/dev/null", OFlag::O_RDWR, FileMode::empty()).map_err(at(
        Stage::Stdio,
        "open",
        "/dev/null",
    ))?;
    for fd in 0..3 {
        sys::dup_onto(null.as_fd(), fd).map_err(at(Stage::Stdio, "dup2", fd))?;
    }
    drop(null);
    // 6. warden's go: it holds our pidfd and supervises from here on.
    match message::recv_from_parent(control).map_err(at(Stage::Init, "recv", "control socket"))? {
        Some(ToChild::Go) => {}
        Some(ToChild::Finish) | None => return Ok(InitEnd::Exit(0)),
    }
    // 7. The program in a child of ours, as in a cold jail.
    let program = match sys::fork_single_threaded().map_err(at(Stage::Fork, "fork", ""))? {
        Forked::Child => return Ok(InitEnd::Program(pipes)),
        Forked::Parent { pid, .. } => pid,
    };
    drop(pipes);
    let status = child::reap(program);
    let _ = message::send_to_parent(control, &ToParent::Exited { status });
    // 8. Linger until warden copied the work dir back through our root (it says Finish or
    //    closes its end).
    let _ = message::recv_from_parent(control);
    Ok(InitEnd::Exit(0))
}

/// The program's process: the confinement of a cold run's, in the same order, except that
/// instead of `execve` it returns into the interpreter, so every other descriptor is closed here.
fn program_steps(
    spec: &ChildSpec,
    control: BorrowedFd<'_>,
    pipes: Pipes,
) -> Result<(), StageError> {
    let rlimits = spec
        .rlimits
        .iter()
        .map(|(name, soft, hard)| {
            rlimits::named(name, *soft, *hard).ok_or_else(|| StageError {
                stage: Stage::Rlimits,
                error: SysError::new("setrlimit", name, Errno::EINVAL),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let seccomp: Option<Vec<BpfProgram>> = spec.seccomp.as_ref().map(|filters| {
        filters
            .iter()
            .map(|filter| {
                filter
                    .iter()
                    .map(|&(code, jt, jf, k)| sock_filter { code, jt, jf, k })
                    .collect()
            })
            .collect()
    });
    let confinement = Confinement {
        rlimits: &rlimits,
        last_cap: crate::caps::last_cap(),
        clear_groups: spec.clear_groups,
        run_as: spec.run_as,
        landlock: &spec.landlock,
        seccomp: seccomp.as_deref(),
        // The interpreter's own signal dispositions (its SIGINT handler) are a cold
        // interpreter's already: only the mask is emptied.
        reset_dispositions: false,
        keep: Some(control.as_raw_fd()),
        template: false,
    };
    child::confine(&confinement, pipes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn noop() {}

    fn anon_huge_kib() -> u64 {
        std::fs::read_to_string("/proc/self/smaps_rollup")
            .unwrap()
            .lines()
            .find_map(|line| line.strip_prefix("AnonHugePages:"))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }

    /// The template's memory goes to huge pages where the kernel has them, and keeps its
    /// contents (a fork from it sees them unchanged).
    #[test]
    fn huge_pages_keep_the_memory_s_contents() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
            .unwrap_or_default();
        // 16 MiB written with a pattern: at least one whole aligned 2 MiB range inside.
        let data: Vec<u64> = (0..(2u64 << 20))
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let before = anon_huge_kib();
        huge_pages();
        assert!(data
            .iter()
            .enumerate()
            .all(|(i, &v)| v == (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        if !thp.contains("[never]") && !thp.is_empty() {
            assert!(
                anon_huge_kib() >= before + 2048,
                "no huge page after the collapse ({thp})"
            );
        }
        // A fork sees the same memory.
        let mut status = 0;
        // SAFETY: the child only reads `data` and exits without running destructors.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let same = data
                .iter()
                .enumerate()
                .all(|(i, &v)| v == (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
            // SAFETY: leaving the forked test process at once.
            unsafe { libc::_exit(if same { 0 } else { 1 }) };
        }
        assert!(pid > 0);
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0);
    }

    /// Both ends of a template channel.
    fn seqpacket_pair() -> (OwnedFd, OwnedFd) {
        socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .unwrap()
    }

    #[test]
    fn messages_come_whole_in_their_own_size() {
        let (ours, theirs) = seqpacket_pair();
        let (a, b) = pipe().unwrap();
        // As large as a socket's default buffer lets one message be.
        let big: Vec<u8> = (0..150_000u32).map(|i| (i % 251) as u8).collect();
        send_with_fds(ours.as_fd(), &big, &[a.as_raw_fd(), b.as_raw_fd()]).unwrap();
        send_with_fds(ours.as_fd(), b"small", &[]).unwrap();
        drop(ours);
        let (bytes, fds) = recv_with_fds(theirs.as_fd(), 2).unwrap();
        assert_eq!((bytes, fds.len()), (big, 2));
        let (bytes, fds) = recv_with_fds(theirs.as_fd(), 2).unwrap();
        assert_eq!((bytes.as_slice(), fds.len()), (&b"small"[..], 0));
        // The peer's end: an empty message.
        let (bytes, fds) = recv_with_fds(theirs.as_fd(), 2).unwrap();
        assert!(bytes.is_empty() && fds.is_empty());
    }

    /// A test process has the harness's threads: a template in that state must not fork.
    #[test]
    fn a_template_with_more_than_one_thread_refuses_to_fork() {
        let _thread = std::thread::spawn(|| std::thread::sleep(Duration::from_secs(5)));
        let (ours, theirs) = seqpacket_pair();
        let spec = ChildSpec {
            hostname: "jail".into(),
            run_as: 65534,
            clear_groups: true,
            rlimits: Vec::new(),
            landlock: LandlockPlan {
                abi: None,
                required: false,
                rules: Vec::new(),
            },
            seccomp: None,
            mounts: Vec::new(),
            cgroup_files: 0,
            session: false,
            workdir: false,
        };
        let (a, b) = pipe().unwrap();
        let (c, d) = pipe().unwrap();
        let raw = [a.as_raw_fd(), b.as_raw_fd(), c.as_raw_fd()];
        send_with_fds(ours.as_fd(), &serde_json::to_vec(&spec).unwrap(), &raw).unwrap();
        drop((a, b, c, d));
        let hooks = ForkHooks {
            before: noop,
            parent: noop,
            child: noop,
        };
        let template = std::thread::spawn(move || serve(theirs.as_fd(), &hooks));
        let (answer, fds) = recv_with_fds(ours.as_fd(), 1).unwrap();
        assert!(fds.is_empty(), "a refusal carries no pidfd");
        let answer: Answer = serde_json::from_slice(&answer).unwrap();
        match answer {
            Answer::Refused { reason } => assert!(reason.contains("threads"), "{reason}"),
            Answer::Forked => panic!("a multi-threaded template forked"),
        }
        // A request with the wrong number of descriptors is refused too, and the end of the
        // channel ends the template.
        send_with_fds(ours.as_fd(), &serde_json::to_vec(&spec).unwrap(), &[]).unwrap();
        let (answer, _) = recv_with_fds(ours.as_fd(), 1).unwrap();
        assert!(matches!(
            serde_json::from_slice::<Answer>(&answer).unwrap(),
            Answer::Refused { .. }
        ));
        drop(ours);
        assert_eq!(template.join().unwrap().unwrap(), Served::End);
    }
}
