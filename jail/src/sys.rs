//! Every raw system call and every `unsafe` block of the jail, each behind a small safe wrapper.
//!
//! Owns: the calls `nix` does not wrap or wraps differently from what the jail needs (`clone3`,
//! `wait4` with resource usage, the capability sets and the bounding set, `close_range`, descriptor
//! duplication above or onto a given number, the Landlock ABI and seccomp probes, signal
//! dispositions, `_exit`) and the process-duplicating calls whose soundness depends on the process
//! being single-threaded. Each wrapper states the invariant it relies on in a `// SAFETY:` comment,
//! and returns the bare errno: its caller names the call in its [`SysError`] — except where only the
//! wrapper knows the argument (the capability [`drop_bounding_set`] stopped at).
//!
//! Does not own: *which* calls are made or in what order (that is `child.rs` and `parent.rs`), nor any
//! policy. Calls that `nix` wraps safely (mount, pivot_root, setresuid, …) are used directly by the
//! layer modules.

use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

use nix::errno::Errno;
use nix::unistd::Pid;

use crate::error::SysError;

/// `CLONE_INTO_CGROUP` (Linux 5.7), not exported by the `libc` crate.
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

/// Which side of a process duplication we are on.
pub enum Forked {
    /// The new process.
    Child,
    /// The calling process; `pidfd` is present when one was requested.
    Parent { pid: Pid, pidfd: Option<OwnedFd> },
}

/// Number of threads of the calling process (entries of `/proc/self/task`).
pub fn thread_count() -> std::io::Result<usize> {
    Ok(std::fs::read_dir("/proc/self/task")?.count())
}

fn ensure_single_threaded() -> Result<(), Errno> {
    // A thread the caller has just joined leaves /proc/self/task a moment after the join returns (the
    // kernel wakes the joiner before it unhashes the thread), so a count above one is re-read briefly
    // before it is believed: first yielding (it is usually gone within microseconds; `netns.rs`
    // joins its helper right before the clone), then sleeping.
    for attempt in 0..70 {
        match thread_count() {
            Ok(1) => return Ok(()),
            Ok(_) if attempt < 20 => std::thread::yield_now(),
            Ok(_) if attempt < 69 => std::thread::sleep(std::time::Duration::from_micros(200)),
            // A process-duplicating call with other threads alive would leave the child with locks
            // (allocator, stdio) held by threads that do not exist in it.
            Ok(_) => return Err(Errno::EDEADLK),
            Err(err) => return Err(Errno::from_raw(err.raw_os_error().unwrap_or(libc::EIO))),
        }
    }
    Err(Errno::EDEADLK)
}

/// `clone3` with fork semantics (no new stack): creates the jail's first process in new namespaces.
///
/// `flags` are `CLONE_NEW*` flags; `CLONE_PIDFD` is always added and the parent receives a pidfd.
/// With `cgroup`, the child starts inside that cgroup (`CLONE_INTO_CGROUP`, cgroup v2 only).
/// Refuses (EDEADLK) when the calling process has more than one thread.
pub fn clone_jail(flags: u64, cgroup: Option<BorrowedFd<'_>>) -> Result<Forked, Errno> {
    ensure_single_threaded()?;
    let mut pidfd: libc::c_int = -1;
    let mut all_flags = flags | libc::CLONE_PIDFD as u64;
    if cgroup.is_some() {
        all_flags |= CLONE_INTO_CGROUP;
    }
    let args = libc::clone_args {
        flags: all_flags,
        pidfd: std::ptr::addr_of_mut!(pidfd) as u64,
        child_tid: 0,
        parent_tid: 0,
        exit_signal: libc::SIGCHLD as u64,
        stack: 0,
        stack_size: 0,
        tls: 0,
        set_tid: 0,
        set_tid_size: 0,
        cgroup: cgroup.map_or(0, |fd| fd.as_raw_fd() as u64),
    };
    // SAFETY: `args` is a valid, fully initialised `clone_args` whose size we pass; `pidfd` outlives
    // the call. Without CLONE_VM and with a null stack, clone3 behaves like fork: the child gets a
    // copy of our address space and continues on a copy of this stack. We checked above that the
    // process is single-threaded, so no lock can be held by a thread missing from the child.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            std::ptr::addr_of!(args),
            std::mem::size_of::<libc::clone_args>(),
        )
    };
    match ret {
        -1 => Err(Errno::last()),
        0 => Ok(Forked::Child),
        pid => {
            // SAFETY: with CLONE_PIDFD the kernel stored a new, owned file descriptor in `pidfd`.
            let pidfd = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd) });
            Ok(Forked::Parent {
                pid: Pid::from_raw(pid as libc::pid_t),
                pidfd,
            })
        }
    }
}

