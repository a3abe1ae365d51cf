//! The parent side of spawning: prepare, clone, map ids, attach the cgroup, release the program.
//!
//! Owns: everything warden does from a [`Plan`] to a running, confined program: creating the run's
//! cgroup, preparing every string, filter and descriptor *before* cloning (the jail side then only
//! runs prepared steps), `clone3` into new namespaces, writing the id maps, and setting up the cgroup
//! attach.
//!
//! The cgroup attach is designed around its cost. warden writing a pid into `cgroup.procs` (v1) makes
//! the kernel wait for an RCU grace period (~10 ms, the largest setup cost by far). Instead, on v1
//! warden opens the run cgroup's `tasks` files and the jail's init writes `0` to them itself, first
//! thing after its id maps: a single thread moving itself takes no global lock (~0.05 ms). On v2 there
//! is no migration at all: the init is cloned straight into its cgroup (`CLONE_INTO_CGROUP`). Either
//! way, the program's process is born inside the cgroup.
//!
//! Does not own: the confinement steps inside the jail (`child.rs`) or watching the run
//! (`supervise.rs`).

use std::ffi::CString;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Instant;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::signal::{kill, Signal};
use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
use nix::unistd::Pid;

use crate::budgets;
use crate::cgroup::{self, Cgroup};
use crate::child::{self, Pipes, Prepared};
use crate::error::JailError;
use crate::message::{self, ToChild};
use crate::mounts;
use crate::netns;
use crate::plan::Plan;
use crate::seccomp;
use crate::sys::{self, Forked};
use crate::userns::RunIds;

/// A program that is running in its jail.
pub struct Running {
    /// The jail's init, in warden's pid namespace.
    pub init: Pid,
    /// A pidfd of the init: readable once it has exited.
    pub pidfd: OwnedFd,
    pub control: OwnedFd,
    /// Session mode: the write end of the program's standard input.
    pub stdin: Option<OwnedFd>,
    pub stdout: OwnedFd,
    pub stderr: OwnedFd,
    pub cgroup: Option<Cgroup>,
    pub started: Instant,
    guard: InitGuard,
    /// Root mode: the run's own host ids, held until the run is over (`userns.rs`).
    _ids: Option<RunIds>,
}

impl Running {
    /// A run's init that is not our child (forked by a template, `template.rs`): supervised
    /// through its pidfd; the template reaps it.
    pub(crate) fn adopted(
        init: Pid,
        pidfd: OwnedFd,
        control: OwnedFd,
        stdin: Option<OwnedFd>,
        stdout: OwnedFd,
        stderr: OwnedFd,
        cgroup: Option<Cgroup>,
    ) -> Running {
        Running {
            init,
            pidfd,
            control,
            stdin,
            stdout,
            stderr,
            cgroup,
            started: Instant::now(),
            guard: InitGuard {
                pid: init,
                armed: true,
                adopted: true,
            },
            _ids: None,
        }
    }

    /// Whether the init is another process's child (it is not reaped here).
    pub fn adopted_init(&self) -> bool {
        self.guard.adopted
    }

    /// The init has been reaped by the supervisor: nothing left to kill on drop.
    pub fn disarm(&mut self) {
        self.guard.armed = false;
    }
}

/// Kills and reaps the jail's init unless disarmed: no error path leaves a jail behind.
struct InitGuard {
    pid: Pid,
    armed: bool,
    /// Not our child: killed, but reaped by its parent (the template).
    adopted: bool,
}

impl Drop for InitGuard {
    fn drop(&mut self) {
        if self.armed {
            let _ = kill(self.pid, Signal::SIGKILL);
            if !self.adopted {
                let _ = sys::wait4(self.pid, false);
            }
        }
    }
}

/// Bytes of the jail's root tmpfs besides the program text (directories, /etc files).
const ROOT_BYTES: u64 = 1024 * 1024;

/// The namespaces of the jail (see `plan::NAMESPACES`).
const CLONE_FLAGS: libc::c_int = libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP;

fn cstrings<'a>(items: impl Iterator<Item = &'a [u8]>) -> Result<Vec<CString>, JailError> {
    items
        .map(|bytes| {
            CString::new(bytes)
                .map_err(|_| JailError::Config("argv or environment contains a NUL byte".into()))
        })
        .collect()
}

fn prepare(
    plan: &Plan,
    stage: &Path,
    program: &[u8],
    workdir: Option<&Path>,
    cgroup: Option<&Cgroup>,
) -> Result<Prepared, JailError> {
    let env: Vec<Vec<u8>> = plan
        .env
        .iter()
        .map(|(name, value)| format!("{name}={value}").into_bytes())
        .collect();
    Ok(Prepared {
        hostname: plan.hostname,
        mounts: mounts::prepare(&plan.mounts, stage, program, ROOT_BYTES, workdir)?,
        exec_path: CString::new(plan.interpreter.real.as_os_str().as_bytes())
            .map_err(|_| JailError::Config("interpreter path contains a NUL byte".into()))?,
        argv: cstrings(plan.argv.iter().map(|arg| arg.as_bytes()))?,
        envp: cstrings(env.iter().map(Vec::as_slice))?,
        rlimits: plan.rlimits.clone(),
        last_cap: crate::caps::last_cap(),
        clear_groups: plan.id_maps.clear_groups,
        run_as: plan.run_as,
        landlock: plan.landlock.clone(),
        seccomp: plan.seccomp.as_ref().map(seccomp::compile).transpose()?,
        cgroup_tasks: match cgroup {
            Some(cgroup) => cgroup
                .v1_tasks_files()?
                .into_iter()
                .map(high)
                .collect::<Result<_, _>>()?,
            None => Vec::new(),
        },
        linger: workdir.is_some(),
        become_root: plan.kernel.owner.is_some(),
        time_namespace: plan.kernel.time_namespace,
        sysctls: budgets::prepare(&plan.kernel.sysctls)?,
        arg_env: sys::arg_env_areas(),
        template: plan.template,
    })
}

