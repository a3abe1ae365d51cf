//! Typed messages between warden (the parent) and the jail's init and program processes.
//!
//! Owns: the messages and their wire format over a `SOCK_SEQPACKET` socket pair (one datagram per
//! message, so no framing), and the names of the confinement stages. A confinement step that fails
//! inside the jail reports itself as [`ToParent::StageFailed`] — its [`Stage`] and the failed call as
//! a [`SysError`] — instead of panicking; the init reports the program's end as [`ToParent::Exited`].
//!
//! Does not own: what the parent does with a message (`parent.rs`, `supervise.rs`).

use std::borrow::Cow;
use std::fmt;
use std::os::fd::{AsRawFd, BorrowedFd};

use nix::errno::Errno;
use nix::sys::socket::{recv, send, MsgFlags};

use crate::error::{JailError, SysError};

/// A step of the confinement sequence, as reported when it fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Stage {
    Init = 1,
    Cgroup,
    Hostname,
    Mounts,
    Fork,
    Session,
    Stdio,
    Signals,
    Rlimits,
    Capabilities,
    Ids,
    NoNewPrivs,
    Workdir,
    Landlock,
    Seccomp,
    Exec,
    Namespaces,
    Sysctls,
}

impl Stage {
    const ALL: [Stage; 18] = [
        Stage::Init,
        Stage::Cgroup,
        Stage::Hostname,
        Stage::Mounts,
        Stage::Fork,
        Stage::Session,
        Stage::Stdio,
        Stage::Signals,
        Stage::Rlimits,
        Stage::Capabilities,
        Stage::Ids,
        Stage::NoNewPrivs,
        Stage::Workdir,
        Stage::Landlock,
        Stage::Seccomp,
        Stage::Exec,
        Stage::Namespaces,
        Stage::Sysctls,
    ];

    /// The stage's name in error messages.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Init => "init",
            Stage::Cgroup => "cgroup",
            Stage::Hostname => "hostname",
            Stage::Mounts => "mounts",
            Stage::Fork => "fork",
            Stage::Session => "session",
            Stage::Stdio => "stdio",
            Stage::Signals => "signals",
            Stage::Rlimits => "rlimits",
            Stage::Capabilities => "capabilities",
            Stage::Ids => "ids",
            Stage::NoNewPrivs => "no_new_privs",
            Stage::Workdir => "workdir",
            Stage::Landlock => "landlock",
            Stage::Seccomp => "seccomp",
            Stage::Exec => "exec",
            Stage::Namespaces => "namespaces",
            Stage::Sysctls => "sysctls",
        }
    }

    fn from_u8(value: u8) -> Option<Self> {
        Self::ALL.into_iter().find(|stage| *stage as u8 == value)
    }
}

impl fmt::Display for Stage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A failed step: which stage, and the call that failed in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageError {
    pub stage: Stage,
    pub error: SysError,
}

impl From<StageError> for JailError {
    fn from(failed: StageError) -> Self {
        JailError::Stage {
            stage: failed.stage,
            error: failed.error,
        }
    }
}

/// From the jail to warden.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToParent {
    /// A step failed; the program will not start.
    StageFailed(StageError),
    /// The program ended with this raw wait status; everything else in the jail was killed.
    Exited { status: i32 },
    /// A forked run's init has its own file systems (`template.rs`): its root can be read.
    Mounted,
}

/// From warden to the jail's init.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToChild {
    /// The id maps are written: go ahead.
    Go,
    /// warden is done with the jail: exit (which kills the namespace).
    Finish,
}

const MAX: usize = 1024;
const TAG_FAILED: u8 = 2;
const TAG_EXITED: u8 = 3;
const TAG_MOUNTED: u8 = 4;
const TAG_GO: u8 = 10;
const TAG_FINISH: u8 = 11;

/// Encodes a message into `buf`; returns its length.
fn encode(msg: &ToParent, buf: &mut [u8; MAX]) -> usize {
    match msg {
        ToParent::Mounted => {
            buf[0] = TAG_MOUNTED;
            1
        }
        ToParent::Exited { status } => {
            buf[0] = TAG_EXITED;
            buf[1..5].copy_from_slice(&status.to_le_bytes());
            5
        }
        ToParent::StageFailed(StageError { stage, error: err }) => {
            buf[0] = TAG_FAILED;
            buf[1] = *stage as u8;
            buf[2..6].copy_from_slice(&(err.errno as i32).to_le_bytes());
            let call = &err.call.as_bytes()[..err.call.len().min(64)];
            buf[6] = call.len() as u8;
            buf[7..7 + call.len()].copy_from_slice(call);
            let at = 7 + call.len();
            let arg = &err.arg.as_bytes()[..err.arg.len().min(MAX - at - 2)];
            buf[at..at + 2].copy_from_slice(&(arg.len() as u16).to_le_bytes());
            buf[at + 2..at + 2 + arg.len()].copy_from_slice(arg);
            at + 2 + arg.len()
        }
    }
}

