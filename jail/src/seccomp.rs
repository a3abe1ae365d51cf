//! seccomp: which system calls the program may make.
//!
//! Owns: the allowlist (each entry says who needs it), the deny list (each entry says why), and
//! compiling them into the two filters the program gets:
//! 1. **numbers**: a filter on the call number alone. Calls on the allowlist pass; calls on the deny
//!    list fail with `EPERM`; x32-ABI numbers (≥ 0x40000000, which architecture checks do not catch)
//!    fail with `EPERM`; a foreign architecture kills the process; anything else fails with `ENOSYS`
//!    ("not implemented"), which is what libraries expect from a kernel that lacks a call, so they fall
//!    back. `clone3` is deliberately left to `ENOSYS`: glibc then falls back to `clone`, whose flags a
//!    filter can inspect (`EPERM` on clone3 would break thread creation). The filter is generated here
//!    as sorted number ranges (~150 instructions) rather than one block per call: the kernel compiles
//!    every instruction when the filter is installed (~0.5 µs each), and a per-call chain of the
//!    allowlist alone was 1220 instructions, 0.6 ms of every run.
//! 2. **arguments** (built with `seccompiler`): `EPERM` for dangerous arguments of admitted calls —
//!    namespace flags on `clone`, socket families other than `AF_UNIX` on `socket`/`socketpair`,
//!    `TIOCSTI`/`TIOCLINUX` on `ioctl` (the request compared on 32 bits, as the kernel reads it).
//!
//! The kernel runs every filter and the most severe answer wins, so an argument rule's `EPERM` beats
//! the number filter's `ALLOW`. Both filters depend on nothing but the call (and, for the second, four
//! calls' arguments), so the kernel caches their verdicts per call number.
//!
//! Does not own: when the filters are installed (`child.rs`: last step before `execve`).

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};
use serde::Serialize;

use crate::error::{JailError, SysError};

/// A system call by name and number, with who needs it (allow) or why it is refused (deny).
#[derive(Debug, Clone, Copy)]
pub struct Syscall {
    pub name: &'static str,
    pub nr: i64,
    pub why: &'static str,
}

macro_rules! sc {
    ($nr:ident, $why:expr) => {
        Syscall {
            name: stringify!($nr),
            nr: libc::$nr,
            why: $why,
        }
    };
}

