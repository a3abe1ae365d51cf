//! A policy's template (`warden session-worker` given a [`TemplateJob`] as its first line): starts
//! a session's jail in template mode, imports the policy's `[runtime] preload` in it once, makes it
//! a template (`warden_jail::template`), then relays fork requests to it from a Unix socket in its
//! private directory, one at a time, until its standard input ends. Each pooled worker of the
//! policy ([`crate::pooled`]) asks it for its run's jail there, instead of starting an interpreter
//! and importing the data stack itself.
//!
//! The relay trusts its callers no more than the socket's place allows (the server's private
//! state: the server's own workers) and nothing that comes out of the jail: a request and its
//! descriptors go through as they came, the template's answer and the pidfd with it come back.
//!
//! At the end of its input the template's channel is closed: the template stops forking, waits
//! for every run it made (they live in namespaces below its own) and exits; then the worker exits.

use std::io::{BufRead, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::socket::{
    accept4, bind, listen, socket, AddressFamily, Backlog, SockFlag, SockType, UnixAddr,
};
use warden_gateway::session::{Origin, Session, SessionOptions};
use warden_jail::template::{recv_with_fds, send_with_fds};

use crate::handoff::Handoff;
use crate::send;
use crate::wire::{PoolStart, TemplateAnswer, TemplateJob};

/// How long the template may take to answer one fork request.
const FORK_ANSWER: Duration = Duration::from_secs(10);
/// How long a caller may take to send its request once connected.
const REQUEST_TIME: Duration = Duration::from_secs(5);

/// The template worker, after its first line.
pub fn serve_template(
    job: TemplateJob,
    dir: &Path,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let started = begin(&job.template, dir);
    let (session, failed, listener, socket) = match started {
        Ok(started) => started,
        Err(err) => {
            return send(
                out,
                &TemplateAnswer::Failed {
                    message: format!("{err:#}"),
                },
            )
        }
    };
    send(
        out,
        &TemplateAnswer::Ready {
            socket: socket.clone(),
            preload_failed: failed,
        },
    )?;
    let result = relay(&session, listener.as_fd(), input);
    drop(listener);
    let _ = std::fs::remove_file(&socket);
    // No more requests: the template waits for its runs, then ends; so does its jail.
    session.close_template(Duration::from_millis(job.template.lifetime_ms.max(1)));
    result
}

type Started = (Session, Vec<String>, std::os::fd::OwnedFd, PathBuf);

fn begin(start: &PoolStart, dir: &Path) -> anyhow::Result<Started> {
    let policy = Handoff::from(start).policy()?;
    let options = SessionOptions {
        lifetime: Duration::from_millis(start.lifetime_ms.max(1)),
        ..SessionOptions::default()
    };
    let mut session = Session::start_from(&policy, &options, Origin::Template)?;
    let failed = session.preload(&policy.preload)?;
    session.become_template()?;
    let socket = dir.join("fork.sock");
    let listener = socket_listening(&socket)?;
    Ok((session, failed, listener, socket))
}

fn socket_listening(path: &Path) -> anyhow::Result<std::os::fd::OwnedFd> {
    let sock = socket(
        AddressFamily::Unix,
        SockType::SeqPacket,
        SockFlag::SOCK_CLOEXEC,
        None,
    )
    .context("socket(AF_UNIX, SOCK_SEQPACKET)")?;
    let address = UnixAddr::new(path).context("the template's socket path")?;
    bind(sock.as_raw_fd(), &address).with_context(|| format!("bind {}", path.display()))?;
    listen(&sock, Backlog::new(64).unwrap_or(Backlog::MAXCONN)).context("listen")?;
    Ok(sock)
}

/// Relays requests until standard input ends (or the template is gone).
fn relay(
    session: &Session,
    listener: BorrowedFd<'_>,
    input: &mut impl BufRead,
) -> anyhow::Result<()> {
    let Some(channel) = session.template_channel() else {
        anyhow::bail!("the template has no channel");
    };
    let stdin = std::io::stdin();
    loop {
        let mut fds = [
            PollFd::new(listener, PollFlags::POLLIN),
            PollFd::new(stdin.as_fd(), PollFlags::POLLIN),
            PollFd::new(channel, PollFlags::empty()),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {}
            Err(nix::errno::Errno::EINTR) => continue,
            Err(errno) => return Err(errno).context("poll"),
        }
        let hung = |fd: &PollFd<'_>| {
            fd.revents()
                .is_some_and(|r| r.intersects(PollFlags::POLLHUP | PollFlags::POLLERR))
        };
        if hung(&fds[2]) {
            anyhow::bail!("the template ended");
        }
        if fds[1].revents().is_some_and(|r| !r.is_empty()) {
            let mut line = String::new();
            if input.read_line(&mut line)? == 0 {
                return Ok(());
            }
        }
        if fds[0]
            .revents()
            .is_some_and(|r| r.contains(PollFlags::POLLIN))
        {
            let Ok(conn) = accept4(listener.as_raw_fd(), SockFlag::SOCK_CLOEXEC) else {
                continue;
            };
            // SAFETY: accept4 returned a new descriptor that nothing else owns.
            let conn =
                unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(conn) };
            if let Err(err) = relay_one(conn.as_fd(), channel) {
                warden_jail::trace(&format!("template: a request failed: {err:#}"));
                if err.downcast_ref::<ChannelLost>().is_some() {
                    anyhow::bail!("the template's channel failed: {err:#}");
                }
            }
        }
    }
}

/// The template's channel failed (the template is gone or out of step).
#[derive(Debug)]
struct ChannelLost;

impl std::fmt::Display for ChannelLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the template's channel failed")
    }
}

impl std::error::Error for ChannelLost {}

fn relay_one(conn: BorrowedFd<'_>, channel: BorrowedFd<'_>) -> anyhow::Result<()> {
    wait_readable(conn, REQUEST_TIME).context("no request")?;
    let (request, fds) = recv_with_fds(conn, 16).context("the request")?;
    if request.is_empty() {
        return Ok(());
    }
    let raw: Vec<RawFd> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    send_with_fds(channel, &request, &raw).map_err(|_| ChannelLost)?;
    drop(fds);
    wait_readable(channel, FORK_ANSWER).map_err(|_| ChannelLost)?;
    let (answer, pidfd) = recv_with_fds(channel, 1).map_err(|_| ChannelLost)?;
    if answer.is_empty() {
        return Err(ChannelLost.into());
    }
    let raw: Vec<RawFd> = pidfd.iter().map(AsRawFd::as_raw_fd).collect();
    send_with_fds(conn, &answer, &raw).context("the answer")?;
    Ok(())
}

fn wait_readable(fd: BorrowedFd<'_>, within: Duration) -> anyhow::Result<()> {
    let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
    let timeout = PollTimeout::try_from(within).unwrap_or(PollTimeout::MAX);
    match poll(&mut fds, timeout) {
        Ok(0) => anyhow::bail!("timed out"),
        Ok(_) => Ok(()),
        Err(errno) => Err(errno.into()),
    }
}
