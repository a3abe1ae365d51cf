//! The exec ban: once the interpreter runs, no process of the program may execute a file or create a
//! process (threads stay allowed). Installed by warden's bootstrap, before any untrusted code, when
//! the policy allows no processes; the kernel enforces it whatever the program does afterwards,
//! ctypes and raw syscalls included.
//!
//! Owns: a seccomp filter (execve, execveat, fork, vfork and clone without CLONE_THREAD → EPERM) and
//! an execute-nothing Landlock domain. Both only add restrictions, so an unprivileged process may
//! install them (no_new_privs is already set by the jail). The jail cannot install them itself: it
//! has to execute the interpreter first.

use std::io;

/// The mechanisms that were installed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Installed {
    pub seccomp: bool,
    pub landlock: bool,
}

// Classic BPF, as in <linux/filter.h> and <linux/seccomp.h>.
/// BPF_LD (0) | BPF_W (0) | BPF_ABS (0x20).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x05 | 0x10; // BPF_JMP | BPF_JEQ | BPF_K
const BPF_JSET_K: u16 = 0x05 | 0x40; // BPF_JMP | BPF_JSET | BPF_K
const BPF_RET_K: u16 = 0x06;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// Low 32 bits of the first argument (little-endian).
const ARG0_LOW: u32 = 16;
const CLONE_THREAD: u32 = 0x0001_0000;

#[cfg(target_arch = "x86_64")]
mod arch {
    pub const AUDIT_ARCH: u32 = 0xc000_003e;
    pub const SYS_CLONE: u32 = 56;
    pub const SYS_FORK: u32 = 57;
    pub const SYS_VFORK: u32 = 58;
    pub const SYS_EXECVE: u32 = 59;
    pub const SYS_EXECVEAT: u32 = 322;
}

#[cfg(target_arch = "aarch64")]
mod arch {
    pub const AUDIT_ARCH: u32 = 0xc000_00b7;
    pub const SYS_CLONE: u32 = 220;
    /// aarch64 has no fork or vfork: numbers no call has.
    pub const SYS_FORK: u32 = u32::MAX;
    pub const SYS_VFORK: u32 = u32::MAX;
    pub const SYS_EXECVE: u32 = 221;
    pub const SYS_EXECVEAT: u32 = 281;
}

fn statement(code: u16, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter { code, jt, jf, k }
}

/// The filter program. Another architecture's calls fall through to allow: the jail's own filter
/// already refuses every foreign ABI. `clone3` is left alone: the jail's filter answers ENOSYS so
/// glibc falls back to `clone`, whose flags this filter inspects.
pub fn exec_ban_program() -> Vec<libc::sock_filter> {
    use arch::*;
    let deny = SECCOMP_RET_ERRNO | libc::EPERM as u32;
    vec![
        /* 0 */ statement(BPF_LD_W_ABS, 0, 0, ARCH),
        /* 1 */ statement(BPF_JEQ_K, 0, 9, AUDIT_ARCH), // foreign ABI → 11 (allow)
        /* 2 */ statement(BPF_LD_W_ABS, 0, 0, NR),
        /* 3 */ statement(BPF_JEQ_K, 8, 0, SYS_EXECVE), // → 12 (deny)
        /* 4 */ statement(BPF_JEQ_K, 7, 0, SYS_EXECVEAT),
        /* 5 */ statement(BPF_JEQ_K, 6, 0, SYS_FORK),
        /* 6 */ statement(BPF_JEQ_K, 5, 0, SYS_VFORK),
        /* 7 */ statement(BPF_JEQ_K, 0, 3, SYS_CLONE), // other calls → 11 (allow)
        /* 8 */ statement(BPF_LD_W_ABS, 0, 0, ARG0_LOW),
        /* 9 */ statement(BPF_JSET_K, 1, 0, CLONE_THREAD), // a thread → 11 (allow)
        /* 10 */ statement(BPF_RET_K, 0, 0, deny),
        /* 11 */ statement(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        /* 12 */ statement(BPF_RET_K, 0, 0, deny),
    ]
}

/// Installs the seccomp filter on every thread of the process.
pub fn install_seccomp() -> io::Result<()> {
    let program = exec_ban_program();
    let fprog = libc::sock_fprog {
        len: program.len() as u16,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fprog` points at `program`, which outlives the call; the kernel copies the filter.
    let result = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_TSYNC,
            &fprog as *const libc::sock_fprog,
        )
    };
    if result != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `struct landlock_ruleset_attr` up to `handled_access_fs` (ABI 1: every Landlock kernel reads it).
#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
}
const LANDLOCK_ACCESS_FS_EXECUTE: u64 = 1;

/// Adds a Landlock domain that handles "execute" and grants it nowhere. `Ok(false)` when the kernel
/// (or the jail's syscall filter) offers no Landlock: the seccomp filter alone then holds the ban.
pub fn install_landlock() -> io::Result<bool> {
    let attr = RulesetAttr {
        handled_access_fs: LANDLOCK_ACCESS_FS_EXECUTE,
    };
    // SAFETY: `attr` is a valid ruleset attribute of the size given, alive during the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            &attr as *const RulesetAttr,
            std::mem::size_of::<RulesetAttr>(),
            0u32,
        )
    };
    if fd < 0 {
        let err = io::Error::last_os_error();
        return match err.raw_os_error() {
            Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => Ok(false),
            _ => Err(err),
        };
    }
    let fd = fd as libc::c_int;
    // SAFETY: `fd` is the ruleset just created; it is closed right after.
    let result = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
    let err = io::Error::last_os_error();
    // SAFETY: closing the descriptor we own.
    unsafe { libc::close(fd) };
    if result != 0 {
        return Err(err);
    }
    Ok(true)
}

/// Both mechanisms. The seccomp filter is required; Landlock is added where the kernel has it.
pub fn ban_exec() -> io::Result<Installed> {
    install_seccomp()?;
    let landlock = install_landlock()?;
    Ok(Installed {
        seccomp: true,
        landlock,
    })
}