/// Calls the program may make (on every architecture).
pub const ALLOWED: &[Syscall] = &[
    // Memory
    sc!(SYS_brk, "malloc (glibc) for small heaps"),
    sc!(
        SYS_mmap,
        "malloc, the dynamic loader, numpy buffers, mmap module"
    ),
    sc!(SYS_munmap, "free of large blocks, the dynamic loader"),
    sc!(
        SYS_mprotect,
        "the dynamic loader (RELRO), ctypes/libffi closures"
    ),
    sc!(SYS_mremap, "realloc of large blocks (numpy, pandas)"),
    sc!(SYS_madvise, "malloc trimming, numpy hugepage hints"),
    sc!(SYS_mincore, "glibc and some allocators probing pages"),
    sc!(SYS_msync, "the mmap module's flush"),
    sc!(
        SYS_membarrier,
        "libraries with lock-free code (e.g. OpenBLAS, some runtimes)"
    ),
    sc!(
        SYS_get_mempolicy,
        "NUMA-aware allocators (OpenBLAS, OpenMP runtimes)"
    ),
    sc!(
        SYS_set_mempolicy,
        "NUMA-aware allocators; affects only the caller's memory"
    ),
    sc!(
        SYS_mbind,
        "NUMA-aware allocators; affects only the caller's memory"
    ),
    sc!(SYS_pkey_alloc, "glibc memory protection keys support"),
    sc!(SYS_pkey_free, "glibc memory protection keys support"),
    sc!(SYS_pkey_mprotect, "glibc memory protection keys support"),
    sc!(
        SYS_memfd_create,
        "libffi trampolines, some libraries' anonymous files"
    ),
    // Files
    sc!(SYS_openat, "every file open (glibc uses openat for open)"),
    sc!(
        SYS_openat2,
        "newer glibc and Python's os.open on some paths"
    ),
    sc!(SYS_close, "everyone"),
    sc!(
        SYS_close_range,
        "subprocess closing inherited descriptors (Python 3.10+)"
    ),
    sc!(SYS_read, "everyone"),
    sc!(SYS_write, "everyone"),
    sc!(SYS_readv, "io module, sockets"),
    sc!(SYS_writev, "io module, sockets"),
    sc!(SYS_pread64, "zipimport, numpy.memmap, sqlite3"),
    sc!(SYS_pwrite64, "sqlite3, numpy.memmap"),
    sc!(SYS_preadv, "os.preadv"),
    sc!(SYS_pwritev, "os.pwritev"),
    sc!(SYS_preadv2, "os.preadv"),
    sc!(SYS_pwritev2, "os.pwritev"),
    sc!(SYS_lseek, "every seekable file object"),
    sc!(SYS_fstat, "every open (buffer sizing)"),
    sc!(SYS_newfstatat, "os.stat, import machinery (glibc's stat)"),
    sc!(SYS_statx, "newer glibc's stat, os.stat"),
    sc!(SYS_statfs, "os.statvfs, glibc probing /dev/shm"),
    sc!(SYS_fstatfs, "os.fstatvfs, glibc"),
    sc!(SYS_faccessat, "os.access, shutil.which"),
    sc!(SYS_faccessat2, "glibc 2.33+ access/faccessat"),
    sc!(
        SYS_getdents64,
        "os.listdir, os.scandir, glob, import machinery"
    ),
    sc!(SYS_getcwd, "os.getcwd, pathlib"),
    sc!(SYS_chdir, "os.chdir"),
    sc!(SYS_fchdir, "os.fchdir, shutil.rmtree"),
    sc!(SYS_readlinkat, "os.readlink, os.path.realpath"),
    sc!(SYS_mkdirat, "os.mkdir (Landlock decides where)"),
    sc!(
        SYS_unlinkat,
        "os.remove, os.rmdir, tempfile cleanup (Landlock decides where)"
    ),
    sc!(SYS_renameat, "os.rename (Landlock decides where)"),
    sc!(
        SYS_renameat2,
        "os.rename on newer glibc (Landlock decides where)"
    ),
    sc!(SYS_linkat, "os.link (Landlock decides where)"),
    sc!(SYS_symlinkat, "os.symlink (Landlock decides where)"),
    sc!(
        SYS_mknodat,
        "os.mknod of a regular file (FIFOs, devices and socket nodes are refused below)"
    ),
    sc!(SYS_fchmod, "os.chmod on descriptors, shutil.copymode"),
    sc!(SYS_fchmodat, "os.chmod"),
    sc!(
        SYS_fchmodat2,
        "os.chmod with follow_symlinks=False on newer glibc"
    ),
    sc!(
        SYS_fchown,
        "shutil.chown (without capabilities only to one's own ids)"
    ),
    sc!(
        SYS_fchownat,
        "os.chown (without capabilities only to one's own ids)"
    ),
    sc!(SYS_utimensat, "os.utime, shutil.copystat"),
    sc!(SYS_truncate, "os.truncate"),
    sc!(SYS_ftruncate, "file.truncate, mode 'w' opens, numpy.memmap"),
    sc!(SYS_fallocate, "os.posix_fallocate"),
    sc!(SYS_fadvise64, "os.posix_fadvise"),
    sc!(SYS_readahead, "glibc and numpy's file readers"),
    sc!(SYS_fsync, "os.fsync, sqlite3"),
    sc!(SYS_fdatasync, "os.fdatasync, sqlite3"),
    sc!(SYS_sync_file_range, "sqlite3 and databases"),
    sc!(
        SYS_flock,
        "fcntl.flock, sqlite3, matplotlib's font cache lock"
    ),
    sc!(SYS_fcntl, "everyone: descriptor flags, locks"),
    sc!(
        SYS_ioctl,
        "isatty (TCGETS), FIONREAD, FIONBIO; TIOCSTI/TIOCLINUX are denied below"
    ),
    sc!(SYS_dup, "os.dup, subprocess"),
    sc!(SYS_dup3, "os.dup2, subprocess"),
    sc!(SYS_pipe2, "os.pipe, subprocess, multiprocessing"),
    sc!(SYS_copy_file_range, "shutil.copyfile (Python 3.8+)"),
    sc!(SYS_sendfile, "shutil.copyfile, socket.sendfile"),
    sc!(SYS_splice, "shutil fast copies on some paths"),
    sc!(SYS_getxattr, "shutil.copystat (xattr copy)"),
    sc!(SYS_lgetxattr, "shutil.copystat (xattr copy)"),
    sc!(SYS_fgetxattr, "shutil.copystat (xattr copy)"),
    sc!(SYS_listxattr, "shutil.copystat (xattr copy)"),
    sc!(SYS_llistxattr, "shutil.copystat (xattr copy)"),
    sc!(SYS_flistxattr, "shutil.copystat (xattr copy)"),
    sc!(
        SYS_setxattr,
        "shutil.copystat (xattr copy; Landlock decides where)"
    ),
    sc!(
        SYS_lsetxattr,
        "shutil.copystat (xattr copy; Landlock decides where)"
    ),
    sc!(
        SYS_fsetxattr,
        "shutil.copystat (xattr copy; Landlock decides where)"
    ),
    sc!(SYS_removexattr, "os.removexattr"),
    sc!(SYS_fremovexattr, "os.removexattr"),
    sc!(SYS_umask, "os.umask, tempfile"),
    // Waiting and events
    sc!(SYS_ppoll, "select module, subprocess.communicate, asyncio"),
    sc!(SYS_pselect6, "select.select"),
    sc!(SYS_epoll_create1, "asyncio, selectors"),
    sc!(SYS_epoll_ctl, "asyncio, selectors"),
    sc!(SYS_epoll_pwait, "asyncio, selectors"),
    sc!(SYS_epoll_pwait2, "selectors on newer glibc"),
    sc!(
        SYS_eventfd2,
        "asyncio self-pipe alternatives, OpenMP runtimes"
    ),
    sc!(SYS_timerfd_create, "event loops"),
    sc!(SYS_timerfd_settime, "event loops"),
    sc!(SYS_timerfd_gettime, "event loops"),
    sc!(SYS_signalfd4, "event loops"),
    sc!(SYS_futex, "threads, locks, the GIL"),
    sc!(SYS_futex_waitv, "newer threading runtimes"),
    sc!(SYS_set_robust_list, "glibc thread start"),
    sc!(SYS_get_robust_list, "glibc robust mutexes"),
    sc!(SYS_nanosleep, "time.sleep on older glibc"),
    sc!(SYS_clock_nanosleep, "time.sleep"),
    sc!(
        SYS_clock_gettime,
        "time.time, time.monotonic (when the vDSO is not used)"
    ),
    sc!(SYS_clock_getres, "time.get_clock_info"),
    sc!(SYS_gettimeofday, "old code paths of time.time"),
    sc!(SYS_getitimer, "signal.getitimer"),
    sc!(SYS_setitimer, "signal.setitimer (timeouts in libraries)"),
    sc!(SYS_timer_settime, "POSIX timers"),
    sc!(SYS_timer_gettime, "POSIX timers"),
    sc!(SYS_timer_getoverrun, "POSIX timers"),
    sc!(SYS_timer_delete, "POSIX timers"),
    sc!(SYS_sched_yield, "threads, spin locks (OpenBLAS)"),
    sc!(
        SYS_sched_getaffinity,
        "os.cpu_count fallback, os.sched_getaffinity, OpenBLAS"
    ),
    sc!(
        SYS_sched_setaffinity,
        "OpenBLAS/OpenMP thread pinning (own threads only)"
    ),
    sc!(SYS_sched_getparam, "os.sched_getparam"),
    sc!(
        SYS_sched_getscheduler,
        "os.sched_getscheduler, OpenMP runtimes"
    ),
    sc!(SYS_sched_get_priority_max, "threading runtimes"),
    sc!(SYS_sched_get_priority_min, "threading runtimes"),
    sc!(SYS_sched_getattr, "threading runtimes"),
    sc!(SYS_getcpu, "glibc sched_getcpu, OpenMP runtimes"),
    sc!(
        SYS_restart_syscall,
        "the kernel restarting interrupted sleeps"
    ),
    // Processes and threads (all confined to the jail's pid namespace)
    sc!(
        SYS_clone,
        "threads and fork (namespace flags are denied below)"
    ),
    sc!(
        SYS_execve,
        "subprocess, multiprocessing's spawn (Landlock limits what may run)"
    ),
    sc!(SYS_execveat, "fexecve (Landlock limits what may run)"),
    sc!(SYS_exit, "thread exit"),
    sc!(SYS_exit_group, "process exit"),
    sc!(SYS_wait4, "os.waitpid, subprocess"),
    sc!(SYS_waitid, "os.waitid, subprocess"),
    sc!(
        SYS_kill,
        "os.kill, subprocess.terminate (pid namespace and Landlock scope confine it)"
    ),
    sc!(SYS_tgkill, "signals to threads, faulthandler"),
    sc!(SYS_tkill, "signals to threads"),
    sc!(SYS_pidfd_open, "subprocess on newer Pythons"),
    sc!(SYS_pidfd_send_signal, "subprocess on newer Pythons"),
    sc!(
        SYS_rt_sigaction,
        "signal module, the interpreter's own handlers"
    ),
    sc!(SYS_rt_sigprocmask, "threads, signal.pthread_sigmask"),
    sc!(SYS_rt_sigreturn, "return from every signal handler"),
    sc!(SYS_rt_sigsuspend, "signal.pause variants"),
    sc!(SYS_rt_sigpending, "signal.sigpending"),
    sc!(SYS_rt_sigtimedwait, "signal.sigtimedwait"),
    sc!(SYS_sigaltstack, "faulthandler, stack overflow handling"),
    sc!(SYS_set_tid_address, "glibc thread start"),
    sc!(SYS_rseq, "glibc 2.35+ restartable sequences"),
    sc!(
        SYS_prctl,
        "thread names, PR_SET_PDEATHSIG; privileged options fail without capabilities"
    ),
    sc!(
        SYS_seccomp,
        "warden installs its later filters; a program can only add restrictions"
    ),
    sc!(
        SYS_landlock_create_ruleset,
        "warden's bootstrap adds an execute-nothing domain (the exec ban); only adds restrictions"
    ),
    sc!(
        SYS_landlock_restrict_self,
        "warden's bootstrap adds an execute-nothing domain (the exec ban); only adds restrictions"
    ),
    sc!(SYS_capget, "libraries checking their (empty) capabilities"),
    sc!(SYS_capset, "dropping capabilities (there are none to gain)"),
    sc!(SYS_getpid, "everyone"),
    sc!(SYS_getppid, "os.getppid, multiprocessing"),
    sc!(SYS_gettid, "threading.get_native_id, logging"),
    sc!(SYS_getuid, "os.getuid, getpass"),
    sc!(SYS_geteuid, "os.geteuid"),
    sc!(SYS_getgid, "os.getgid"),
    sc!(SYS_getegid, "os.getegid"),
    sc!(SYS_getresuid, "os.getresuid"),
    sc!(SYS_getresgid, "os.getresgid"),
    sc!(SYS_getgroups, "os.getgroups"),
    sc!(
        SYS_setuid,
        "os.setuid to one's own id (no capabilities to do more)"
    ),
    sc!(SYS_setgid, "os.setgid to one's own id"),
    sc!(SYS_setreuid, "os.setreuid to one's own id"),
    sc!(SYS_setregid, "os.setregid to one's own id"),
    sc!(SYS_setresuid, "glibc's setxid to one's own id"),
    sc!(SYS_setresgid, "glibc's setxid to one's own id"),
    sc!(
        SYS_setsid,
        "subprocess start_new_session, daemons (confined to the namespace)"
    ),
    sc!(SYS_setpgid, "subprocess process_group"),
    sc!(SYS_getpgid, "os.getpgid"),
    sc!(SYS_getsid, "os.getsid"),
    sc!(SYS_getpriority, "os.getpriority"),
    sc!(
        SYS_setpriority,
        "os.nice (lowering priority only, without capabilities)"
    ),
    sc!(SYS_getrusage, "resource.getrusage, time.process_time"),
    sc!(SYS_times, "os.times"),
    sc!(
        SYS_prlimit64,
        "resource.getrlimit/setrlimit (limits can only be lowered)"
    ),
    sc!(SYS_getrlimit, "resource.getrlimit on older glibc"),
    sc!(
        SYS_setrlimit,
        "resource.setrlimit on older glibc (lowering only)"
    ),
    sc!(SYS_uname, "platform, os.uname, sysconfig"),
    sc!(SYS_sysinfo, "glibc's get_phys_pages, psutil-like code"),
    sc!(SYS_getrandom, "os.urandom, hash randomisation, secrets"),
    // Local IPC (sockets: only AF_UNIX, enforced below; the network namespace is empty anyway)
    sc!(
        SYS_socket,
        "multiprocessing, asyncio self-pipe (only AF_UNIX is admitted)"
    ),
    sc!(SYS_socketpair, "multiprocessing, asyncio, subprocess"),
    sc!(SYS_bind, "multiprocessing's listener on a Unix socket"),
    sc!(SYS_listen, "multiprocessing's listener"),
    sc!(SYS_accept, "multiprocessing's listener"),
    sc!(SYS_accept4, "multiprocessing's listener"),
    sc!(SYS_connect, "multiprocessing's client"),
    sc!(SYS_shutdown, "socket.shutdown"),
    sc!(SYS_sendto, "socket.send"),
    sc!(SYS_recvfrom, "socket.recv"),
    sc!(SYS_sendmsg, "multiprocessing (descriptor passing)"),
    sc!(SYS_recvmsg, "multiprocessing (descriptor passing)"),
    sc!(SYS_sendmmsg, "socket batch sends"),
    sc!(SYS_recvmmsg, "socket batch receives"),
    sc!(SYS_getsockname, "socket.getsockname"),
    sc!(SYS_getpeername, "socket.getpeername"),
    sc!(SYS_getsockopt, "socket.getsockopt, asyncio"),
    sc!(SYS_setsockopt, "socket.setsockopt, asyncio"),
    sc!(
        SYS_shmget,
        "System V shared memory (private to the jail's IPC namespace)"
    ),
    sc!(SYS_shmat, "System V shared memory"),
    sc!(SYS_shmdt, "System V shared memory"),
    sc!(SYS_shmctl, "System V shared memory"),
    sc!(SYS_semget, "System V semaphores (private IPC namespace)"),
    sc!(SYS_semop, "System V semaphores"),
    sc!(SYS_semtimedop, "System V semaphores"),
    sc!(SYS_semctl, "System V semaphores"),
];

