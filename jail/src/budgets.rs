//! The jail's own kernel budgets: what one run may hold of the kernel's per-user and per-namespace
//! counts, so that it can neither exhaust them for the host nor for other runs.
//!
//! Owns: the list of per-namespace sysctls the jail's init writes before it builds the root (pure
//! data, from the mode and what this kernel offers), the soft rlimits warden holds while it creates
//! the namespaces (the kernel copies them as the namespace-wide ceilings), and writing the sysctls
//! (jail side). Every entry says why.
//!
//! The kernel charges queued signals, inotify instances and watches, POSIX message queues and
//! namespaces to the holder's uid in its user namespace and to the namespace's owner in every
//! ancestor (`userns.rs` makes each root-mode run the owner of its own budget). Three kinds of limit
//! apply inside:
//! - `/proc/sys/user/*` belongs to the user namespace and starts unlimited in a new one: the init
//!   (which holds every capability there) lowers it, before the program exists;
//! - the IPC sysctls (`kernel/shm*`, `kernel/msgmni`, `fs/mqueue/*`) belong to the IPC namespace and
//!   `vm/memfd_noexec` to the pid namespace; the kernel lets only the namespace's root write the
//!   first and only host root the second, which the init is in root mode only (an ordinary user's
//!   jail refuses those calls in seccomp instead, `seccomp.rs`);
//! - `RLIMIT_SIGPENDING` and `RLIMIT_MSGQUEUE` of the process that creates a user namespace become
//!   that namespace's ceilings for everything in it, whatever its processes set later: warden lowers
//!   its own soft limits around `clone3` and restores them (soft only, so no privilege is needed to
//!   raise them again); the program gets the same values as its own hard limits (`rlimits.rs`).
//!
//! Does not own: when the init writes them (`child.rs`), the program's rlimits (`rlimits.rs`).

use std::ffi::CString;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::resource::Resource;
use nix::sys::stat::Mode as FileMode;
use serde::Serialize;

use crate::config::{Config, Layer, MemoryEnforcement};
use crate::error::{JailError, SysError};
use crate::rlimits::Rlimit;
use crate::seccomp::{Refusal, Refused};
use crate::userns::{Mode, OwnerRange};

/// Real-time and other queued signals the whole jail may hold at once.
pub const SIGNALS: u64 = 256;
/// inotify instances per uid in the jail.
pub const INOTIFY_INSTANCES: u64 = 8;
/// inotify watches per uid in the jail.
pub const INOTIFY_WATCHES: u64 = 8192;

/// One sysctl the init writes, by its path under `/proc/sys`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sysctl {
    pub name: &'static str,
    pub value: String,
    pub why: &'static str,
}

/// Where a sysctl may be written from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Writer {
    /// Whoever holds CAP_SYS_RESOURCE in the user namespace: the init, in both modes.
    UserNamespace,
    /// The IPC namespace's root, or host root for the pid namespace's: the init in root mode.
    HostRootInit,
}

/// Every sysctl the jail may set, with who can write it.
const SYSCTLS: &[(&str, &str, Writer, &str)] = &[
    (
        "user/max_inotify_instances",
        "8",
        Writer::UserNamespace,
        "inotify instances are charged to the namespace's owner: a run keeps to a few",
    ),
    (
        "user/max_inotify_watches",
        "8192",
        Writer::UserNamespace,
        "each watch pins kernel memory charged to the owner",
    ),
    (
        "user/max_user_namespaces",
        "0",
        Writer::UserNamespace,
        "no namespaces below the jail's (seccomp refuses the calls too)",
    ),
    (
        "user/max_pid_namespaces",
        "0",
        Writer::UserNamespace,
        "no namespaces below the jail's",
    ),
    (
        "user/max_net_namespaces",
        "0",
        Writer::UserNamespace,
        "no namespaces below the jail's",
    ),
    (
        "user/max_mnt_namespaces",
        "0",
        Writer::UserNamespace,
        "no namespaces below the jail's",
    ),
    (
        "user/max_ipc_namespaces",
        "0",
        Writer::UserNamespace,
        "no namespaces below the jail's",
    ),
    (
        "user/max_uts_namespaces",
        "0",
        Writer::UserNamespace,
        "no namespaces below the jail's",
    ),
    (
        "user/max_cgroup_namespaces",
        "0",
        Writer::UserNamespace,
        "no namespaces below the jail's (the init made its own first)",
    ),
    (
        "user/max_time_namespaces",
        "0",
        Writer::UserNamespace,
        "no namespaces below the jail's (the init made its own first)",
    ),
    (
        "user/max_fanotify_groups",
        "0",
        Writer::UserNamespace,
        "fanotify is refused by seccomp; no budget either",
    ),
    (
        "user/max_fanotify_marks",
        "0",
        Writer::UserNamespace,
        "fanotify is refused by seccomp; no budget either",
    ),
    (
        "fs/mqueue/queues_max",
        "0",
        Writer::HostRootInit,
        "POSIX message queues are charged to the owner and released late, after the namespace ends \
         (the calls are also left unimplemented by seccomp)",
    ),
    (
        "kernel/msgmni",
        "0",
        Writer::HostRootInit,
        "System V message queues hold kernel memory no rlimit counts (the calls are also left \
         unimplemented by seccomp)",
    ),
    (
        "kernel/shmmni",
        "0",
        Writer::HostRootInit,
        "System V shared memory outlives the processes that made it and no rlimit counts it",
    ),
    (
        "vm/memfd_noexec",
        "2",
        Writer::HostRootInit,
        "a memfd can never be executed (Landlock and noexec mounts do not cover memfds): no native \
         binary can be written and run in memory",
    ),
];