/// `fork(2)` for the jail's init, which is single-threaded by construction (checked anyway).
pub fn fork_single_threaded() -> Result<Forked, Errno> {
    ensure_single_threaded()?;
    // SAFETY: the process is single-threaded (checked above), so the child may run any code.
    match unsafe { nix::unistd::fork() }? {
        nix::unistd::ForkResult::Child => Ok(Forked::Child),
        nix::unistd::ForkResult::Parent { child } => Ok(Forked::Parent {
            pid: child,
            pidfd: None,
        }),
    }
}

/// Ends the calling process at once, without running destructors or `atexit` handlers (which
/// belong to the parent's copy of the state in a forked child).
pub fn exit_now(code: i32) -> ! {
    // SAFETY: `_exit` is async-signal-safe and takes no pointers.
    unsafe { libc::_exit(code) }
}

/// Resource usage of a reaped child, the parts the jail reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct ChildUsage {
    /// User plus system CPU time of the child and the descendants it reaped, in microseconds.
    pub cpu_us: u64,
    /// Peak resident set of the largest process among them, in bytes.
    pub max_rss_bytes: u64,
}

/// `wait4(pid)` (`pid` -1: any child): `Ok(None)` with `nohang` when no child has exited yet;
/// otherwise the reaped pid, its raw wait status and resource usage.
pub fn wait4(pid: Pid, nohang: bool) -> Result<Option<(Pid, i32, ChildUsage)>, Errno> {
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let options = if nohang { libc::WNOHANG } else { 0 };
    let reaped = loop {
        // SAFETY: both out-pointers point to live, writable locals of the right types.
        let ret = unsafe {
            libc::wait4(
                pid.as_raw(),
                &mut status,
                options | libc::__WALL,
                &mut usage,
            )
        };
        match ret {
            -1 if Errno::last() == Errno::EINTR => continue,
            -1 => return Err(Errno::last()),
            0 => return Ok(None),
            pid => break Pid::from_raw(pid),
        }
    };
    let micros = |tv: libc::timeval| tv.tv_sec as u64 * 1_000_000 + tv.tv_usec as u64;
    let usage = ChildUsage {
        cpu_us: micros(usage.ru_utime) + micros(usage.ru_stime),
        max_rss_bytes: usage.ru_maxrss.max(0) as u64 * 1024,
    };
    Ok(Some((reaped, status, usage)))
}

/// A duplicate of `fd` numbered `min` or above, close-on-exec: keeps the jail's descriptors clear of
/// 0–3, which the program's process overwrites.
pub fn dup_above(fd: BorrowedFd<'_>, min: RawFd) -> Result<OwnedFd, Errno> {
    // SAFETY: F_DUPFD_CLOEXEC takes an integer and returns a new descriptor that nothing else owns.
    let ret = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_DUPFD_CLOEXEC, min) };
    if ret == -1 {
        Err(Errno::last())
    } else {
        // SAFETY: `ret` is a descriptor just created for us.
        Ok(unsafe { OwnedFd::from_raw_fd(ret) })
    }
}

/// The Landlock ABI version the kernel offers, or `None` when Landlock is absent or disabled.
pub fn landlock_abi() -> Option<u32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with the VERSION flag, a null attribute pointer and size 0 are the documented way to
    // query the ABI; no memory is read or written.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (ret > 0).then_some(ret as u32)
}