/// Legacy calls that only exist on x86_64 and that glibc or old binaries still use there.
#[cfg(target_arch = "x86_64")]
pub const ALLOWED_X86_64: &[Syscall] = &[
    sc!(SYS_arch_prctl, "glibc thread-local storage setup"),
    sc!(SYS_open, "old binaries and libraries calling open directly"),
    sc!(SYS_stat, "old binaries' stat"),
    sc!(SYS_lstat, "old binaries' lstat"),
    sc!(SYS_access, "old binaries' access"),
    sc!(SYS_poll, "select.poll"),
    sc!(SYS_select, "old binaries' select"),
    sc!(SYS_pipe, "old binaries' pipe"),
    sc!(SYS_dup2, "old binaries' dup2"),
    sc!(SYS_fork, "old binaries' fork"),
    sc!(SYS_vfork, "posix_spawn fallbacks"),
    sc!(SYS_getdents, "old binaries' readdir"),
    sc!(SYS_readlink, "old binaries' readlink"),
    sc!(SYS_mkdir, "old binaries' mkdir"),
    sc!(SYS_rmdir, "old binaries' rmdir"),
    sc!(SYS_unlink, "old binaries' unlink"),
    sc!(SYS_rename, "old binaries' rename"),
    sc!(SYS_link, "old binaries' link"),
    sc!(SYS_symlink, "old binaries' symlink"),
    sc!(SYS_chmod, "old binaries' chmod"),
    sc!(SYS_chown, "old binaries' chown"),
    sc!(SYS_lchown, "old binaries' lchown"),
    sc!(SYS_creat, "old binaries' creat"),
    sc!(SYS_utime, "old binaries' utime"),
    sc!(SYS_utimes, "old binaries' utimes"),
    sc!(SYS_futimesat, "old binaries' futimesat"),
    sc!(SYS_epoll_create, "old binaries' epoll"),
    sc!(SYS_epoll_wait, "old binaries' epoll"),
    sc!(SYS_eventfd, "old binaries' eventfd"),
    sc!(SYS_signalfd, "old binaries' signalfd"),
    sc!(SYS_alarm, "signal.alarm"),
    sc!(SYS_pause, "signal.pause"),
    sc!(SYS_time, "old binaries' time"),
    sc!(SYS_getpgrp, "os.getpgrp"),
];

#[cfg(not(target_arch = "x86_64"))]
pub const ALLOWED_X86_64: &[Syscall] = &[];

/// Calls refused outright with EPERM, and why.
pub const DENIED: &[Syscall] = &[
    sc!(
        SYS_ptrace,
        "reads and writes other processes; PTRACE_TRACEME stops could hang the jail's init"
    ),
    sc!(SYS_process_vm_readv, "reads another process's memory"),
    sc!(SYS_process_vm_writev, "writes another process's memory"),
    sc!(SYS_kcmp, "probes other processes' kernel objects"),
    sc!(SYS_pidfd_getfd, "steals descriptors from other processes"),
    sc!(SYS_mount, "changes the file system tree"),
    sc!(SYS_umount2, "uncovers what the jail hides"),
    sc!(SYS_mount_setattr, "new mount API"),
    sc!(SYS_move_mount, "new mount API"),
    sc!(SYS_open_tree, "new mount API"),
    sc!(SYS_fsopen, "new mount API"),
    sc!(SYS_fsconfig, "new mount API"),
    sc!(SYS_fsmount, "new mount API"),
    sc!(SYS_fspick, "new mount API"),
    sc!(SYS_pivot_root, "changes the root"),
    sc!(SYS_chroot, "changes the root"),
    sc!(
        SYS_unshare,
        "new namespaces are the first step of most container escapes"
    ),
    sc!(SYS_setns, "joins other namespaces"),
    sc!(SYS_bpf, "kernel attack surface, reads kernel memory"),
    sc!(SYS_keyctl, "the kernel keyring is not namespaced"),
    sc!(SYS_add_key, "the kernel keyring is not namespaced"),
    sc!(SYS_request_key, "the kernel keyring is not namespaced"),
    sc!(SYS_kexec_load, "replaces the kernel"),
    sc!(SYS_kexec_file_load, "replaces the kernel"),
    sc!(SYS_init_module, "loads kernel code"),
    sc!(SYS_finit_module, "loads kernel code"),
    sc!(SYS_delete_module, "unloads kernel code"),
    sc!(SYS_perf_event_open, "kernel attack surface, side channels"),
    sc!(SYS_userfaultfd, "makes kernel races exploitable"),
    sc!(
        SYS_io_uring_setup,
        "bypasses seccomp for the operations it runs; large attack surface"
    ),
    sc!(
        SYS_io_uring_enter,
        "bypasses seccomp for the operations it runs"
    ),
    sc!(
        SYS_io_uring_register,
        "bypasses seccomp for the operations it runs"
    ),
    sc!(SYS_clock_settime, "sets the host's clock"),
    sc!(SYS_clock_adjtime, "adjusts the host's clock"),
    sc!(SYS_settimeofday, "sets the host's clock"),
    sc!(SYS_adjtimex, "adjusts the host's clock"),
    sc!(SYS_sethostname, "hostname setting"),
    sc!(SYS_setdomainname, "domain name setting"),
    sc!(SYS_reboot, "reboots the host"),
    sc!(SYS_swapon, "host swap"),
    sc!(SYS_swapoff, "host swap"),
    sc!(SYS_acct, "process accounting of the host"),
    sc!(
        SYS_open_by_handle_at,
        "opens files by handle, bypassing paths (the shocker escape)"
    ),
    sc!(SYS_name_to_handle_at, "file handles for open_by_handle_at"),
    sc!(SYS_quotactl, "host quotas"),
    sc!(SYS_syslog, "reads the kernel log"),
    sc!(SYS_vhangup, "hangs up terminals"),
    sc!(
        SYS_personality,
        "READ_IMPLIES_EXEC and ADDR_NO_RANDOMIZE weaken the process"
    ),
    sc!(SYS_fanotify_init, "watches the whole file system"),
    // Issue 25: budgets the kernel counts per uid, which runs forked from one template share.
    sc!(
        SYS_inotify_init1,
        "a watch on a bound host file sees host activity; instances are a per-uid budget runs share"
    ),
    sc!(SYS_inotify_add_watch, "see inotify_init1"),
    sc!(SYS_inotify_rm_watch, "see inotify_init1"),
    sc!(
        SYS_timer_create,
        "each POSIX timer holds a queued signal of the per-uid budget runs share"
    ),
    sc!(
        SYS_rt_sigqueueinfo,
        "queued signals are a per-uid budget runs share (rt signals by kill are refused below)"
    ),
    sc!(SYS_rt_tgsigqueueinfo, "see rt_sigqueueinfo"),
    sc!(SYS_migrate_pages, "moves other processes' memory"),
    sc!(SYS_move_pages, "moves other processes' memory"),
];