/// The namespace budgets a template needs above zero: one of each per run it forked that runs.
const TEMPLATE_NAMESPACES: [&str; 6] = [
    "user/max_mnt_namespaces",
    "user/max_pid_namespaces",
    "user/max_net_namespaces",
    "user/max_ipc_namespaces",
    "user/max_uts_namespaces",
    "user/max_cgroup_namespaces",
];

/// How many runs forked from one template may exist at once (each holds one namespace of each).
const TEMPLATE_NAMESPACE_BUDGET: &str = "1024";

/// The sysctls the init of a jail in `mode` writes; `exists` says whether this kernel has a sysctl
/// (a kernel without one gets no entry, and the refusals in seccomp cover what matters).
pub fn sysctls(mode: Mode, exists: impl Fn(&str) -> bool) -> Vec<Sysctl> {
    SYSCTLS
        .iter()
        .filter(|(name, _, writer, _)| {
            (mode == Mode::Root || *writer == Writer::UserNamespace) && exists(name)
        })
        .map(|(name, value, _, why)| Sysctl {
            name,
            value: (*value).to_owned(),
            why,
        })
        .collect()
}

/// Whether this kernel has `/proc/sys/<name>`.
pub fn sysctl_exists(name: &str) -> bool {
    Path::new("/proc/sys").join(name).exists()
}

/// Whether the plan sets `vm.memfd_noexec` (else seccomp refuses `memfd_create`).
pub fn sets_memfd_noexec(sysctls: &[Sysctl]) -> bool {
    sysctls.iter().any(|s| s.name == "vm/memfd_noexec")
}

/// warden's soft limits while it creates the namespaces: the kernel copies them as the ceilings of
/// everything the jail's processes hold, charged to the namespace's owner.
pub fn namespace_ceilings() -> Vec<Rlimit> {
    vec![
        Rlimit {
            name: "RLIMIT_SIGPENDING",
            resource: Resource::RLIMIT_SIGPENDING,
            soft: SIGNALS,
            hard: SIGNALS,
            why: "queued signals of the whole jail (else: up to the owner's host-wide budget)",
        },
        Rlimit {
            name: "RLIMIT_MSGQUEUE",
            resource: Resource::RLIMIT_MSGQUEUE,
            soft: 0,
            hard: 0,
            why: "no POSIX message queue bytes for the whole jail",
        },
    ]
}

/// What this host's kernel offers the jail's own limits (probed once per plan).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelHost {
    /// The sysctls warden may set that this kernel has.
    pub sysctls: Vec<&'static str>,
    /// Time namespaces (Linux 5.6): the program's uptime starts at the run.
    pub time_namespace: bool,
    /// Root mode: the reserved host ids each run owns a pair of, or why they cannot be used.
    pub owner_ids: Option<Result<OwnerRange, String>>,
}

impl KernelHost {
    /// Looks at the running kernel (a few `stat`s, and the account files as root).
    pub fn probe(mode: Mode) -> Self {
        KernelHost {
            sysctls: SYSCTLS
                .iter()
                .map(|(name, ..)| *name)
                .filter(|name| sysctl_exists(name))
                .collect(),
            time_namespace: Path::new("/proc/self/timens_offsets").exists(),
            owner_ids: (mode == Mode::Root).then(|| {
                let range = OwnerRange::reserved();
                match range.check_host() {
                    Ok(()) => Ok(range),
                    Err(conflict) => Err(format!(
                        "warden's reserved host ids {}–{} (each run's user namespace is owned by a \
                         pair of them) are in use: {conflict}",
                        range.first,
                        range.last()
                    )),
                }
            }),
        }
    }

    /// A kernel with everything (tests).
    pub fn full(mode: Mode) -> Self {
        KernelHost {
            sysctls: SYSCTLS.iter().map(|(name, ..)| *name).collect(),
            time_namespace: true,
            owner_ids: (mode == Mode::Root).then(|| Ok(OwnerRange::reserved())),
        }
    }
}

