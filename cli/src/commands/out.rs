//! Standard output that a closed pipe does not turn into a crash (`warden check … | head`).
//!
//! Rust's runtime ignores SIGPIPE, so a write to a pipe whose reader left fails with `EPIPE`, and
//! `println!` panics on it ("failed printing to stdout: Broken pipe"). warden must not die there:
//! `warden run` still has a jail to tear down and an exit code to give. So every command prints
//! through here: once the reader is gone, the rest of the output is dropped quietly and the command
//! ends as it would have, with its own exit code (what ripgrep and most Unix tools do). Any other
//! write error (a full disk under a redirection) is kept and reported by `main` once the command has
//! finished, with exit code 2: output was lost, and the caller must know.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Set once a write found the reader gone.
static CLOSED: AtomicBool = AtomicBool::new(false);
/// The first write error that was not a closed pipe.
static FAILED: OnceLock<String> = OnceLock::new();

/// Writes `bytes` to standard output and flushes. A closed pipe drops this and later output; any
/// other error is kept for [`failure`].
pub fn write_all(bytes: &[u8]) {
    if CLOSED.load(Ordering::Relaxed) || FAILED.get().is_some() {
        return;
    }
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => {}
        Err(err) if err.kind() == ErrorKind::BrokenPipe => CLOSED.store(true, Ordering::Relaxed),
        Err(err) => {
            let _ = FAILED.set(format!("cannot write to standard output: {err}"));
        }
    }
}

/// The write error that lost output (not a closed pipe), if one happened.
pub fn failure() -> Option<&'static str> {
    FAILED.get().map(String::as_str)
}

/// `println!` for warden's commands: formats, then [`write_all`].
macro_rules! outln {
    () => {
        $crate::commands::out::write_all(b"\n")
    };
    ($($arg:tt)*) => {
        $crate::commands::out::write_all(format!("{}\n", format_args!($($arg)*)).as_bytes())
    };
}

/// `print!` for warden's commands (see [`outln!`]).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::commands::out::write_all(format!($($arg)*).as_bytes())
    };
}

pub(crate) use {out, outln};