/// x86_64-only calls refused with EPERM.
#[cfg(target_arch = "x86_64")]
pub const DENIED_X86_64: &[Syscall] = &[
    sc!(SYS_inotify_init, "see inotify_init1"),
    sc!(SYS_iopl, "raw I/O port access"),
    sc!(SYS_ioperm, "raw I/O port access"),
    sc!(SYS_uselib, "obsolete loader call"),
    sc!(SYS_ustat, "obsolete"),
    sc!(SYS_sysfs, "obsolete"),
    sc!(
        SYS_modify_ldt,
        "kernel attack surface, not needed by 64-bit code"
    ),
];

#[cfg(not(target_arch = "x86_64"))]
pub const DENIED_X86_64: &[Syscall] = &[];

/// Namespace flags refused on `clone`.
const NAMESPACE_FLAGS: [(&str, libc::c_int); 7] = [
    ("CLONE_NEWNS", libc::CLONE_NEWNS),
    ("CLONE_NEWUSER", libc::CLONE_NEWUSER),
    ("CLONE_NEWPID", libc::CLONE_NEWPID),
    ("CLONE_NEWNET", libc::CLONE_NEWNET),
    ("CLONE_NEWIPC", libc::CLONE_NEWIPC),
    ("CLONE_NEWUTS", libc::CLONE_NEWUTS),
    ("CLONE_NEWCGROUP", libc::CLONE_NEWCGROUP),
];

/// Terminal ioctls refused (the request is compared on its low 32 bits, as the kernel reads it).
const DENIED_IOCTLS: [(&str, u64); 2] =
    [("TIOCSTI", libc::TIOCSTI), ("TIOCLINUX", libc::TIOCLINUX)];

/// First call number of the x32 ABI.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// A call of a plan's lists, with who needs it or why it is refused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Entry {
    pub name: &'static str,
    pub why: &'static str,
}

/// A description of the filters, for plans and reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SeccompPlan {
    /// Calls admitted; any other fails with ENOSYS.
    pub allowed: Vec<Entry>,
    /// Calls refused with EPERM.
    pub denied: Vec<Entry>,
    /// Argument rules refused with EPERM.
    pub denied_arguments: Vec<String>,
    /// Calls answered with ENOSYS on purpose.
    pub enosys: Vec<&'static str>,
    /// x32 call numbers are refused with EPERM.
    pub deny_x32: bool,
    /// Calls this run refuses on top of the profile (a third filter), each with why.
    pub refused: Vec<Refused>,
    /// Calls refused because the rules file does not need them (issue 24: the kernel mirrors the
    /// policy), in the same third filter.
    pub mirrored: Vec<MirroredRefusal>,
}

/// A refusal a plan adds to the default profile for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Refusal {
    /// `fork`, `vfork` and `clone` without `CLONE_THREAD` fail with EAGAIN (Python raises
    /// `BlockingIOError`, as under a pids limit); threads are created as before.
    ProcessCreation,
    /// `memfd_create` fails with EPERM (libffi falls back to other trampolines; ctypes callbacks work).
    MemfdCreate,
    /// `shmget` fails with EPERM.
    SysvShm,
}

/// A [`Refusal`] and why this run has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Refused {
    pub refusal: Refusal,
    pub why: &'static str,
}

impl Syscall {
    fn entry(&self) -> Entry {
        Entry {
            name: self.name.strip_prefix("SYS_").unwrap_or(self.name),
            why: self.why,
        }
    }
}

impl SeccompPlan {
    /// The default profile: what CPython and the data stack need.
    pub fn default_profile() -> Self {
        let mut denied_arguments: Vec<String> = NAMESPACE_FLAGS
            .iter()
            .map(|(name, _)| format!("clone with {name}"))
            .collect();
        denied_arguments.extend(
            DENIED_IOCTLS
                .iter()
                .map(|(name, _)| format!("ioctl {name}")),
        );
        denied_arguments.push("socket with a family other than AF_UNIX".into());
        denied_arguments.push("socketpair with a family other than AF_UNIX".into());
        denied_arguments.extend(
            DEVICE_NODE_TYPES
                .iter()
                .map(|(name, _)| format!("mknodat of a {name}")),
        );
        denied_arguments.extend(
            SOCKET_BUFFER_OPTIONS
                .iter()
                .map(|(name, _)| format!("setsockopt SOL_SOCKET {name}")),
        );
        denied_arguments.extend(
            SIGNAL_SENDERS
                .iter()
                .map(|(name, _, _)| format!("{name} of a real-time signal")),
        );
        denied_arguments.extend(DENIED_FCNTL.iter().map(|(name, _)| format!("fcntl {name}")));
        SeccompPlan {
            allowed: ALLOWED
                .iter()
                .chain(ALLOWED_X86_64)
                .map(Syscall::entry)
                .collect(),
            denied: DENIED
                .iter()
                .chain(DENIED_X86_64)
                .map(Syscall::entry)
                .collect(),
            denied_arguments,
            enosys: vec!["clone3"],
            deny_x32: true,
            refused: Vec::new(),
            mirrored: Vec::new(),
        }
    }
}

fn target_arch() -> Result<TargetArch, JailError> {
    std::env::consts::ARCH.try_into().map_err(|_| {
        JailError::Config(format!(
            "seccomp filters are not supported on {}",
            std::env::consts::ARCH
        ))
    })
}

fn compile_error(filter: &str) -> impl Fn(seccompiler::BackendError) -> JailError + '_ {
    move |err| JailError::Config(format!("cannot compile the seccomp {filter} filter: {err}"))
}

