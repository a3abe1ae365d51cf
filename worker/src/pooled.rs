//! A pooled jail's worker (`warden session-worker` given a [`PoolJob`] as its first line): starts a
//! session's jail for the policy, imports the policy's `[runtime] preload` in it, answers
//! [`PoolAnswer::Ready`], then waits for one [`Claim`]:
//!
//! - `run`: one program ([`Job`](crate::wire::Job), as `warden worker` reads it) delivered into the waiting
//!   interpreter and run as a cold run would run it; the worker prints one [`WorkerReply`] line, as
//!   `warden worker` does, and ends (with it the jail);
//! - `session`: the jail becomes an ordinary session ([`SessionJob`](crate::wire::SessionJob): its limits, its inputs); from
//!   there on the worker speaks the session protocol (`session.rs`).
//!
//! The end of its input before a claim ends the jail cleanly. The worker trusts the server (its
//! parent) and nothing that comes out of the jail.
//!
//! A worker whose run was in a forked jail is not spent with it: once the record is sent and the
//! jail has ended (every process, mount, cgroup and directory of it), and the worker holds
//! exactly what it held before its first jail (the same open descriptors, one thread, an empty
//! private directory), it answers [`PoolAnswer::Idle`] and reads its next [`PoolJob`], for a new
//! jail forked from the template (the server may send the end of its input instead). The jail is
//! new; only warden's own process, which never runs untrusted code, is used again: the exec, the
//! loader and the exit of a worker per run are spared. Anything unexpected ends the worker.

use std::io::{BufRead, Write};
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use warden_gateway::pipeline::{self, AppliedLimits};
use warden_gateway::session::{Origin, Session, SessionOptions};

use crate::handoff::Handoff;
use crate::run::{self, Warm};
use crate::send;
use crate::wire::{Claim, PoolAnswer, PoolJob, PoolStart, WorkerReply};

/// The pooled worker, after its first line: serves it, and the jobs that follow it while the
/// worker may be used again (see the module's documentation).
pub fn serve_pooled(
    first: PoolJob,
    dir: &Path,
    input: &mut impl BufRead,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    // The trace file (when tracing) is opened before the baseline is taken.
    warden_jail::trace("pool: worker up");
    let before = Baseline::of(dir)?;
    let mut last = LastPolicy::default();
    let mut job = first;
    loop {
        if serve_one(job.pool, dir, input, out, &mut last)? == Served::Done {
            return Ok(());
        }
        warden_jail::defer_teardown(false);
        // What the run left in the private directory (its inputs, its returned files) goes.
        empty_dir(dir);
        if let Err(why) = before.holds(dir) {
            // Not used again: the server sees the worker end, as a worker that is not reused.
            warden_jail::trace(&format!("pool: worker not reused: {why}"));
            return Ok(());
        }
        send(out, &PoolAnswer::Idle)?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(());
        }
        job = serde_json::from_str(&line).context("an idle pooled worker takes pool jobs only")?;
    }
}

/// How one pooled job ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Served {
    /// The worker ends (the jail was not forked, it served a session, or was discarded).
    Done,
    /// A run in a forked jail was served and the jail has ended: the worker may be used again.
    Ran,
}

/// What a pooled worker holds before its first jail, which it must hold again (and nothing
/// more) to be used for another: its open descriptors, a single thread, an empty directory.
struct Baseline {
    fds: Vec<String>,
}

impl Baseline {
    fn of(dir: &Path) -> anyhow::Result<Self> {
        let before = Self { fds: open_fds()? };
        if let Err(why) = before.holds(dir) {
            anyhow::bail!("the pooled worker does not start clean: {why}");
        }
        Ok(before)
    }

    /// `Err`: what differs now.
    fn holds(&self, dir: &Path) -> Result<(), String> {
        let fds = open_fds().map_err(|err| format!("{err:#}"))?;
        if fds != self.fds {
            return Err(format!("open descriptors {fds:?}, not {:?}", self.fds));
        }
        let threads =
            warden_jail::thread_count().map_err(|err| format!("/proc/self/task: {err}"))?;
        if threads != 1 {
            return Err(format!("{threads} threads"));
        }
        let left: Vec<String> = std::fs::read_dir(dir)
            .map_err(|err| format!("{}: {err}", dir.display()))?
            .filter_map(|entry| Some(entry.ok()?.file_name().to_string_lossy().into_owned()))
            .collect();
        if !left.is_empty() {
            return Err(format!("{left:?} left in {}", dir.display()));
        }
        Ok(())
    }
}

/// Removes everything in `dir` (best effort: what stays is seen by [`Baseline::holds`]).
fn empty_dir(dir: &Path) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => warden_gateway::files::remove_tree(&path),
            _ => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

