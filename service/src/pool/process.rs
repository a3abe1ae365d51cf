//! A pooled worker ([`WorkerProcess`]) as the pool holds it: waiting with its jail ([`Warm`]),
//! claimed and ending its jail ([`Reaping`]), or started and not yet ready, or back idle
//! ([`NewWorker`]); how it is asked for a jail, claimed, and ended.
//!
//! Owns: the pool's side of the pooled worker's protocol (`warden_worker::wire`: the pool job,
//! its answers, the claim of a run). Does not own: which jail is used for what (`pool.rs`), the
//! worker's side (`warden_worker::pooled`).

use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt};
use warden_gateway::pipeline::RunRecord;
use warden_worker::wire::{self, Job, WorkerReply};

use super::*;
use crate::executor::WorkerProcess;

/// A pooled jail, waiting: its worker (pipes, private directory) and what the pool knows of it.
pub struct Warm {
    pub(super) process: WorkerProcess,
    pub(super) born: Instant,
    /// Proportional memory (PSS) of the worker and its jail when it became ready.
    pub(super) pss: u64,
    /// Forked from the policy's template.
    pub(super) forked: bool,
    /// Jails this worker has served before this one.
    pub(super) uses: u64,
}

impl Warm {
    /// The worker, for a session's actor that takes the claimed jail over.
    pub(crate) fn into_process(self) -> WorkerProcess {
        self.process
    }

    /// Whether the worker is still there.
    pub(super) fn alive(&mut self) -> bool {
        matches!(self.process.child.try_wait(), Ok(None))
    }

    /// Runs `job` in this jail; the worker ends with it. `Err(None)`: the jail was gone before it
    /// took the program (the caller runs it cold). The worker sends the record as soon as it is
    /// complete and ends its jail after it: the record comes back at once, and the worker's end
    /// is awaited by the returned [`Reaping`] (which the caller hands to a task of its own).
    pub(super) async fn run(
        mut self,
        job: &Job,
        guard: Duration,
        reply_cap: u64,
    ) -> (Result<RunRecord, Option<ExecError>>, Reaping) {
        let claim = wire::Claim::Run {
            job: std::borrow::Cow::Borrowed(job),
        };
        let line = match serde_json::to_vec(&claim) {
            Ok(line) => line,
            Err(err) => {
                return (
                    Err(Some(ExecError::Spawn(err.to_string()))),
                    self.into_reaping(),
                )
            }
        };
        if self.process.send_line(line).await.is_err() {
            return (Err(None), self.into_reaping());
        }
        let Warm { process, uses, .. } = self;
        let mut reaping = Reaping {
            process,
            back: None,
        };
        // One line: the reply (the worker writes nothing else on its standard output).
        let work = async {
            let mut out = Vec::new();
            let read = (&mut reaping.process.stdout)
                .take(reply_cap + 1)
                .read_until(b'\n', &mut out)
                .await;
            read.map(|_| out)
        };
        let out = match tokio::time::timeout(guard, work).await {
            Ok(out) => out,
            Err(_) => {
                let _ = reaping.process.child.start_kill();
                return (Err(Some(ExecError::Guard(guard))), reaping);
            }
        };
        let out = match out {
            Ok(out) => out,
            Err(e) => {
                let _ = reaping.process.child.start_kill();
                let err = ExecError::Worker(format!("cannot read its reply: {e}"));
                return (Err(Some(err)), reaping);
            }
        };
        if out.len() as u64 > reply_cap {
            let _ = reaping.process.child.start_kill();
            let err = ExecError::Worker(format!("its reply exceeded {reply_cap} bytes"));
            return (Err(Some(err)), reaping);
        }
        let reply = match serde_json::from_slice::<WorkerReply>(&out) {
            Ok(reply) => reply,
            Err(_) if out.is_empty() => return (Err(None), reaping),
            Err(_) => {
                // No reply: the worker failed; what it said is on its standard error.
                reaping.process.stdin = None;
                let _ = reaping.process.child.wait().await;
                let stderr = reaping.process.stderr_text().await;
                let err = ExecError::Worker(format!("no reply: {stderr}"));
                return (Err(Some(err)), reaping);
            }
        };
        // A worker that answered may come back for another jail once this one has ended.
        reaping.back = Some(uses + 1);
        let result = match reply {
            WorkerReply::Record(record) => Ok(*record),
            WorkerReply::NotTaken(_) => Err(None),
            WorkerReply::Error(message) => Err(Some(ExecError::Job(message))),
        };
        (result, reaping)
    }

    pub(super) fn into_reaping(self) -> Reaping {
        Reaping {
            process: self.process,
            back: None,
        }
    }
}