fn condition(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, JailError> {
    SeccompCondition::new(arg, len, op, value).map_err(compile_error("deny"))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, JailError> {
    SeccompRule::new(conditions).map_err(compile_error("deny"))
}

/// Compiles the filters of `plan`, in installation order (parent side, before cloning): the number
/// filter, the argument filter, and the run's own refusals when it has any.
pub fn compile(plan: &SeccompPlan) -> Result<Vec<BpfProgram>, JailError> {
    let mut filters = compile_profile()?;
    let calls: Vec<(u32, When, u32)> = plan
        .refused
        .iter()
        .flat_map(|r| refused_calls(r.refusal))
        .chain(plan.mirrored.iter().flat_map(|m| mirrored_calls(m.refusal)))
        .collect();
    if !calls.is_empty() {
        filters.push(refusal_filter_of(audit_arch()?, &calls));
    }
    Ok(filters)
}

// --- Socket buffer sizes (issue 25) -------------------------------------------------------------
// A Unix socket's queued data is kernel memory the memory cgroup does not bound (and an
// unprivileged jail has no cgroup at all): with `SO_SNDBUF` raised to `wmem_max` on every socket a
// program can open, queued buffers reached ~1 GiB under a 256 MiB limit. Refusing the calls that
// size buffers leaves every socket at the kernel's default (`net.core.wmem_default` /
// `rmem_default`), so what a run can queue is bounded by its open-file limit times that default
// (docs/jail.md, "Sessions and pooled runs").

/// `setsockopt` options refused with EPERM: the buffer sizes (the `FORCE` variants need
/// `CAP_NET_ADMIN` anyway).
const SOCKET_BUFFER_OPTIONS: [(&str, libc::c_int); 4] = [
    ("SO_SNDBUF", libc::SO_SNDBUF),
    ("SO_RCVBUF", libc::SO_RCVBUF),
    ("SO_SNDBUFFORCE", libc::SO_SNDBUFFORCE),
    ("SO_RCVBUFFORCE", libc::SO_RCVBUFFORCE),
];

/// The argument rules refusing [`SOCKET_BUFFER_OPTIONS`] at `SOL_SOCKET`.
fn socket_buffer_rules() -> Result<Vec<SeccompRule>, JailError> {
    SOCKET_BUFFER_OPTIONS
        .iter()
        .map(|(_, option)| {
            rule(vec![
                condition(
                    1,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    libc::SOL_SOCKET as u64,
                )?,
                condition(2, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, *option as u64)?,
            ])
        })
        .collect()
}

// --- End of socket buffer sizes ----------------------------------------------------------------

// --- Budgets runs share (issue 25) --------------------------------------------------------------
// Runs forked from one template share its user namespace and host uid, so whatever the kernel
// counts per uid is one budget for all of them: a run holding it would leave a concurrent run of
// another tenant with EAGAIN. Queued real-time signals are one such count (`RLIMIT_SIGPENDING`);
// ordinary signals are always queued whatever the count, so refusing every way to queue a real-time
// one (`rt_sigqueueinfo`, `timer_create` above; `kill` and its kin with a real-time number, and
// `F_SETSIG`, here) leaves nothing a program can take from another run. `F_NOTIFY` (dnotify) would
// watch a bound host directory, as inotify would; `F_SETPIPE_SZ` would grow pipes into the per-uid
// pipe budget (each pipe stays at the kernel's default, 64 KiB).

/// The first real-time signal number (the kernel's `SIGRTMIN`; glibc keeps 32 and 33 for itself).
const FIRST_REALTIME_SIGNAL: u64 = 32;

/// Calls that send a signal, with the index of the signal-number argument.
const SIGNAL_SENDERS: [(&str, i64, u8); 4] = [
    ("kill", libc::SYS_kill, 1),
    ("tkill", libc::SYS_tkill, 1),
    ("tgkill", libc::SYS_tgkill, 2),
    ("pidfd_send_signal", libc::SYS_pidfd_send_signal, 1),
];

/// `F_SETSIG` (`fcntl.h`; the same number on every Linux architecture; not in the `libc` crate).
const F_SETSIG: libc::c_int = 10;

/// `fcntl` commands refused with EPERM.
const DENIED_FCNTL: [(&str, libc::c_int); 3] = [
    ("F_NOTIFY", libc::F_NOTIFY),
    ("F_SETSIG", F_SETSIG),
    ("F_SETPIPE_SZ", libc::F_SETPIPE_SZ),
];

/// EPERM for a real-time signal number at argument `arg`.
fn realtime_signal_rules(arg: u8) -> Result<Vec<SeccompRule>, JailError> {
    Ok(vec![rule(vec![condition(
        arg,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ge,
        FIRST_REALTIME_SIGNAL,
    )?])?])
}

/// EPERM for the [`DENIED_FCNTL`] commands (argument 1, compared on 32 bits as the kernel reads it).
fn fcntl_rules() -> Result<Vec<SeccompRule>, JailError> {
    DENIED_FCNTL
        .iter()
        .map(|&(_, command)| {
            rule(vec![condition(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                command as u64,
            )?])
        })
        .collect()
}

// --- End of budgets runs share ------------------------------------------------------------------

/// The number and argument filters of the default profile.
fn compile_profile() -> Result<Vec<BpfProgram>, JailError> {
    let arch = target_arch()?;
    let numbers = number_filter(
        audit_arch()?,
        cfg!(target_arch = "x86_64"),
        ALLOWED.iter().chain(ALLOWED_X86_64).map(|s| s.nr),
        DENIED.iter().chain(DENIED_X86_64).map(|s| s.nr),
    )?;
    let mut deny_rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let mut clone_rules = Vec::new();
    for (_, flag) in NAMESPACE_FLAGS {
        let flag = flag as u64;
        clone_rules.push(rule(vec![condition(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )?])?);
    }
    deny_rules.insert(libc::SYS_clone, clone_rules);
    let mut ioctl_rules = Vec::new();
    for (_, request) in DENIED_IOCTLS {
        ioctl_rules.push(rule(vec![condition(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            request,
        )?])?);
    }
    deny_rules.insert(libc::SYS_ioctl, ioctl_rules);
    let not_unix = || -> Result<Vec<SeccompRule>, JailError> {
        Ok(vec![rule(vec![condition(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])?])
    };
    deny_rules.insert(libc::SYS_socket, not_unix()?);
    deny_rules.insert(libc::SYS_socketpair, not_unix()?);
    deny_rules.insert(libc::SYS_mknodat, device_node_rules()?);
    deny_rules.insert(libc::SYS_setsockopt, socket_buffer_rules()?);
    for (_, nr, arg) in SIGNAL_SENDERS {
        deny_rules.insert(nr, realtime_signal_rules(arg)?);
    }
    deny_rules.insert(libc::SYS_fcntl, fcntl_rules()?);
    let arguments = SeccompFilter::new(
        deny_rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(compile_error("arguments"))?;
    let arguments: BpfProgram = arguments.try_into().map_err(compile_error("arguments"))?;
    Ok(vec![numbers, arguments])
}

fn audit_arch() -> Result<u32, JailError> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(0xC000_003E),
        "aarch64" => Ok(0xC000_00B7),
        other => Err(JailError::Config(format!(
            "seccomp filters are not supported on {other}"
        ))),
    }
}

// Classic BPF opcodes (linux/bpf_common.h).
const BPF_LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const BPF_JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JGT_K: u16 = 0x25; // BPF_JMP | BPF_JGT | BPF_K
const BPF_JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const BPF_RET_K: u16 = 0x06; // BPF_RET | BPF_K
const DATA_NR: u32 = 0; // offsetof(struct seccomp_data, nr)
const DATA_ARCH: u32 = 4; // offsetof(struct seccomp_data, arch)

const RET_ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
const RET_EPERM: u32 = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
const RET_ENOSYS: u32 = libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32;
const RET_KILL: u32 = libc::SECCOMP_RET_KILL_PROCESS;

/// The number filter: `allowed` → ALLOW, `denied` → EPERM, x32 numbers → EPERM (when `x32`), other
/// architectures → kill, everything else → ENOSYS. Runs of consecutive numbers with the same answer
/// become one range check of two instructions.
fn number_filter(
    audit_arch: u32,
    x32: bool,
    allowed: impl Iterator<Item = i64>,
    denied: impl Iterator<Item = i64>,
) -> Result<BpfProgram, JailError> {
    use seccompiler::sock_filter;
    let mut answers: BTreeMap<u32, u32> = BTreeMap::new();
    for (numbers, answer) in [
        (allowed.collect::<Vec<_>>(), RET_ALLOW),
        (denied.collect::<Vec<_>>(), RET_EPERM),
    ] {
        for nr in numbers {
            let nr = u32::try_from(nr)
                .map_err(|_| JailError::Config(format!("bad syscall number {nr}")))?;
            if answers
                .insert(nr, answer)
                .is_some_and(|previous| previous != answer)
            {
                return Err(JailError::Config(format!(
                    "syscall {nr} is both allowed and denied"
                )));
            }
        }
    }
    // (first, last, answer) runs.
    let mut ranges: Vec<(u32, u32, u32)> = Vec::new();
    for (&nr, &answer) in &answers {
        match ranges.last_mut() {
            Some((_, last, previous)) if *last + 1 == nr && *previous == answer => *last = nr,
            _ => ranges.push((nr, nr, answer)),
        }
    }
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let mut prog = vec![
        ins(BPF_LD_W_ABS, 0, 0, DATA_ARCH),
        ins(BPF_JEQ_K, 1, 0, audit_arch),
        ins(BPF_RET_K, 0, 0, RET_KILL),
        ins(BPF_LD_W_ABS, 0, 0, DATA_NR),
    ];
    // Labels at the end, in this order: ENOSYS, ALLOW, EPERM.
    let body = usize::from(x32) + 2 * ranges.len();
    let label_at = |answer: u32| match answer {
        RET_ALLOW => 1,
        RET_EPERM => 2,
        _ => 0,
    };
    let start = prog.len();
    let end = start + body; // index of the ENOSYS label
    let jump = |from: usize, answer: u32| -> Result<u8, JailError> {
        u8::try_from(end + label_at(answer) - (from + 1)).map_err(|_| {
            JailError::Config("the seccomp number filter is too long for classic BPF jumps".into())
        })
    };
    if x32 {
        let here = prog.len();
        prog.push(ins(BPF_JGE_K, jump(here, RET_EPERM)?, 0, X32_SYSCALL_BIT));
    }
    for &(first, last, answer) in &ranges {
        // Above this run: try the next run (the last run falls through to ENOSYS).
        prog.push(ins(BPF_JGT_K, 1, 0, last));
        // Within it, or below it (and so below every later run: ENOSYS).
        let here = prog.len();
        prog.push(ins(
            BPF_JGE_K,
            jump(here, answer)?,
            jump(here, RET_ENOSYS)?,
            first,
        ));
    }
    prog.push(ins(BPF_RET_K, 0, 0, RET_ENOSYS));
    prog.push(ins(BPF_RET_K, 0, 0, RET_ALLOW));
    prog.push(ins(BPF_RET_K, 0, 0, RET_EPERM));
    Ok(prog)
}

const BPF_JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
/// Low 32 bits of the first argument (`offsetof(struct seccomp_data, args[0])`, little-endian).
const DATA_ARG0_LOW: u32 = 16;
/// Low 32 bits of the second argument.
const DATA_ARG1_LOW: u32 = 24;
const RET_EAGAIN: u32 = libc::SECCOMP_RET_ERRNO | libc::EAGAIN as u32;

/// Which calls of a number a refusal answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum When {
    /// Every call.
    Always,
    /// A `clone` without `CLONE_THREAD` (a thread always shares the memory: no new process).
    NotThread,
    /// A call whose second argument (low 32 bits) is one of these.
    Arg1In(&'static [u32]),
}

/// The calls behind each refusal: (number, which calls, the answer).
fn refused_calls(refusal: Refusal) -> Vec<(u32, When, u32)> {
    match refusal {
        Refusal::ProcessCreation => {
            let mut calls = vec![(libc::SYS_clone as u32, When::NotThread, RET_EAGAIN)];
            #[cfg(target_arch = "x86_64")]
            calls.extend([
                (libc::SYS_fork as u32, When::Always, RET_EAGAIN),
                (libc::SYS_vfork as u32, When::Always, RET_EAGAIN),
            ]);
            calls
        }
        Refusal::MemfdCreate => vec![(libc::SYS_memfd_create as u32, When::Always, RET_EPERM)],
        Refusal::SysvShm => vec![(libc::SYS_shmget as u32, When::Always, RET_EPERM)],
    }
}

/// The refusal filter of `refusals`.
#[cfg(test)]
fn refusal_filter(audit_arch: u32, refusals: &[Refusal]) -> BpfProgram {
    let calls: Vec<(u32, When, u32)> = refusals.iter().flat_map(|r| refused_calls(*r)).collect();
    refusal_filter_of(audit_arch, &calls)
}

/// The refusal filter of `calls` (number, `clone` only, answer): a chain of number checks, each
/// leading to its answer (a `clone` is let through when `CLONE_THREAD` is in its flags: a thread
/// always shares the memory, so it is no new process). The kernel runs every filter and returns the
/// most severe answer; between two errnos, the later filter's, so these answers win over the
/// argument filter's EPERM.
fn refusal_filter_of(audit_arch: u32, calls: &[(u32, When, u32)]) -> BpfProgram {
    use seccompiler::sock_filter;
    let ins = |code, jt, jf, k| sock_filter { code, jt, jf, k };
    let n = calls.len();
    // 0: arch, 1: foreign → allow, 2: number, 3..3+n: checks, 3+n: allow, then the answers.
    let allow = 3 + n;
    let mut prog = vec![
        ins(BPF_LD_W_ABS, 0, 0, DATA_ARCH),
        ins(BPF_JEQ_K, 0, (allow - 2) as u8, audit_arch),
        ins(BPF_LD_W_ABS, 0, 0, DATA_NR),
    ];
    let mut answer_at = allow + 1;
    let mut answers = Vec::new();
    for (i, &(nr, when, answer)) in calls.iter().enumerate() {
        let here = 3 + i;
        prog.push(ins(BPF_JEQ_K, (answer_at - here - 1) as u8, 0, nr));
        match when {
            When::NotThread => {
                answers.push(ins(BPF_LD_W_ABS, 0, 0, DATA_ARG0_LOW));
                answers.push(ins(BPF_JSET_K, 0, 1, libc::CLONE_THREAD as u32));
                answers.push(ins(BPF_RET_K, 0, 0, RET_ALLOW));
                answers.push(ins(BPF_RET_K, 0, 0, answer));
                answer_at += 4;
            }
            When::Always => {
                answers.push(ins(BPF_RET_K, 0, 0, answer));
                answer_at += 1;
            }
            When::Arg1In(values) => {
                // load; one equality test per value, each jumping to the answer; else allow.
                let n = values.len();
                answers.push(ins(BPF_LD_W_ABS, 0, 0, DATA_ARG1_LOW));
                for (k, &value) in values.iter().enumerate() {
                    answers.push(ins(BPF_JEQ_K, (n - k) as u8, 0, value));
                }
                answers.push(ins(BPF_RET_K, 0, 0, RET_ALLOW));
                answers.push(ins(BPF_RET_K, 0, 0, answer));
                answer_at += n + 3;
            }
        }
    }
    prog.push(ins(BPF_RET_K, 0, 0, RET_ALLOW));
    prog.extend(answers);
    prog
}

// --- What the kernel mirrors of the rules file (issue 24) --------------------------------------
//
// Kept apart from the profile above: these refusals follow from the policy's intents, not from
// what CPython and the data stack need.

/// A refusal that follows from the rules file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mirrored {
    /// `socket` and `socketpair` fail with EPERM whatever the family (`AF_UNIX` included): the
    /// policy allows neither processes nor the network, and nothing warden runs in the program's
    /// process needs a socket once it is confined ([`crate::Intents::local_sockets`]).
    LocalSockets,
    /// `flock` and the `fcntl` commands that take a record lock succeed without locking anything
    /// (issue 25): a lock on a file the jail binds from the host (`/dev/null`, the interpreter)
    /// would be taken on the host's inode and refuse host processes their locks. The policy allows
    /// no processes, so no other process in the jail could be excluded by a lock either (sqlite3's
    /// locks are between processes; threads of one process share POSIX locks anyway).
    Locks,
}

/// A [`Mirrored`] refusal and the rule of the rules file it mirrors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MirroredRefusal {
    pub refusal: Mirrored,
    pub why: &'static str,
}

