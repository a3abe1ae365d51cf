//! Why a run could not be set up. Each variant names what failed and on what, so a user reads
//! "pivot_root(/run/warden/root) failed: EINVAL" rather than "setup failed".
//!
//! Owns: [`JailError`]. Does not own: how a program that *did* start ended (that is
//! [`crate::Outcome`]).

use std::path::PathBuf;

use nix::errno::Errno;

use crate::config::Layer;

/// A run that could not be set up. Nothing of the program ran.
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
    #[error("{call}({arg}) failed: {errno}")]
    Syscall {
        call: &'static str,
        arg: String,
        errno: Errno,
    },
    /// A file operation in warden's own process failed.
    #[error("{what} {path}: {source}")]
    Io {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A confinement step inside the jail failed; the program never started.
    #[error("jail stage `{stage}`: {call}({arg}) failed: {errno}")]
    Stage {
        stage: &'static str,
        call: String,
        arg: String,
        errno: Errno,
    },
    /// The jail's init ended without reporting (a bug, or it was killed from outside).
    #[error("the jail's init ended before starting the program: {0}")]
    InitLost(String),
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
    pub(crate) fn syscall(call: &'static str, arg: impl std::fmt::Display, errno: Errno) -> Self {
        JailError::Syscall {
            call,
            arg: arg.to_string(),
            errno,
        }
    }

    pub(crate) fn io(what: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        JailError::Io {
            what,
            path: path.into(),
            source,
        }
    }
}