/// Whether the kernel offers seccomp filters (`prctl(PR_GET_SECCOMP)` answers).
pub fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP takes no pointer arguments.
    let ret = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    ret >= 0
}

/// Removes capabilities `0..=last_cap` from the bounding set (needs CAP_SETPCAP in the user
/// namespace). A failure names the capability that could not be dropped.
pub fn drop_bounding_set(last_cap: u32) -> Result<(), SysError> {
    for cap in 0..=last_cap {
        // SAFETY: PR_CAPBSET_DROP takes an integer capability number, no pointers.
        let ret = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
        if ret == -1 {
            let errno = Errno::last();
            // EINVAL: the kernel does not know this capability (older than our table); nothing to drop.
            if errno != Errno::EINVAL {
                return Err(SysError::new("prctl(PR_CAPBSET_DROP)", cap, errno));
            }
        }
    }
    Ok(())
}

/// Clears the ambient capability set.
pub fn clear_ambient_caps() -> Result<(), Errno> {
    // SAFETY: PR_CAP_AMBIENT with CLEAR_ALL takes integer arguments only.
    let ret = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    if ret == -1 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// Empties the effective, permitted and inheritable capability sets of the calling thread.
pub fn clear_capabilities() -> Result<(), Errno> {
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: version 3 of capset reads one header and two data structs, which we pass by pointer
    // to live, correctly laid out `repr(C)` values.
    let ret = unsafe { libc::syscall(libc::SYS_capset, std::ptr::addr_of!(header), data.as_ptr()) };
    if ret == -1 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Makes the effective capability set equal to the permitted one (no privilege needed: effective
/// may be any subset of permitted). warden calls it after taking another effective uid, which makes
/// the kernel empty the effective set while the permitted set stays (real and saved uid are 0).
pub fn raise_effective_capabilities() -> Result<(), Errno> {
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: version 3 of capget writes two data structs, which we pass by pointer to live,
    // correctly laid out `repr(C)` values; capset reads the same.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_capget,
            std::ptr::addr_of!(header),
            data.as_mut_ptr(),
        )
    };
    if ret == -1 {
        return Err(Errno::last());
    }
    for half in &mut data {
        half.effective = half.permitted;
    }
    // SAFETY: as above.
    let ret = unsafe { libc::syscall(libc::SYS_capset, std::ptr::addr_of!(header), data.as_ptr()) };
    if ret == -1 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Marks every descriptor from `first` upwards close-on-exec (`close_range(first, ~0, CLOEXEC)`).
pub fn cloexec_from(first: RawFd) -> Result<(), Errno> {
    // SAFETY: close_range with CLOSE_RANGE_CLOEXEC only changes descriptor flags; no pointers.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            first as libc::c_uint,
            libc::c_uint::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if ret == -1 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// `dup2(old, new)` onto a descriptor number the caller chooses (e.g. 3 for the program's gate),
/// leaving the result inheritable across `execve`.
pub fn dup_onto(old: BorrowedFd<'_>, new: RawFd) -> Result<(), Errno> {
    // SAFETY: dup2 takes two integers; replacing `new` is the caller's intent (the child owns its
    // descriptor table and nothing else refers to `new` by then).
    let ret = unsafe { libc::dup2(old.as_raw_fd(), new) };
    if ret == -1 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Restores the default disposition of every catchable signal and empties the signal mask, so
/// the program does not inherit warden's ignored SIGPIPE or blocked SIGINT/SIGTERM.
pub fn reset_signals() -> Result<(), Errno> {
    for sig in 1..libc::SIGRTMAX() {
        if sig == libc::SIGKILL || sig == libc::SIGSTOP {
            continue;
        }
        // SAFETY: installing SIG_DFL involves no handler code; an invalid number only yields EINVAL,
        // which we ignore (glibc reserves two real-time signals).
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }
    nix::sys::signal::sigprocmask(
        nix::sys::signal::SigmaskHow::SIG_SETMASK,
        Some(&nix::sys::signal::SigSet::empty()),
        None,
    )
}

/// Empties the signal mask, leaving the dispositions as they are (a forked interpreter keeps its
/// own handlers).
pub fn unblock_signals() -> Result<(), Errno> {
    nix::sys::signal::sigprocmask(
        nix::sys::signal::SigmaskHow::SIG_SETMASK,
        Some(&nix::sys::signal::SigSet::empty()),
        None,
    )
}

/// Closes every descriptor from `first` upwards except `keep` (`close_range` on both sides of it).
pub fn close_all_from(first: RawFd, keep: RawFd) -> Result<(), Errno> {
    let close = |low: RawFd, high: libc::c_uint| {
        // SAFETY: close_range takes integers only; the descriptors closed belong to this process,
        // which owns its table (a forked child about to run no code that refers to them).
        let ret = unsafe {
            libc::syscall(
                libc::SYS_close_range,
                low as libc::c_uint,
                high,
                0 as libc::c_uint,
            )
        };
        if ret == -1 {
            Err(Errno::last())
        } else {
            Ok(())
        }
    };
    if keep > first {
        close(first, (keep - 1) as libc::c_uint)?;
    }
    close(keep.max(first - 1) + 1, libc::c_uint::MAX)
}

/// The address ranges of the calling process's argument and environment strings
/// (`[arg_start, arg_end)`, `[env_start, env_end)`, fields 48–51 of `/proc/self/stat`): what
/// `/proc/<pid>/cmdline` and `environ` show.
pub fn arg_env_areas() -> Option<[(usize, usize); 2]> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which may contain spaces), numbered from 3.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 2..].split(' ').collect();
    let field = |n: usize| fields.get(n - 3)?.parse::<usize>().ok();
    Some([(field(48)?, field(49)?), (field(50)?, field(51)?)])
}

/// Overwrites the calling process's argument strings with `name` and its environment strings with
/// zeros, so that `/proc/<pid>/cmdline` shows `name` and `environ` nothing. The last byte of the
/// argument area is set non-zero: the kernel then reads the command line up to the first NUL (the
/// `setproctitle` convention), i.e. exactly `name`.
///
/// # Safety
/// `areas` must be this process's own [`arg_env_areas`] (read in this address space or in the one it
/// was forked from), and nothing in the process may read its `argv` or `environ` strings afterwards
/// (the jail's init reads neither).
pub unsafe fn overwrite_arg_env(areas: [(usize, usize); 2], name: &[u8]) {
    let [(arg_start, arg_end), (env_start, env_end)] = areas;
    for (start, end) in [(arg_start, arg_end), (env_start, env_end)] {
        if end > start {
            // SAFETY: the kernel placed the process's argument and environment strings in these
            // ranges of its initial stack, which is mapped writable; the caller guarantees nothing
            // reads them any more.
            unsafe { std::ptr::write_bytes(start as *mut u8, 0, end - start) };
        }
    }
    let room = arg_end.saturating_sub(arg_start);
    if room > name.len() + 1 {
        // SAFETY: as above; `name.len() + 1 < room`, so both writes stay inside the argument area.
        unsafe {
            std::ptr::copy_nonoverlapping(name.as_ptr(), arg_start as *mut u8, name.len());
            *((arg_end - 1) as *mut u8) = b' ';
        }
    }
}

/// `unshare(flags)` for the namespaces the init adds after its cgroup join (`CLONE_NEWCGROUP`) and
/// for its children (`CLONE_NEWTIME`).
pub fn unshare(flags: libc::c_int) -> Result<(), Errno> {
    // SAFETY: unshare takes an integer and changes only the calling thread's namespaces.
    if unsafe { libc::unshare(flags) } == -1 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

/// Whole seconds of `clock` (CLOCK_MONOTONIC, CLOCK_BOOTTIME).
pub fn clock_seconds(clock: libc::clockid_t) -> Result<i64, Errno> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a live, writable timespec.
    if unsafe { libc::clock_gettime(clock, &mut now) } == -1 {
        Err(Errno::last())
    } else {
        Ok(now.tv_sec)
    }
}