/// How the memory limit is enforced in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Memory {
    /// A memory cgroup counts the whole tree: heap, page cache, tmpfs, memfds, shared memory.
    Cgroup,
    /// No memory cgroup, accepted by the rules file: RLIMIT_AS of the one process the run may have,
    /// with what it cannot count refused (memfds, System V shared memory, new processes).
    BestEffort,
}

impl Memory {
    /// As the result record's `layers.memory` names it.
    pub fn name(self) -> &'static str {
        match self {
            Memory::Cgroup => "cgroup",
            Memory::BestEffort => "best-effort",
        }
    }
}

/// The jail's own kernel limits for one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KernelPlan {
    /// Root mode: the range the run takes its owner and program ids from (`userns.rs`).
    pub owner: Option<OwnerRange>,
    /// Written by the init before it builds the root, in this order.
    pub sysctls: Vec<Sysctl>,
    /// warden's soft limits while it creates the namespaces.
    pub namespace_ceilings: Vec<Rlimit>,
    /// The init puts its children in a time namespace whose clocks start at the run.
    pub time_namespace: bool,
    pub memory: Memory,
    /// How a memfd is kept from being executed: `vm.memfd_noexec=2`, or `memfd_create` refused.
    pub memfd_exec: &'static str,
}

/// The kernel plan of a run of `config` in `mode` on `kernel`, and the refusals it adds to seccomp.
/// `cgroup_memory`: whether a memory cgroup is in force; `cgroup_reason`: why not, when not.
/// Fails closed when the memory limit cannot be enforced and the rules file did not accept the best
/// effort, and when a root-mode run cannot have host ids of its own.
pub fn plan(
    config: &Config,
    mode: Mode,
    kernel: &KernelHost,
    cgroup_memory: bool,
    cgroup_reason: Option<&str>,
) -> Result<(KernelPlan, Vec<Refused>), JailError> {
    let owner = match &kernel.owner_ids {
        None => None,
        Some(Ok(range)) => Some(range.clone()),
        Some(Err(why)) => {
            return Err(JailError::LayerUnavailable {
                layer: Layer::Namespaces,
                reason: why.clone(),
            })
        }
    };
    let memory = match (cgroup_memory, config.memory_enforcement) {
        (true, _) => Memory::Cgroup,
        (false, MemoryEnforcement::BestEffort) => Memory::BestEffort,
        (false, MemoryEnforcement::Strict) => {
            return Err(JailError::LayerUnavailable {
                layer: Layer::Cgroup,
                reason: format!(
                "{}; the memory limit ({} MiB) cannot be enforced without a memory cgroup, which \
                     counts the whole run (every process, page cache, tmpfs, memfds): delegate one \
                     (docs/jail.md), or accept rlimits with `[limits] memory_enforcement = \
                     \"best-effort\"` in the rules file",
                cgroup_reason.unwrap_or("no usable cgroup hierarchy"),
                config.limits.memory_bytes >> 20
            ),
            })
        }
    };
    let mut sysctls = sysctls(mode, |name| kernel.sysctls.contains(&name));
    if config.bootstrap.session && config.bootstrap.template {
        // A template creates the namespaces of each run it forks (`template.rs`); the programs
        // it forks cannot (no capabilities, and seccomp), and no user namespace is allowed.
        for sysctl in &mut sysctls {
            if TEMPLATE_NAMESPACES.contains(&sysctl.name) {
                sysctl.value = TEMPLATE_NAMESPACE_BUDGET.to_owned();
                sysctl.why = "a template creates the namespaces of each run it forks";
            }
        }
    }
    let mut refused = Vec::new();
    if memory == Memory::BestEffort {
        refused.push(Refused {
            refusal: Refusal::ProcessCreation,
            why: "best-effort memory: RLIMIT_AS counts one process, so the run is one process \
                  (threads stay)",
        });
        refused.push(Refused {
            refusal: Refusal::MemfdCreate,
            why: "best-effort memory: what a memfd holds is not counted by RLIMIT_AS",
        });
    } else if !sets_memfd_noexec(&sysctls) {
        refused.push(Refused {
            refusal: Refusal::MemfdCreate,
            why: "vm.memfd_noexec cannot be set for this jail (an ordinary user's, or a kernel \
                  older than 6.3): a memfd could be executed",
        });
    }
    if !sysctls.iter().any(|s| s.name == "kernel/shmmni") {
        refused.push(Refused {
            refusal: Refusal::SysvShm,
            why: "kernel.shmmni cannot be set to 0 for this jail (an ordinary user's): System V \
                  shared memory outlives its processes and no rlimit counts it",
        });
    }
    let memfd_exec = if sets_memfd_noexec(&sysctls) {
        "vm.memfd_noexec=2"
    } else {
        "memfd_create refused"
    };
    Ok((
        KernelPlan {
            owner,
            sysctls,
            namespace_ceilings: namespace_ceilings(),
            time_namespace: kernel.time_namespace,
            memory,
            memfd_exec,
        },
        refused,
    ))
}