/// A pipe as (read end, write end), both close-on-exec.
pub(crate) fn pipe() -> Result<(OwnedFd, OwnedFd), JailError> {
    nix::unistd::pipe2(OFlag::O_CLOEXEC)
        .map_err(|errno| JailError::syscall("pipe2", "O_CLOEXEC", errno))
}

/// Renumbers a jail-side descriptor to 10 or above.
fn high(fd: OwnedFd) -> Result<OwnedFd, JailError> {
    sys::dup_above(fd.as_fd(), 10)
        .map_err(|errno| JailError::syscall("fcntl", "F_DUPFD_CLOEXEC", errno))
}

pub(crate) fn nonblocking(fd: &OwnedFd) -> Result<(), JailError> {
    nix::fcntl::fcntl(fd, nix::fcntl::FcntlArg::F_SETFL(OFlag::O_NONBLOCK))
        .map(drop)
        .map_err(|errno| JailError::syscall("fcntl", "O_NONBLOCK", errno))
}

/// Starts the program of `plan` in a new jail whose root is mounted on `stage` (checked by
/// `stage.rs`). `sequence` numbers runs within this process; `workdir` is copied into the jail's
/// `/work`.
pub fn spawn(
    plan: &Plan,
    stage: &Path,
    program: &[u8],
    sequence: u64,
    workdir: Option<&Path>,
) -> Result<Running, JailError> {
    // The network namespace is made on a helper thread meanwhile (`netns.rs`).
    let netns = netns::start(plan.mode);
    let cgroup = match &plan.cgroup {
        Some(cgroup_plan) => {
            crate::supervise::reap_stale(cgroup_plan);
            Some(cgroup_plan.create(&cgroup::run_name(sequence))?)
        }
        None => None,
    };
    crate::trace("cgroup created");
    let prepared = prepare(plan, stage, program, workdir, cgroup.as_ref())?;
    crate::trace("prepared");
    let (control, control_child) = socketpair(
        AddressFamily::Unix,
        SockType::SeqPacket,
        None,
        SockFlag::SOCK_CLOEXEC,
    )
    .map_err(|errno| JailError::syscall("socketpair", "AF_UNIX, SOCK_SEQPACKET", errno))?;
    let (stdout, stdout_child) = pipe()?;
    let (stderr, stderr_child) = pipe()?;
    let (stdin, stdin_child) = if plan.template {
        // A template's channel: fork requests carry descriptors, which a pipe cannot, and each is
        // one record (the driver reads its first requests as lines: each is one record too).
        let (ours, child_end) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .map_err(|errno| JailError::syscall("socketpair", "AF_UNIX, SOCK_SEQPACKET", errno))?;
        (Some(ours), Some(high(child_end)?))
    } else if plan.session {
        let (child_end, ours) = pipe()?;
        (Some(ours), Some(high(child_end)?))
    } else {
        (None, None)
    };
    let pipes = Pipes {
        stdin: stdin_child,
        stdout: high(stdout_child)?,
        stderr: high(stderr_child)?,
    };
    let control_child = high(control_child)?;
    nonblocking(&stdout)?;
    nonblocking(&stderr)?;
    let cgroup_fd = match &cgroup {
        Some(cgroup) => cgroup.v2_dir_fd()?,
        None => None,
    };

    let ids = plan
        .kernel
        .owner
        .as_ref()
        .map(|range| range.allocate())
        .transpose()?;

    // Joined before the clone, which needs warden single-threaded. Without a namespace made ahead,
    // the clone makes one.
    let namespace = netns.finish();
    let flags = match namespace {
        Some(_) => CLONE_FLAGS & !libc::CLONE_NEWNET,
        None => CLONE_FLAGS,
    };
    let entered = namespace.as_ref().map(netns::enter).transpose()?;
    drop(namespace);
    crate::trace("clone");
    let started = Instant::now();
    // Whatever the jail holds is charged to the creator of its user namespace: create it with our
    // soft limits lowered to the jail's ceilings and, as root, with the run's own owner uid as our
    // euid (`budgets.rs`, `userns.rs`).
    let creator = Creator::become_for(plan, ids.as_ref())?;
    let forked = sys::clone_jail(flags as u64, cgroup_fd.as_ref().map(|fd| fd.as_fd()));
    let (init, pidfd) = match forked {
        Ok(Forked::Child) => {
            // The init stays in the network namespace it was born in.
            if let Some(entered) = entered {
                entered.abandon();
            }
            drop((control, stdin, stdout, stderr));
            child::init_main(&prepared, control_child, pipes)
        }
        Ok(Forked::Parent {
            pid,
            pidfd: Some(pidfd),
        }) => (pid, pidfd),
        Ok(Forked::Parent { pid, pidfd: None }) => {
            drop(InitGuard {
                pid,
                armed: true,
                adopted: false,
            });
            return Err(JailError::syscall("clone3", "CLONE_PIDFD", Errno::EINVAL));
        }
        Err(Errno::EDEADLK) => {
            return Err(JailError::Multithreaded(sys::thread_count().unwrap_or(0)))
        }
        Err(errno) => {
            return Err(JailError::syscall(
                "clone3",
                "CLONE_NEWUSER|NEWNS|NEWPID|NEWNET|NEWIPC|NEWUTS|NEWCGROUP",
                errno,
            ))
        }
    };
    let guard = InitGuard {
        pid: init,
        armed: true,
        adopted: false,
    };
    drop((control_child, pipes, cgroup_fd, prepared));
    // Back into warden's own network namespace (on an error path above, `Entered`'s drop did it).
    if let Some(entered) = entered {
        entered.leave()?;
    }

    // The init waits for its id maps before doing anything.
    crate::trace("cloned");
    // Still as the namespace's owner: a root without CAP_SYS_ADMIN (the systemd unit's capability
    // set) may write the maps of a namespace it owns, not of one another uid owns.
    plan.id_maps.write(init, ids.as_ref())?;
    creator.restore()?;
    message::send_to_child(control.as_fd(), ToChild::Go)
        .map_err(|errno| JailError::syscall("send", "go", errno))?;
    Ok(Running {
        init,
        pidfd,
        control,
        stdin,
        stdout,
        stderr,
        cgroup,
        started,
        guard,
        _ids: ids,
    })
}

