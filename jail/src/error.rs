//! Why a run could not be set up, and the one shape a failed system call takes.
//!
//! Owns: [`SysError`], a call that failed with what it was called on and its errno, so a user reads
//! "pivot_root(/run/warden/root) failed: EINVAL" rather than "setup failed" — the one shape of a
//! failed system call on either side of the jail (warden's own file operations on paths, such as
//! cgroupfs writes, are [`JailError::Io`] with the path); and [`JailError`], why a run could not be
//! set up (or why its end is unknown), each variant naming what failed and on what.
//!
//! Does not own: how a program that *did* run ended (that is [`crate::Outcome`]), nor the wire format
//! a jail-side failure crosses to warden in (`message.rs`).

use std::borrow::Cow;
use std::fmt::Display;
use std::path::PathBuf;

use nix::errno::Errno;

use crate::config::Layer;
use crate::message::Stage;

/// A call that failed: which call, on what, and the errno.
///
/// `call` names the call as a user would look it up (`mount(proc)`, `prctl(PR_CAPBSET_DROP)`); it is
/// borrowed for calls named in warden's code and owned only when it crossed the message socket from
/// the jail. `arg` is empty for calls without an interesting argument.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{call}({arg}) failed: {errno}")]
pub struct SysError {
    pub call: Cow<'static, str>,
    pub arg: String,
    pub errno: Errno,
}

impl SysError {
    /// `call(arg)` failed with `errno`.
    pub fn new(call: &'static str, arg: impl Display, errno: Errno) -> Self {
        SysError {
            call: Cow::Borrowed(call),
            arg: arg.to_string(),
            errno,
        }
    }

    /// For `map_err`: `call(arg)` failed with the errno it is given. `arg` is formatted only then.
    pub(crate) fn at(call: &'static str, arg: impl Display) -> impl FnOnce(Errno) -> Self {
        move |errno| SysError::new(call, arg, errno)
    }

    /// `call(arg)` failed with an I/O error (its errno, or `EIO` when it carries none).
    pub(crate) fn io(call: &'static str, arg: impl Display, err: &std::io::Error) -> Self {
        let errno = Errno::from_raw(err.raw_os_error().unwrap_or(libc::EIO));
        SysError::new(call, arg, errno)
    }
}

/// A run that could not be set up (nothing of the program ran), or whose end is unknown
/// ([`JailError::InitLost`]).
#[derive(Debug, thiserror::Error)]
pub enum JailError {
    /// The settings are inconsistent on their own.
    #[error("invalid jail configuration: {0}")]
    Config(String),
    /// The interpreter cannot be used.
    #[error("interpreter {path}: {reason}")]
    Interpreter { path: PathBuf, reason: String },
    /// The policy requires a layer this host cannot enforce (fail closed).
    #[error("required layer `{layer}` is not available: {reason}")]
    LayerUnavailable { layer: Layer, reason: String },
    /// A system call in warden's own process failed.
    #[error(transparent)]
    Syscall(#[from] SysError),
    /// A file operation in warden's own process failed.
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A confinement step inside the jail failed; the program never started.
    #[error("jail stage `{stage}`: {error}")]
    Stage { stage: Stage, error: SysError },
    /// The jail's init ended without reporting how the program ended, and warden did not kill it
    /// (a bug in the jail, or something outside killed it): whether and how the program ran is
    /// unknown. Says how the init ended.
    #[error("the jail's init ended without reporting how the program ended: {0}")]
    InitLost(String),
    /// warden's bootstrap could not install the runtime layer or the exec ban; the program never
    /// started. Carries the bootstrap's own line (which step, and the error).
    #[error("{0}")]
    Bootstrap(String),
    /// warden received this signal during the run; the jail was killed and cleaned up.
    #[error("interrupted by signal {0}; the jail was killed")]
    Interrupted(i32),
    /// `jail::run` was called from a process with several threads.
    #[error(
        "the jail must be spawned from a single-threaded process (this one has {0} threads); \
         spawn `warden` as a subprocess from a multi-threaded server"
    )]
    Multithreaded(usize),
}

impl JailError {
    pub(crate) fn syscall(call: &'static str, arg: impl Display, errno: Errno) -> Self {
        JailError::Syscall(SysError::new(call, arg, errno))
    }

    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        JailError::Io {
            what,
            path: path.into(),
            source,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_call_names_the_call_its_argument_and_the_errno() {
        let err = SysError::new("pivot_root", "/run/warden/root", Errno::EINVAL);
        assert_eq!(
            err.to_string(),
            "pivot_root(/run/warden/root) failed: EINVAL: Invalid argument"
        );
        assert_eq!(JailError::from(err.clone()).to_string(), err.to_string());
        let stage = JailError::Stage {
            stage: Stage::Mounts,
            error: err,
        };
        assert_eq!(
            stage.to_string(),
            "jail stage `mounts`: pivot_root(/run/warden/root) failed: EINVAL: Invalid argument"
        );
    }

    #[test]
    fn io_errors_keep_their_errno() {
        let err = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(SysError::io("open", "/x", &err).errno, Errno::ENOENT);
        let other = std::io::Error::other("no errno");
        assert_eq!(SysError::io("copy", "/x", &other).errno, Errno::EIO);
    }
}
