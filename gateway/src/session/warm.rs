//! A pooled jail: a session's jail started before anything asked for it, its interpreter up and
//! the policy's `[runtime] preload` imported, waiting for one program or one session.
//!
//! Owns: the preload request, and a one-shot run on a jail that is already running ([`WarmRun`]):
//! the program is delivered after the interpreter started, then run by the bootstrap exactly as a
//! cold run's (as `__main__`, under the same file name, its streams the jail's capture pipes). The
//! host side here captures its output within the caps, holds the wall clock from the delivery and
//! ends the jail; the outcome then has the shape a cold run's has.
//!
//! Does not own: the pool (`service/src/pool.rs`), the pipeline around the run
//! (`pipeline::execute_warm`), the driver's side (`jail/src/bootstrap.py`: `_preload`, `run`).

use std::time::{Duration, Instant};

use warden_jail::{Event, LimitHit, Outcome, Status, Stream};
use warden_policy::settings::PolicyLimits;

use super::driver::{Done, Op};
use super::{Capped, Ended, Session, END_GRACE};

/// How long the driver may take to import the preload list.
const PRELOAD_TIMEOUT: Duration = Duration::from_secs(120);
/// How long the driver may take to accept a program.
const DELIVER_TIMEOUT: Duration = Duration::from_secs(10);
/// Output past a stream's cap the host still reads before it ends the run (as the jail's own
/// supervisor does for a cold run).
const DRAIN_BYTES: usize = 16 << 20;

impl Session {
    /// Imports `modules` in the waiting interpreter (a pooled jail, before anything else ran).
    /// `Ok`: the modules that failed to import, each with its error (the jail stays usable).
    pub fn preload(&mut self, modules: &[String]) -> anyhow::Result<Vec<String>> {
        let answer = self.operation_within(Op::Preload { modules }, PRELOAD_TIMEOUT)?;
        Ok(answer.failed.unwrap_or_default())
    }

    /// Makes this (preloaded, unused) jail a template: from now on its interpreter forks each
    /// run's jail on request (`warden_jail::template`), through [`Session::template_channel`].
    pub fn become_template(&mut self) -> anyhow::Result<()> {
        self.operation_within(Op::Template, DELIVER_TIMEOUT)?;
        // Nobody reads a template's output while it forks: dropped, so that it never blocks on
        // a full pipe (a session's output is otherwise held, bounded, until a cell takes it).
        if let Some(jail) = self.jail.as_ref() {
            jail.discard_output();
        }
        Ok(())
    }