/// warden's credentials and soft limits while it creates the jail's namespaces, and what to put
/// back afterwards.
struct Creator {
    limits: Vec<(nix::sys::resource::Resource, u64)>,
    switched: bool,
    restored: bool,
    /// The parent-death signal armed before the switch (a server's worker arms one) and the parent
    /// it watched: changing the effective uid clears it, so it is armed again on the way back.
    death_signal: Option<(nix::sys::signal::Signal, nix::unistd::Pid)>,
}

impl Creator {
    /// Lowers the soft limits that become the namespace's ceilings and, with `ids` (root mode),
    /// makes the run's owner uid our effective uid, with our effective capabilities raised again
    /// (the euid change empties them). The real and saved uids stay 0, so the permitted
    /// capabilities stay; the file-system uid stays 0 for the cgroup (`CLONE_INTO_CGROUP` checks
    /// it) and `/proc`. We stay the owner until the id maps are written.
    fn become_for(plan: &Plan, ids: Option<&RunIds>) -> Result<Self, JailError> {
        let mut creator = Creator {
            limits: budgets::lower(&plan.kernel.namespace_ceilings)?,
            switched: false,
            restored: false,
            death_signal: nix::sys::prctl::get_pdeathsig()
                .ok()
                .flatten()
                .map(|signal| (signal, nix::unistd::getppid())),
        };
        if let Some(ids) = ids {
            let root = nix::unistd::Uid::from_raw(0);
            nix::unistd::setresuid(root, nix::unistd::Uid::from_raw(ids.owner), root)
                .map_err(|errno| JailError::syscall("setresuid", ids.owner, errno))?;
            creator.switched = true;
            nix::unistd::setfsuid(root);
            // The kernel emptied our effective capabilities with the euid change; the id maps
            // (CAP_SETUID, CAP_SETFCAP for host root's line) and the cgroup need them.
            sys::raise_effective_capabilities()
                .map_err(|errno| JailError::syscall("capset", "effective = permitted", errno))?;
        }
        Ok(creator)
    }

    /// Puts our credentials and limits back (parent side, once the id maps are written).
    fn restore(mut self) -> Result<(), JailError> {
        self.restored = true;
        self.put_back()
    }

    fn put_back(&self) -> Result<(), JailError> {
        if self.switched {
            let root = nix::unistd::Uid::from_raw(0);
            nix::unistd::setresuid(root, root, root)
                .map_err(|errno| JailError::syscall("setresuid", 0, errno))?;
            if let Some((signal, parent)) = self.death_signal {
                nix::sys::prctl::set_pdeathsig(signal).map_err(|errno| {
                    JailError::syscall("prctl(PR_SET_PDEATHSIG)", signal, errno)
                })?;
                // The parent may have died while the signal was not armed: act as it would have.
                if nix::unistd::getppid() != parent {
                    let _ = nix::sys::signal::raise(signal);
                }
            }
        }
        budgets::restore(&self.limits)
    }
}

impl Drop for Creator {
    fn drop(&mut self) {
        // An error path between lowering and cloning: never leave warden with another euid.
        if !self.restored {
            let _ = self.put_back();
        }
    }
}
