//! The jail's network namespace, made off the critical path.
//!
//! Owns: creating the run's empty network namespace on a short-lived thread while warden creates
//! the cgroup and prepares the jail, and putting warden into it for the `clone3` only, so that the
//! jail's init is born in it. A new network namespace is the most expensive namespace to create
//! (~0.55 ms here: the loopback device, the IPv4 and IPv6 sysctl tables); cloned with
//! `CLONE_NEWNET`, it was on the critical path of every run.
//!
//! The namespace holds one device, `lo`, down, and nothing else, as before. It is owned by the
//! initial user namespace (warden, as host root, made it) instead of the jail's: nobody in the jail
//! holds a capability over it, so not even the jail's root can configure it (bring `lo` up, change its
//! sysctls); the program, uid 65534 without capabilities, never could.
//!
//! Only where warden may create a network namespace by itself (root with `CAP_SYS_ADMIN`). Otherwise
//! (an ordinary user; a root without `CAP_SYS_ADMIN`, as in a restricted systemd unit) the thread's
//! `unshare` fails and the jail is cloned with `CLONE_NEWNET` as before: the run gets its own empty
//! network namespace either way.
//!
//! Does not own: the other namespaces (`parent.rs`).

use std::os::fd::{AsFd, OwnedFd};
use std::thread::JoinHandle;

use nix::errno::Errno;
use nix::sched::{setns, unshare, CloneFlags};

use crate::error::JailError;
use crate::userns::Mode;

/// A network namespace being made on a helper thread.
pub struct Pending(Option<JoinHandle<Result<OwnedFd, Errno>>>);

/// Starts making a network namespace (root mode only; otherwise nothing is started).
pub fn start(mode: Mode) -> Pending {
    if mode != Mode::Root {
        return Pending(None);
    }
    let helper = std::thread::Builder::new()
        .name("warden-netns".into())
        .stack_size(64 * 1024)
        .spawn(|| {
            // Only this thread moves; it ends right after, and the descriptor keeps the namespace.
            unshare(CloneFlags::CLONE_NEWNET)?;
            open_own()
        });
    Pending(helper.ok())
}

impl Pending {
    /// Waits for the helper thread to end: the new namespace, or `None` when it could not be made
    /// here (the jail is then cloned with `CLONE_NEWNET`).
    pub fn finish(self) -> Option<OwnedFd> {
        let helper = self.0?;
        match helper.join() {
            Ok(Ok(namespace)) => Some(namespace),
            _ => None,
        }
    }
}

/// This thread's network namespace.
fn open_own() -> Result<OwnedFd, Errno> {
    std::fs::File::open("/proc/thread-self/ns/net")
        .map(OwnedFd::from)
        .map_err(|err| Errno::from_raw(err.raw_os_error().unwrap_or(libc::EIO)))
}

/// warden inside the jail's network namespace, for the clone; [`Entered::leave`] puts it back.
pub struct Entered {
    own: Option<OwnedFd>,
}

/// Moves the calling thread (warden's only one) into `namespace`.
pub fn enter(namespace: &OwnedFd) -> Result<Entered, JailError> {
    let own = open_own()
        .map_err(|errno| JailError::syscall("open", "/proc/thread-self/ns/net", errno))?;
    setns(namespace.as_fd(), CloneFlags::CLONE_NEWNET)
        .map_err(|errno| JailError::syscall("setns", "the jail's network namespace", errno))?;
    Ok(Entered { own: Some(own) })
}

impl Entered {
    /// Back into warden's own network namespace (parent side, right after the clone).
    pub fn leave(mut self) -> Result<(), JailError> {
        self.back()
    }

    /// The jail's side of the clone: stays where it is; only the descriptor of warden's namespace
    /// is closed.
    pub fn abandon(mut self) {
        self.own = None;
    }

    fn back(&mut self) -> Result<(), JailError> {
        match self.own.take() {
            Some(own) => setns(own.as_fd(), CloneFlags::CLONE_NEWNET).map_err(|errno| {
                JailError::syscall("setns", "warden's own network namespace", errno)
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Entered {
    fn drop(&mut self) {
        // An error path between entering and the clone: never leave warden in the jail's namespace.
        let _ = self.back();
    }
}