/// The calls behind a mirrored refusal, as [`refused_calls`] gives them.
fn mirrored_calls(refusal: Mirrored) -> Vec<(u32, When, u32)> {
    match refusal {
        Mirrored::LocalSockets => vec![
            (libc::SYS_socket as u32, When::Always, RET_EPERM),
            (libc::SYS_socketpair as u32, When::Always, RET_EPERM),
        ],
        Mirrored::Locks => vec![
            (libc::SYS_flock as u32, When::Always, RET_DONE),
            (
                libc::SYS_fcntl as u32,
                When::Arg1In(&LOCK_COMMANDS),
                RET_DONE,
            ),
        ],
    }
}

/// "Done" without doing anything: the call returns 0 (`SECCOMP_RET_ERRNO` with errno 0).
const RET_DONE: u32 = libc::SECCOMP_RET_ERRNO;

/// The `fcntl` commands that take a record lock.
const LOCK_COMMANDS: [u32; 4] = [
    libc::F_SETLK as u32,
    libc::F_SETLKW as u32,
    libc::F_OFD_SETLK as u32,
    libc::F_OFD_SETLKW as u32,
];

/// The file types `mknodat` may not create, whatever the policy: FIFOs and device and socket
/// nodes are no files a program's output or its write roots hold (a regular file, which
/// `os.mknod` makes by default, is created as `open` would).
const DEVICE_NODE_TYPES: [(&str, u32); 4] = [
    ("FIFO", libc::S_IFIFO),
    ("character device", libc::S_IFCHR),
    ("block device", libc::S_IFBLK),
    ("socket node", libc::S_IFSOCK),
];