/// This process's open descriptors, sorted (the one reading the list left out).
fn open_fds() -> anyhow::Result<Vec<String>> {
    let list = std::fs::read_dir("/proc/self/fd").context("/proc/self/fd")?;
    let mut fds: Vec<String> = list
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let target = std::fs::read_link(entry.path()).ok()?;
            Some(format!(
                "{}={}",
                entry.file_name().to_string_lossy(),
                target.display()
            ))
        })
        .collect();
    fds.sort();
    Ok(fds)
}

/// The policy of a worker's last jail, kept while it is used again: the next jail of the same
/// rules (the same digest, base directory and resolved text) does not read and index them again.
#[derive(Default)]
struct LastPolicy(Option<(PoolStart, warden_policy::Policy)>);

impl LastPolicy {
    /// The policy of `start`: the one kept when it is the same, else read from `start`.
    fn take_for(&mut self, start: &PoolStart) -> anyhow::Result<warden_policy::Policy> {
        match self.0.take() {
            Some((kept, policy))
                if kept.policy_sha256 == start.policy_sha256
                    && kept.policy_base_dir == start.policy_base_dir
                    && kept.policy_resolved.is_some()
                    && kept.policy_resolved == start.policy_resolved =>
            {
                Ok(policy)
            }
            _ => Handoff::from(start).policy(),
        }
    }

    fn keep(&mut self, start: PoolStart, policy: warden_policy::Policy) {
        self.0 = Some((start, policy));
    }
}

/// One pooled job: its jail, and its claim.
fn serve_one(
    start: PoolStart,
    dir: &Path,
    input: &mut impl BufRead,
    out: &mut impl Write,
    last: &mut LastPolicy,
) -> anyhow::Result<Served> {
    if start.defer {
        return serve_deferred(start, dir, input, out, last);
    }
    let (policy, mut session, failed, origin) = match begin(&start, last) {
        Ok(started) => started,
        Err(err) => {
            send(
                out,
                &PoolAnswer::Failed {
                    message: format!("{err:#}"),
                },
            )?;
            return Ok(Served::Done);
        }
    };
    let forked = origin.is_ok();
    send(
        out,
        &PoolAnswer::Ready {
            layers: Some(session.layers().clone()),
            preload_failed: failed,
            forked,
            template_error: origin.err(),
            jail_pid: session.jail_pid(),
        },
    )?;
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        // Discarded unused: the session ends cleanly when dropped.
        return Ok(Served::Done);
    }
    warden_jail::trace("pool: claim read");
    let claim: Claim = serde_json::from_str(&line).context("the claim is not valid")?;
    match claim {
        Claim::Run { job } => {
            // The outcome is complete once the program ended, every other process of the jail is
            // gone, the pipes are closed, the work dir is copied back and the counters are read:
            // the record goes out then, and the init's exit and the cgroup's removal after it.
            warden_jail::defer_teardown(true);
            let reply = if job.policy_sha256 != start.policy_sha256 {
                WorkerReply::NotTaken("another policy's jail".to_owned())
            } else if session.ended().is_some() {
                WorkerReply::NotTaken("the jail has ended".to_owned())
            } else {
                // The policy this jail was started for (the same digest): parsed once, at start.
                reply_of(run::run_with(
                    &job,
                    dir,
                    &policy,
                    Some(Warm::Pooled(&mut session)),
                ))
            };
            // The record is complete (the program and every process of its jail have ended, its
            // output and files are collected): it goes out now, and the rest of the jail's end
            // (its init's exit, the cgroup's and the temporary directories' removal) happens
            // after it, before this worker exits. The server counts the run slot busy until
            // then and reaps this worker.
            warden_jail::trace("pool: record ready");
            let sent = send(out, &reply);
            warden_jail::trace("pool: record sent");
            drop(session);
            let ended = warden_jail::finish_teardown();
            warden_jail::trace("pool: jail ended");
            sent.and(ended.map_err(anyhow::Error::from))?;
            // Only a worker whose jail was forked is used again: one that started its own jail
            // (a copy of itself) is not.
            if !forked {
                return Ok(Served::Done);
            }
            last.keep(start, policy);
            Ok(Served::Ran)
        }
        Claim::Session { job } => {
            anyhow::ensure!(
                job.policy_sha256 == start.policy_sha256,
                "a session of another policy claimed this jail"
            );
            let applied = AppliedLimits::of(&policy, &job.limits);
            session.set_limits(&pipeline::effective_limits(&policy, &job.limits));
            crate::session::serve_started(session, &job.inputs, applied, input, out)?;
            Ok(Served::Done)
        }
    }
}

/// The started jail; `Ok(())` when it was forked from the template, else why not (or that no
/// template was given).
type Begun = (
    warden_policy::Policy,
    Session,
    Vec<String>,
    Result<(), String>,
);

