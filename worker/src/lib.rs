//! warden's worker processes: the single-threaded side of `warden serve` and `warden mcp`.
//!
//! A process with several threads cannot create a user namespace (`unshare(CLONE_NEWUSER)` fails
//! with EINVAL), and the server is multithreaded (tokio), so every jail is made by a worker: a
//! fresh `warden worker` per cold run ([`run`]), a `warden session-worker` per session
//! ([`session`]), per pooled jail ([`pooled`]) and per policy's template ([`template`]). This crate
//! has no async runtime, and `cargo tree -p warden-worker -e normal` shows none (docs/architecture.md).
//!
//! Owns: the protocol the server speaks with its workers ([`wire`]), the worker side of each
//! message, the policy hand-off every worker starts with ([`handoff`]), and the checks on a run's
//! input files ([`inputs`], shared with the server, which applies them first).
//!
//! Does not own: spawning, supervising or reading workers (`warden-service`), the run pipeline and
//! sessions (`warden-gateway`), the jail (`warden-jail`).

pub mod handoff;
pub mod inputs;
pub mod pooled;
pub mod run;
pub mod session;
pub mod template;
pub mod wire;

use std::io::{BufRead, Write};
use std::path::Path;

use anyhow::Context;

use wire::FirstLine;

/// `warden session-worker`: reads its first line and serves it — a session, a pooled jail or a
/// policy's template ([`FirstLine`]). `dir` is the worker's private directory (the server made
/// it, points `WARDEN_RUN_DIR` at it, and removes it).
pub fn serve_session_worker(dir: &Path) -> anyhow::Result<()> {
    run::arm_parent_death()?;
    let stdin = std::io::stdin();
    let mut input = stdin.lock();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(());
    }
    match first_line(&line)? {
        FirstLine::Template(job) => template::serve_template(job, dir, &mut input, &mut out),
        FirstLine::Pool(job) => pooled::serve_pooled(job, dir, &mut input, &mut out),
        FirstLine::Session(job) => session::serve_session(&job, dir, &mut input, &mut out),
    }
}

/// The first line, or why it is none of them (a session job's own error: the shape most lines
/// have).
fn first_line(line: &str) -> anyhow::Result<FirstLine> {
    serde_json::from_str(line).or_else(|_| {
        serde_json::from_str::<wire::SessionJob>(line)
            .map(|job| FirstLine::Session(Box::new(job)))
            .context("the session job on standard input is not valid")
    })
}

/// Writes one protocol message as a JSON line and flushes it.
pub(crate) fn send(out: &mut impl Write, message: &impl serde::Serialize) -> anyhow::Result<()> {
    serde_json::to_writer(&mut *out, message)?;
    out.write_all(b"\n")?;
    out.flush()?;
    Ok(())
}