/// A claimed pooled worker after its reply: it ends its jail (every process, mount, cgroup and
/// temporary directory of it), then either exits or says it is idle (`warden_worker::pooled`). Whoever holds
/// this waits for that.
pub(super) struct Reaping {
    pub(super) process: WorkerProcess,
    /// When it answered and may come back idle: the jails it will have served then.
    pub(super) back: Option<u64>,
}

impl Reaping {
    /// Waits for the worker to end its jail, at most `within`. `Some`: it did, and waits idle for
    /// its next job. Otherwise it has exited (killed past `within`: its jail's init dies with it)
    /// and its private directory is removed.
    pub(super) async fn finish(mut self, within: Duration) -> Option<NewWorker> {
        let deadline = tokio::time::Instant::now() + within;
        if let Some(uses) = self.back.take() {
            let mut line = String::new();
            let mut limited = (&mut self.process.stdout).take(4096);
            let read = limited.read_line(&mut line);
            let idle = matches!(tokio::time::timeout_at(deadline, read).await, Ok(Ok(n)) if n > 0)
                && matches!(
                    serde_json::from_str::<wire::PoolAnswer>(&line),
                    Ok(wire::PoolAnswer::Idle)
                );
            if idle {
                return Some(NewWorker {
                    process: self.process,
                    uses,
                });
            }
        }
        // Anything else: the worker ends (the end of its input, if it still reads it).
        self.process.stdin = None;
        if tokio::time::timeout_at(deadline, self.process.child.wait())
            .await
            .is_err()
        {
            let _ = self.process.child.kill().await;
        }
        None
    }
}

/// Ends a waiting jail: the end of its worker's input ends the session cleanly (every process,
/// mount and cgroup of the jail); a worker that does not end soon is killed.
pub(super) async fn discard(warm: Warm) {
    warm.process.end().await;
}

/// A `warden session-worker` the pool started (or one back from a run), with its pipes and
/// directory.
pub(super) struct NewWorker {
    pub(super) process: WorkerProcess,
    /// Jails it served before.
    pub(super) uses: u64,
}

impl NewWorker {
    /// Ends it (the end of its input; killed when it does not end soon).
    pub(super) async fn end(self) {
        self.process.end().await;
    }

    /// Kills a worker whose answer was not one, and says what its standard error said.
    pub(super) async fn out_of_turn(mut self, what: &str) -> anyhow::Error {
        let _ = self.process.child.kill().await;
        let stderr = self.process.stderr_text().await;
        anyhow::anyhow!("the {what} worker answered out of turn: {stderr}")
    }
}

/// Starts a session worker, sends it `job` and reads its first answer (the worker is killed when
/// that fails).
pub(super) async fn ask_new_worker(
    service: &Service,
    job: &impl serde::Serialize,
) -> anyhow::Result<(NewWorker, String)> {
    let mut process = service
        .executor()
        .start_session_worker()
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    match first_answer(&mut process, job).await {
        Ok(answer) => Ok((NewWorker { process, uses: 0 }, answer)),
        Err(err) => {
            let _ = process.child.kill().await;
            Err(err)
        }
    }
}

/// Sends `job` to a worker back from a run, when one waits, and reads its answer (counted
/// reused). `None`: no idle worker answered (those that did not are killed).
pub(super) async fn ask_idle_worker(
    pool: &Pool,
    policy: &str,
    job: &wire::PoolJob,
) -> Option<(NewWorker, String)> {
    // Only a jail forked from the template is started by a worker used again.
    job.pool.template.as_ref()?;
    while let Some(mut worker) = pool.unpark() {
        match first_answer(&mut worker.process, job).await {
            Ok(answer) if !answer.is_empty() => {
                if let Ok(mut state) = pool.state.lock() {
                    state.stats.entry(policy.to_owned()).or_default().reused += 1;
                }
                return Some((worker, answer));
            }
            _ => {
                let _ = worker.process.child.kill().await;
            }
        }
    }
    None
}

/// Sends a worker its first line and reads its first answer (within [`START_TIMEOUT`]).
pub(super) async fn first_answer(
    process: &mut WorkerProcess,
    job: &impl serde::Serialize,
) -> anyhow::Result<String> {
    let line = serde_json::to_vec(job)?;
    let ready = async {
        process.send_line(line).await?;
        let mut answer = String::new();
        (&mut process.stdout)
            .take(1 << 20)
            .read_line(&mut answer)
            .await?;
        anyhow::Ok(answer)
    };
    match tokio::time::timeout(START_TIMEOUT, ready).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(err)) => anyhow::bail!("the worker failed: {err}"),
        Err(_) => anyhow::bail!("the worker did not start within {START_TIMEOUT:?}"),
    }
}