/// A deferred pooled worker: ready at once, it forks its jail from the template when the claim
/// (a run) comes, with the run's input files copied in.
fn serve_deferred(
    start: PoolStart,
    dir: &Path,
    input: &mut impl BufRead,
    out: &mut impl Write,
    last: &mut LastPolicy,
) -> anyhow::Result<Served> {
    let ready = match (&start.template, last.take_for(&start)) {
        (Some(channel), Ok(policy)) => Ok((channel, policy)),
        (None, _) => Err("a deferred jail needs a template".to_owned()),
        (_, Err(err)) => Err(format!("{err:#}")),
    };
    let (channel, policy) = match ready {
        Ok(ready) => ready,
        Err(message) => {
            send(out, &PoolAnswer::Failed { message })?;
            return Ok(Served::Done);
        }
    };
    send(
        out,
        &PoolAnswer::Ready {
            layers: None,
            preload_failed: Vec::new(),
            forked: true,
            template_error: None,
            jail_pid: None,
        },
    )?;
    let mut line = String::new();
    if input.read_line(&mut line)? == 0 {
        return Ok(Served::Done);
    }
    let claim: Claim = serde_json::from_str(&line).context("the claim is not valid")?;
    // As a pooled run's: the record before the jail's teardown.
    warden_jail::defer_teardown(true);
    let reply = match claim {
        Claim::Run { job } if job.policy_sha256 == start.policy_sha256 => {
            let warm = Warm::Fork {
                channel,
                lifetime: Duration::from_millis(start.lifetime_ms.max(1)),
            };
            reply_of(run::run_with(&job, dir, &policy, Some(warm)))
        }
        Claim::Run { .. } => WorkerReply::NotTaken("another policy's jail".to_owned()),
        Claim::Session { .. } => {
            WorkerReply::NotTaken("a deferred jail serves runs only".to_owned())
        }
    };
    let sent = send(out, &reply);
    let ended = warden_jail::finish_teardown();
    sent.and(ended.map_err(anyhow::Error::from))?;
    last.keep(start, policy);
    Ok(Served::Ran)
}

/// The worker's reply for a pooled run's result. A warm jail that never took the program (the
/// waiting one was lost with its template or refused the delivery, or none could be forked):
/// nothing ran, and the "not taken" reply makes the server run the program cold.
fn reply_of(result: anyhow::Result<pipeline::RunRecord>) -> WorkerReply {
    match result {
        Ok(record) => WorkerReply::Record(Box::new(record)),
        Err(err) if err.downcast_ref::<pipeline::NotTaken>().is_some() => {
            WorkerReply::NotTaken(format!("{err:#}"))
        }
        Err(err) => WorkerReply::Error(format!("{err:#}")),
    }
}

fn begin(start: &PoolStart, last: &mut LastPolicy) -> anyhow::Result<Begun> {
    let policy = last.take_for(start)?;
    let options = SessionOptions {
        lifetime: Duration::from_millis(start.lifetime_ms.max(1)),
        ..SessionOptions::default()
    };
    let why_not = match &start.template {
        Some(channel) => {
            match Session::start_from(&policy, &options, Origin::Fork(channel)) {
                // What the template preloaded is this jail's, hidden until imported.
                Ok(session) => return Ok((policy, session, Vec::new(), Ok(()))),
                Err(err) => format!("{err:#}"),
            }
        }
        None => "no template".to_owned(),
    };
    let mut session = Session::start(&policy, &options)?;
    let failed = session.preload(&policy.preload)?;
    Ok((policy, session, failed, Err(why_not)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn start_of(text: &str) -> PoolStart {
        let (policy, resolved) = warden_policy::Policy::from_toml_with_json(text, None).unwrap();
        PoolStart {
            policy_text: text.to_owned(),
            policy_resolved: Some(resolved),
            policy_base_dir: None,
            policy_sha256: policy.sha256,
            lifetime_ms: 1,
            template: None,
            defer: false,
        }
    }

    /// A reused worker's kept policy serves only a jail of the same rules; any other gets its
    /// own, read from its job.
    #[test]
    fn a_kept_policy_serves_only_the_same_rules() {
        let default = start_of(warden_policy::settings::DEFAULT_RULES);
        let other_text = format!(
            "{}\n# another policy\n",
            warden_policy::settings::DEFAULT_RULES
        );
        let other = start_of(&other_text);
        assert_ne!(default.policy_sha256, other.policy_sha256);
        let mut last = LastPolicy::default();
        let policy = last.take_for(&default).unwrap();
        assert_eq!(policy.sha256, default.policy_sha256);
        last.keep(default.clone(), policy);
        assert_eq!(last.take_for(&other).unwrap().sha256, other.policy_sha256);
        // Taken once: the next jail reads it again unless it was kept again.
        let policy = last.take_for(&default).unwrap();
        last.keep(default.clone(), policy);
        let mut moved = default.clone();
        moved.policy_base_dir = Some(PathBuf::from("/elsewhere"));
        assert!(last.take_for(&moved).is_ok());
        assert!(last.0.is_none());
        // A job whose text does not match its digest is refused, kept policy or not.
        let policy = last.take_for(&default).unwrap();
        last.keep(default.clone(), policy);
        let mut forged = other.clone();
        forged.policy_sha256 = default.policy_sha256.clone();
        assert!(last.take_for(&forged).is_err());
    }
}