    /// A template's channel: fork requests go to it, with their descriptors.
    pub fn template_channel(&self) -> Option<std::os::fd::BorrowedFd<'_>> {
        self.jail.as_ref()?.commands()
    }

    /// Ends a template: its channel closes, so it forks no more, waits for the runs it made (their
    /// namespaces are below its own) and exits; after `within` it is killed, and its runs with it.
    pub fn close_template(mut self, within: Duration) {
        self.ended = Some(Ended::Closed);
        if let Some(jail) = self.jail.take() {
            self.outcome = jail.finish(within).ok();
        }
    }

    /// The limits of this session's cells from now on (a pooled jail claimed for a session):
    /// wall time, CPU time and output caps; the memory limit is the jail's since it started.
    pub fn set_limits(&mut self, limits: &PolicyLimits) {
        let memory = self.policy.limits.memory_bytes;
        self.policy.limits = limits.clone();
        self.policy.limits.memory_bytes = memory;
    }

    /// Runs `text` as a one-shot program in this (pooled, unused) jail and ends the jail: the
    /// outcome of a cold run of the same program, its clocks counted from the delivery. `limits`:
    /// the run's wall time, CPU time and output caps (the jail's memory limit was set when it
    /// started). `Err` with [`Session::execution_count`] still 0: nothing ran, and the jail is
    /// ended (it was lost or refused the program); after the delivery, the jail failed at its end.
    /// `name`: the file name tracebacks show for the program, as a cold run's `program_name`.
    pub fn run_program(
        &mut self,
        text: &str,
        limits: &PolicyLimits,
        name: Option<&str>,
    ) -> Result<Outcome, String> {
        if self.count > 0 || self.ended.is_some() {
            return Err("the pooled jail was already used".into());
        }
        let request = Op::Run {
            code: text,
            cpu_time_ms: limits.cpu_time_ms,
            name,
        };
        // The run's CPU budget holds for its whole tree, as a cold run's: the jail's cgroup counter
        // may grow by at most `cpu_time_ms` from now (the preload and the fork are not the run's).
        if let Some(jail) = self.jail.as_ref() {
            jail.limit_cpu_from_now(limits.cpu_time_ms);
        }
        let answer = match self.operation_within(request, DELIVER_TIMEOUT) {
            Ok(answer) => answer,
            Err(err) => {
                // Not delivered: the jail is ended now, so that the program can never start in
                // it (the caller may run it elsewhere).
                if let Some(mut jail) = self.jail.take() {
                    jail.kill();
                    let _ = jail.finish(END_GRACE);
                }
                self.ended = Some(Ended::Closed);
                return Err(format!("the pooled jail did not take the program: {err:#}"));
            }
        };
        let delivered = Instant::now();
        warden_jail::trace("warm: delivered");
        let cpu_before = answer.cpu_ms.unwrap_or(0);
        self.count = 1;
        let mut stdout = Capped::new(limits.stdout_bytes as usize);
        let mut stderr = Capped::new(limits.stderr_bytes as usize);
        let (mut out_total, mut err_total) = (0usize, 0usize);
        // What came after the driver's last answer is the program's.
        let early = std::mem::take(&mut self.pending);
        out_total += early.len();
        stdout.push(&early);
        let deadline = delivered + Duration::from_millis(limits.wall_time_ms.max(1));
        let mut killed: Option<LimitHit> = None;
        let Some(mut jail) = self.jail.take() else {
            return Err("the pooled jail has ended".into());
        };
        let started = jail.started();
        loop {
            let now = Instant::now();
            if killed.is_none() && now >= deadline {
                killed = Some(LimitHit::WallTime);
                jail.kill();
            }
            let wait = if killed.is_some() {
                Duration::from_millis(100)
            } else {
                deadline - now
            };
            match jail.next_event(wait) {
                None => {}
                Some(Event::Output(Stream::Stdout, bytes)) => {
                    out_total += bytes.len();
                    stdout.push(&bytes);
                }
                Some(Event::Output(Stream::Stderr, bytes)) => {
                    err_total += bytes.len();
                    stderr.push(&bytes);
                }
                Some(Event::Ended) => {
                    warden_jail::trace("warm: jail ended");
                    break;
                }
            }
            let flooded =
                out_total > stdout.cap + DRAIN_BYTES || err_total > stderr.cap + DRAIN_BYTES;
            if flooded && killed.is_none() {
                killed = Some(if out_total > stdout.cap + DRAIN_BYTES {
                    LimitHit::Stdout
                } else {
                    LimitHit::Stderr
                });
                jail.kill();
            }
        }
        self.ended = Some(Ended::Closed);
        let mut outcome = jail.finish(END_GRACE).map_err(|err| err.to_string())?;
        warden_jail::trace("warm: outcome");
        let before = delivered.saturating_duration_since(started).as_millis() as u64;
        outcome.usage.wall_ms = outcome.usage.wall_ms.saturating_sub(before);
        outcome.usage.cpu_ms = outcome.usage.cpu_ms.saturating_sub(cpu_before);
        outcome.stdout_truncated = stdout.over;
        outcome.stderr_truncated = stderr.over;
        outcome.stdout = stdout.data;
        outcome.stderr = stderr.data;
        if let Some(hit) = killed {
            outcome.limits_hit.push(hit);
        }
        if outcome.stdout_truncated {
            outcome.limits_hit.push(LimitHit::Stdout);
        }
        if outcome.stderr_truncated {
            outcome.limits_hit.push(LimitHit::Stderr);
        }
        outcome.limits_hit.sort();
        outcome.limits_hit.dedup();
        outcome.status = status_of(&outcome);
        Ok(outcome)
    }

    /// [`Session::operation`] with its own deadline.
    fn operation_within(&mut self, request: Op<'_>, within: Duration) -> anyhow::Result<Box<Done>> {
        self.operation_deadline = Some(within);
        let answer = self.operation(request);
        self.operation_deadline = None;
        answer
    }
}

/// The status the jail's supervisor gives a cold run with the same limits hit and the same exit.
fn status_of(outcome: &Outcome) -> Status {
    Status::from_limits(&outcome.limits_hit, outcome.exit_code)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn outcome(exit_code: Option<i32>, limits_hit: Vec<LimitHit>) -> Outcome {
        Outcome {
            status: Status::Error,
            exit_code,
            signal: None,
            stdout: Vec::new(),
            stderr: Vec::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            limits_hit,
            usage: warden_jail::Usage::default(),
            layers: warden_jail::Layers {
                namespaces: Vec::new(),
                landlock: "none".into(),
                seccomp: false,
                cgroup: "none".into(),
                rlimits: false,
                memory: String::new(),
                memfd_exec: String::new(),
                runtime_hooks: false,
                exec_ban: false,
            },
            copy_back: None,
        }
    }

    #[test]
    fn a_warm_runs_status_follows_the_supervisors_order() {
        assert_eq!(status_of(&outcome(Some(0), vec![])), Status::Ok);
        assert_eq!(status_of(&outcome(Some(1), vec![])), Status::Error);
        assert_eq!(
            status_of(&outcome(None, vec![LimitHit::Stdout, LimitHit::WallTime])),
            Status::Timeout
        );
        assert_eq!(
            status_of(&outcome(Some(0), vec![LimitHit::Stdout])),
            Status::OutputLimit
        );
        assert_eq!(
            status_of(&outcome(None, vec![LimitHit::Memory, LimitHit::Stdout])),
            Status::MemoryLimit
        );
    }
}