fn decode(buf: &[u8]) -> Option<ToParent> {
    match *buf.first()? {
        TAG_MOUNTED => Some(ToParent::Mounted),
        TAG_EXITED => Some(ToParent::Exited {
            status: i32::from_le_bytes(buf.get(1..5)?.try_into().ok()?),
        }),
        TAG_FAILED => {
            let stage = Stage::from_u8(*buf.get(1)?)?;
            let errno = Errno::from_raw(i32::from_le_bytes(buf.get(2..6)?.try_into().ok()?));
            let call_len = usize::from(*buf.get(6)?);
            let call = String::from_utf8_lossy(buf.get(7..7 + call_len)?).into_owned();
            let at = 7 + call_len;
            let arg_len = usize::from(u16::from_le_bytes(buf.get(at..at + 2)?.try_into().ok()?));
            let arg = String::from_utf8_lossy(buf.get(at + 2..at + 2 + arg_len)?).into_owned();
            Some(ToParent::StageFailed(StageError {
                stage,
                error: SysError {
                    call: Cow::Owned(call),
                    arg,
                    errno,
                },
            }))
        }
        _ => None,
    }
}

/// Sends a message to warden (jail side).
pub fn send_to_parent(sock: BorrowedFd<'_>, msg: &ToParent) -> Result<(), Errno> {
    let mut buf = [0u8; MAX];
    let len = encode(msg, &mut buf);
    send(sock.as_raw_fd(), &buf[..len], MsgFlags::MSG_NOSIGNAL).map(drop)
}

/// Receives one message from the jail (warden side). `Ok(None)`: the jail closed its end.
pub fn recv_from_child(sock: BorrowedFd<'_>) -> Result<Option<ToParent>, Errno> {
    let mut buf = [0u8; MAX];
    let len = loop {
        match recv(sock.as_raw_fd(), &mut buf, MsgFlags::MSG_DONTWAIT) {
            Ok(len) => break len,
            Err(Errno::EINTR) => continue,
            Err(errno) => return Err(errno),
        }
    };
    if len == 0 {
        return Ok(None);
    }
    decode(&buf[..len]).map(Some).ok_or(Errno::EBADMSG)
}

/// Sends a message to the jail's init (warden side).
pub fn send_to_child(sock: BorrowedFd<'_>, msg: ToChild) -> Result<(), Errno> {
    let tag = match msg {
        ToChild::Go => TAG_GO,
        ToChild::Finish => TAG_FINISH,
    };
    send(sock.as_raw_fd(), &[tag], MsgFlags::MSG_NOSIGNAL).map(drop)
}

/// Waits for a message from warden (jail side). `Ok(None)`: warden closed its end (it is gone).
pub fn recv_from_parent(sock: BorrowedFd<'_>) -> Result<Option<ToChild>, Errno> {
    let mut buf = [0u8; 8];
    loop {
        match recv(sock.as_raw_fd(), &mut buf, MsgFlags::empty()) {
            Ok(0) => return Ok(None),
            Ok(_) => {
                return match buf[0] {
                    TAG_GO => Ok(Some(ToChild::Go)),
                    TAG_FINISH => Ok(Some(ToChild::Finish)),
                    _ => Err(Errno::EBADMSG),
                }
            }
            Err(Errno::EINTR) => continue,
            Err(errno) => return Err(errno),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn stage_failures_round_trip() {
        let msg = ToParent::StageFailed(StageError {
            stage: Stage::Mounts,
            error: SysError::new("pivot_root", "/run/warden/root", Errno::EINVAL),
        });
        let mut buf = [0u8; MAX];
        let len = encode(&msg, &mut buf);
        assert_eq!(decode(&buf[..len]), Some(msg));
    }

    #[test]
    fn long_arguments_are_truncated_not_overflowed() {
        let msg = ToParent::StageFailed(StageError {
            stage: Stage::Landlock,
            error: SysError {
                call: Cow::Owned("c".repeat(300)),
                arg: "a".repeat(5000),
                errno: Errno::EPERM,
            },
        });
        let mut buf = [0u8; MAX];
        let len = encode(&msg, &mut buf);
        assert!(len <= MAX);
        let Some(ToParent::StageFailed(decoded)) = decode(&buf[..len]) else {
            panic!("not decoded")
        };
        assert_eq!(decoded.error.call.len(), 64);
        assert!(decoded.error.arg.len() < 1024);
    }

    #[test]
    fn exits_and_garbage() {
        let mut buf = [0u8; MAX];
        let len = encode(&ToParent::Exited { status: 9 }, &mut buf);
        assert_eq!(decode(&buf[..len]), Some(ToParent::Exited { status: 9 }));
        assert_eq!(decode(&[99]), None);
        assert_eq!(decode(&[]), None);
    }

    #[test]
    fn messages_cross_a_socket_pair() {
        use nix::sys::socket::{socketpair, AddressFamily, SockFlag, SockType};
        use std::os::fd::AsFd;
        let (parent, child) = socketpair(
            AddressFamily::Unix,
            SockType::SeqPacket,
            None,
            SockFlag::SOCK_CLOEXEC,
        )
        .unwrap();
        send_to_parent(child.as_fd(), &ToParent::Exited { status: 3 }).unwrap();
        assert_eq!(
            recv_from_child(parent.as_fd()).unwrap(),
            Some(ToParent::Exited { status: 3 })
        );
        send_to_child(parent.as_fd(), ToChild::Go).unwrap();
        assert_eq!(recv_from_parent(child.as_fd()).unwrap(), Some(ToChild::Go));
        drop(parent);
        assert_eq!(recv_from_parent(child.as_fd()).unwrap(), None);
    }
}