/// EPERM for `mknodat` of a [`DEVICE_NODE_TYPES`] type (the mode, argument 2, compared under
/// `S_IFMT` on 32 bits). `mknod` itself is not on the allowlist (ENOSYS; glibc calls `mknodat`).
fn device_node_rules() -> Result<Vec<SeccompRule>, JailError> {
    DEVICE_NODE_TYPES
        .iter()
        .map(|&(_, kind)| {
            rule(vec![condition(
                2,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::MaskedEq(u64::from(libc::S_IFMT)),
                u64::from(kind),
            )?])
        })
        .collect()
}

/// Installs the filters on the calling thread (jail side, last step before `execve`).
pub fn apply(filters: &[BpfProgram]) -> Result<(), SysError> {
    for filter in filters {
        seccompiler::apply_filter(filter).map_err(|err| {
            let errno = match err {
                seccompiler::Error::Seccomp(io) => {
                    nix::errno::Errno::from_raw(io.raw_os_error().unwrap_or(libc::EINVAL))
                }
                _ => nix::errno::Errno::EINVAL,
            };
            SysError::new("seccomp(SECCOMP_SET_MODE_FILTER)", "", errno)
        })?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn nothing_is_both_allowed_and_denied() {
        for denied in DENIED.iter().chain(DENIED_X86_64) {
            assert!(
                !ALLOWED
                    .iter()
                    .chain(ALLOWED_X86_64)
                    .any(|allowed| allowed.nr == denied.nr),
                "{} is on both lists",
                denied.name
            );
        }
    }

    #[test]
    fn clone3_is_left_to_enosys() {
        assert!(!ALLOWED.iter().any(|s| s.nr == libc::SYS_clone3));
        assert!(!DENIED.iter().any(|s| s.nr == libc::SYS_clone3));
    }

    #[test]
    fn every_entry_says_who_needs_it() {
        for s in ALLOWED
            .iter()
            .chain(ALLOWED_X86_64)
            .chain(DENIED)
            .chain(DENIED_X86_64)
        {
            assert!(s.why.len() > 3, "{} has no reason", s.name);
        }
    }

    #[test]
    fn the_issue_deny_list_is_covered() {
        let plan = SeccompPlan::default_profile();
        for name in [
            "ptrace",
            "process_vm_readv",
            "process_vm_writev",
            "mount",
            "move_mount",
            "fsopen",
            "pivot_root",
            "chroot",
            "unshare",
            "setns",
            "bpf",
            "keyctl",
            "add_key",
            "request_key",
            "kexec_load",
            "init_module",
            "finit_module",
            "perf_event_open",
            "userfaultfd",
            "io_uring_setup",
            "clock_settime",
            "settimeofday",
            "sethostname",
            "reboot",
            "swapon",
            "acct",
        ] {
            assert!(
                plan.denied.iter().any(|entry| entry.name == name),
                "{name} is not denied"
            );
        }
    }

    #[test]
    fn the_filters_compile_small() {
        let filters = compile(&SeccompPlan::default_profile()).unwrap();
        assert_eq!(filters.len(), 2);
        assert!(
            filters[0].len() < 300,
            "number filter has {} instructions",
            filters[0].len()
        );
        assert!(
            filters[1].len() < 200,
            "argument filter has {} instructions",
            filters[1].len()
        );
    }

    /// A classic-BPF interpreter for the instructions the number filter uses.
    fn evaluate(prog: &[seccompiler::sock_filter], arch: u32, nr: u32) -> u32 {
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &prog[pc];
            pc += 1;
            match i.code {
                BPF_LD_W_ABS => acc = if i.k == DATA_ARCH { arch } else { nr },
                BPF_JEQ_K | BPF_JGT_K | BPF_JGE_K => {
                    let taken = match i.code {
                        BPF_JEQ_K => acc == i.k,
                        BPF_JGT_K => acc > i.k,
                        _ => acc >= i.k,
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                BPF_RET_K => return i.k,
                other => panic!("unexpected opcode {other:#x}"),
            }
        }
    }

    #[test]
    fn the_number_filter_answers_every_call_as_the_lists_say() {
        let arch = audit_arch().unwrap();
        let prog = &compile(&SeccompPlan::default_profile()).unwrap()[0];
        for s in ALLOWED.iter().chain(ALLOWED_X86_64) {
            assert_eq!(
                evaluate(prog, arch, s.nr as u32),
                RET_ALLOW,
                "{} is not allowed",
                s.name
            );
        }
        for s in DENIED.iter().chain(DENIED_X86_64) {
            assert_eq!(
                evaluate(prog, arch, s.nr as u32),
                RET_EPERM,
                "{} is not denied",
                s.name
            );
        }
        assert_eq!(evaluate(prog, arch, libc::SYS_clone3 as u32), RET_ENOSYS);
        assert_eq!(evaluate(prog, arch, 100_000), RET_ENOSYS);
        assert_eq!(
            evaluate(prog, arch + 1, libc::SYS_read as u32),
            RET_KILL,
            "a foreign architecture"
        );
        if cfg!(target_arch = "x86_64") {
            assert_eq!(
                evaluate(prog, arch, X32_SYSCALL_BIT | libc::SYS_read as u32),
                RET_EPERM
            );
        }
        let listed: std::collections::BTreeSet<u32> = ALLOWED
            .iter()
            .chain(ALLOWED_X86_64)
            .chain(DENIED)
            .chain(DENIED_X86_64)
            .map(|s| s.nr as u32)
            .collect();
        for nr in 0..1024 {
            if !listed.contains(&nr) {
                assert_eq!(evaluate(prog, arch, nr), RET_ENOSYS, "unlisted {nr}");
            }
        }
    }
    #[test]
    fn the_mirrored_refusals_stop_every_socket_and_nothing_else() {
        let arch = audit_arch().unwrap();
        let calls = mirrored_calls(Mirrored::LocalSockets);
        let prog = refusal_filter_of(arch, &calls);
        for nr in [libc::SYS_socket, libc::SYS_socketpair] {
            for family in [libc::AF_UNIX, libc::AF_INET, libc::AF_NETLINK] {
                assert_eq!(
                    run_with_arg(&prog, arch, nr as u32, family as u32),
                    RET_EPERM
                );
            }
        }
        for nr in [libc::SYS_read, libc::SYS_clone, libc::SYS_pipe2] {
            assert_eq!(run_with_arg(&prog, arch, nr as u32, 0), RET_ALLOW);
        }
        // In the run's one refusal filter, beside the budget's refusals.
        let mut plan = SeccompPlan::default_profile();
        plan.mirrored.push(MirroredRefusal {
            refusal: Mirrored::LocalSockets,
            why: "test",
        });
        assert_eq!(compile(&plan).unwrap().len(), 3);
        plan.refused.push(Refused {
            refusal: Refusal::SysvShm,
            why: "test",
        });
        assert_eq!(compile(&plan).unwrap().len(), 3);
    }

    #[test]
    fn locks_are_done_without_locking_and_other_fcntls_pass() {
        let arch = audit_arch().unwrap();
        let prog = refusal_filter_of(arch, &mirrored_calls(Mirrored::Locks));
        let fcntl = libc::SYS_fcntl as u32;
        for command in [
            libc::F_SETLK,
            libc::F_SETLKW,
            libc::F_OFD_SETLK,
            libc::F_OFD_SETLKW,
        ] {
            assert_eq!(
                run_with_args(&prog, arch, fcntl, [3, command as u32]),
                RET_DONE,
                "fcntl {command}"
            );
        }
        for command in [
            libc::F_GETFL,
            libc::F_SETFL,
            libc::F_GETLK,
            libc::F_DUPFD_CLOEXEC,
        ] {
            assert_eq!(
                run_with_args(&prog, arch, fcntl, [3, command as u32]),
                RET_ALLOW,
                "fcntl {command}"
            );
        }
        assert_eq!(
            run_with_args(
                &prog,
                arch,
                libc::SYS_flock as u32,
                [3, libc::LOCK_EX as u32]
            ),
            RET_DONE
        );
        assert_eq!(
            run_with_arg(&prog, arch, libc::SYS_read as u32, 3),
            RET_ALLOW
        );
        assert_eq!(
            RET_DONE & libc::SECCOMP_RET_DATA,
            0,
            "errno 0: the call returns 0"
        );
    }

    #[test]
    fn shared_budgets_are_refused_by_the_argument_filter() {
        let plan = SeccompPlan::default_profile();
        for rule in [
            "kill of a real-time signal",
            "tkill of a real-time signal",
            "tgkill of a real-time signal",
            "pidfd_send_signal of a real-time signal",
            "fcntl F_NOTIFY",
            "fcntl F_SETSIG",
            "fcntl F_SETPIPE_SZ",
        ] {
            assert!(plan.denied_arguments.iter().any(|r| r == rule), "{rule}");
        }
        for name in [
            "inotify_init1",
            "inotify_add_watch",
            "timer_create",
            "rt_sigqueueinfo",
            "rt_tgsigqueueinfo",
        ] {
            assert!(plan.denied.iter().any(|e| e.name == name), "{name}");
            assert!(plan.allowed.iter().all(|e| e.name != name), "{name}");
        }
    }

    #[test]
    fn device_nodes_are_refused_by_the_argument_filter() {
        let plan = SeccompPlan::default_profile();
        for kind in ["FIFO", "character device", "block device", "socket node"] {
            let rule = format!("mknodat of a {kind}");
            assert!(plan.denied_arguments.contains(&rule), "{rule}");
        }
        assert_eq!(device_node_rules().unwrap().len(), DEVICE_NODE_TYPES.len());
        // A regular file is no device node: its type is not among those refused.
        assert!(DEVICE_NODE_TYPES
            .iter()
            .all(|(_, kind)| *kind != libc::S_IFREG && *kind != 0));
    }

    /// Runs a filter on (arch, nr, low word of arg 0), for the refusal filter's instructions.
    fn run_with_arg(prog: &[seccompiler::sock_filter], arch: u32, nr: u32, arg0: u32) -> u32 {
        run_with_args(prog, arch, nr, [arg0, 0])
    }

    /// Runs a filter on (arch, nr, low words of args 0 and 1).
    fn run_with_args(prog: &[seccompiler::sock_filter], arch: u32, nr: u32, args: [u32; 2]) -> u32 {
        let [arg0, arg1] = args;
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &prog[pc];
            pc += 1;
            match i.code {
                BPF_LD_W_ABS => {
                    acc = match i.k {
                        DATA_ARCH => arch,
                        DATA_NR => nr,
                        DATA_ARG0_LOW => arg0,
                        DATA_ARG1_LOW => arg1,
                        other => panic!("unexpected offset {other}"),
                    }
                }
                BPF_JEQ_K | BPF_JSET_K => {
                    let taken = if i.code == BPF_JEQ_K {
                        acc == i.k
                    } else {
                        acc & i.k != 0
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                BPF_RET_K => return i.k,
                other => panic!("unexpected opcode {other:#x}"),
            }
        }
    }

    #[test]
    fn the_refusal_filter_stops_processes_memfds_and_shm_but_not_threads() {
        let arch = audit_arch().unwrap();
        let all = [
            Refusal::ProcessCreation,
            Refusal::MemfdCreate,
            Refusal::SysvShm,
        ];
        let prog = refusal_filter(arch, &all);
        let clone = libc::SYS_clone as u32;
        let thread = (libc::CLONE_VM
            | libc::CLONE_FS
            | libc::CLONE_FILES
            | libc::CLONE_SIGHAND
            | libc::CLONE_THREAD
            | libc::CLONE_SYSVSEM) as u32;
        assert_eq!(run_with_arg(&prog, arch, clone, thread), RET_ALLOW);
        assert_eq!(
            run_with_arg(&prog, arch, clone, libc::SIGCHLD as u32),
            RET_EAGAIN,
            "fork through clone"
        );
        assert_eq!(
            run_with_arg(&prog, arch, libc::SYS_memfd_create as u32, 0),
            RET_EPERM
        );
        assert_eq!(
            run_with_arg(&prog, arch, libc::SYS_shmget as u32, 0),
            RET_EPERM
        );
        assert_eq!(
            run_with_arg(&prog, arch, libc::SYS_read as u32, 0),
            RET_ALLOW
        );
        assert_eq!(
            run_with_arg(&prog, arch + 1, clone, 0),
            RET_ALLOW,
            "foreign: the number filter kills"
        );
        #[cfg(target_arch = "x86_64")]
        for nr in [libc::SYS_fork, libc::SYS_vfork] {
            assert_eq!(run_with_arg(&prog, arch, nr as u32, 0), RET_EAGAIN);
        }
        let only_memfd = refusal_filter(arch, &[Refusal::MemfdCreate]);
        assert_eq!(run_with_arg(&only_memfd, arch, clone, 0), RET_ALLOW);
        assert_eq!(
            run_with_arg(&only_memfd, arch, libc::SYS_memfd_create as u32, 0),
            RET_EPERM
        );
        let mut plan = SeccompPlan::default_profile();
        assert_eq!(
            compile(&plan).unwrap().len(),
            2,
            "no refusals: no third filter"
        );
        plan.refused.push(Refused {
            refusal: Refusal::MemfdCreate,
            why: "test",
        });
        assert_eq!(compile(&plan).unwrap().len(), 3);
    }
}