/// A sysctl ready to write (jail side): its full path and value.
#[derive(Debug)]
pub struct Prepared {
    path: CString,
    value: Vec<u8>,
}

/// Prepares the writes (parent side, before cloning).
pub fn prepare(sysctls: &[Sysctl]) -> Result<Vec<Prepared>, JailError> {
    sysctls
        .iter()
        .map(|s| {
            Ok(Prepared {
                path: CString::new(format!("/proc/sys/{}", s.name))
                    .map_err(|_| JailError::Config(format!("sysctl name {:?}", s.name)))?,
                value: s.value.as_bytes().to_vec(),
            })
        })
        .collect()
}

/// Writes one sysctl (the init, through the host's `/proc` before its own is mounted: the values
/// are those of the writer's namespaces).
pub fn write(sysctl: &Prepared) -> Result<(), SysError> {
    let arg = || sysctl.path.to_string_lossy().into_owned();
    let fd = nix::fcntl::open(
        sysctl.path.as_c_str(),
        OFlag::O_WRONLY | OFlag::O_CLOEXEC,
        FileMode::empty(),
    )
    .map_err(|errno| SysError::new("open", arg(), errno))?;
    match nix::unistd::write(&fd, &sysctl.value) {
        Ok(n) if n == sysctl.value.len() => Ok(()),
        Ok(_) => Err(SysError::new("write", arg(), Errno::EIO)),
        Err(errno) => Err(SysError::new("write", arg(), errno)),
    }
}

/// The soft limits of the calling process for `ceilings`, lowered to the ceilings now; restored by
/// [`restore`].
pub fn lower(ceilings: &[Rlimit]) -> Result<Vec<(Resource, u64)>, JailError> {
    let mut saved = Vec::new();
    for limit in ceilings {
        let (soft, hard) = nix::sys::resource::getrlimit(limit.resource)
            .map_err(|errno| JailError::syscall("getrlimit", limit.name, errno))?;
        let lowered = soft.min(limit.soft);
        nix::sys::resource::setrlimit(limit.resource, lowered, hard)
            .map_err(|errno| JailError::syscall("setrlimit", limit.name, errno))?;
        saved.push((limit.resource, soft));
    }
    Ok(saved)
}

/// Puts back the soft limits [`lower`] saved.
pub fn restore(saved: &[(Resource, u64)]) -> Result<(), JailError> {
    for &(resource, soft) in saved {
        let (_, hard) = nix::sys::resource::getrlimit(resource)
            .map_err(|errno| JailError::syscall("getrlimit", format!("{resource:?}"), errno))?;
        nix::sys::resource::setrlimit(resource, soft, hard)
            .map_err(|errno| JailError::syscall("setrlimit", format!("{resource:?}"), errno))?;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn root_writes_every_budget_and_an_ordinary_user_only_the_user_namespaces() {
        let root = sysctls(Mode::Root, |_| true);
        assert!(sets_memfd_noexec(&root));
        assert!(root
            .iter()
            .any(|s| s.name == "kernel/shmmni" && s.value == "0"));
        let user = sysctls(
            Mode::Unprivileged {
                uid: 1000,
                gid: 1000,
            },
            |_| true,
        );
        assert!(!sets_memfd_noexec(&user));
        assert!(user.iter().all(|s| s.name.starts_with("user/")));
        assert!(user
            .iter()
            .any(|s| s.name == "user/max_inotify_instances"
                && s.value == INOTIFY_INSTANCES.to_string()));
        assert!(user.iter().any(
            |s| s.name == "user/max_inotify_watches" && s.value == INOTIFY_WATCHES.to_string()
        ));
        assert!(user.iter().all(|s| s.why.len() > 10));
    }

    #[test]
    fn a_sysctl_this_kernel_lacks_is_left_out() {
        let old_kernel = sysctls(Mode::Root, |name| name != "vm/memfd_noexec");
        assert!(!sets_memfd_noexec(&old_kernel));
    }

    #[test]
    fn ceilings_are_lowered_and_restored() {
        let before = nix::sys::resource::getrlimit(Resource::RLIMIT_SIGPENDING).unwrap();
        let saved = lower(&namespace_ceilings()).unwrap();
        let during = nix::sys::resource::getrlimit(Resource::RLIMIT_SIGPENDING).unwrap();
        assert!(during.0 <= SIGNALS && during.1 == before.1);
        restore(&saved).unwrap();
        assert_eq!(
            nix::sys::resource::getrlimit(Resource::RLIMIT_SIGPENDING).unwrap(),
            before
        );
    }
}
