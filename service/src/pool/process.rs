//! A pooled worker process as the pool holds it: waiting with its jail ([`Warm`]), claimed and
//! ending its jail ([`Reaping`]), or started and not yet ready ([`NewWorker`]); how it is asked
//! for a jail, claimed, and ended.
//!
//! Owns: the pool's side of the pooled worker's protocol (`warden_worker::wire`: the pool job,
//! its answers, the claim of a run). Does not own: which jail is used for what (`pool.rs`), the
//! worker's side (`warden_worker::pooled`).

use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use warden_gateway::pipeline::RunRecord;
use warden_worker::wire::{self, Job, WorkerReply};

use super::*;

/// A pooled jail, waiting: its worker, the worker's pipes and private directory.
pub struct Warm {
    pub(super) child: Child,
    pub(super) stdin: ChildStdin,
    pub(super) stdout: BufReader<ChildStdout>,
    pub(super) dir: JobDir,
    pub(super) stderr: tokio::task::JoinHandle<std::io::Result<Vec<u8>>>,
    pub(super) born: Instant,
    /// Proportional memory (PSS) of the worker and its jail when it became ready.
    pub(super) pss: u64,
    /// Forked from the policy's template.
    pub(super) forked: bool,
    /// Jails this worker has served before this one.
    pub(super) uses: u64,
}

/// The parts of a claimed jail a session's actor takes over.
pub(crate) struct SessionParts {
    pub child: Child,
    pub stdin: ChildStdin,
    pub stdout: BufReader<ChildStdout>,
    pub dir: JobDir,
    pub stderr: tokio::task::JoinHandle<std::io::Result<Vec<u8>>>,
}

impl Warm {
    pub(crate) fn into_session_parts(self) -> SessionParts {
        SessionParts {
            child: self.child,
            stdin: self.stdin,
            stdout: self.stdout,
            dir: self.dir,
            stderr: self.stderr,
        }
    }

    /// Whether the worker is still there.
    pub(super) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
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
        let mut line = match serde_json::to_vec(&claim) {
            Ok(line) => line,
            Err(err) => {
                return (
                    Err(Some(ExecError::Spawn(err.to_string()))),
                    self.into_reaping(),
                )
            }
        };
        line.push(b'\n');
        if self.stdin.write_all(&line).await.is_err() || self.stdin.flush().await.is_err() {
            return (Err(None), self.into_reaping());
        }
        let Warm {
            child,
            stdin,
            mut stdout,
            dir,
            stderr,
            uses,
            ..
        } = self;
        let mut reaping = Reaping {
            child,
            dir,
            back: None,
        };
        // One line: the reply (the worker writes nothing else on its standard output).
        let work = async {
            let mut out = Vec::new();
            let read = (&mut stdout)
                .take(reply_cap + 1)
                .read_until(b'\n', &mut out)
                .await;
            read.map(|_| out)
        };
        let out = match tokio::time::timeout(guard, work).await {
            Ok(out) => out,
            Err(_) => {
                let _ = reaping.child.start_kill();
                return (Err(Some(ExecError::Guard(guard))), reaping);
            }
        };
        let out = match out {
            Ok(out) => out,
            Err(e) => {
                let _ = reaping.child.start_kill();
                let err = ExecError::Worker(format!("cannot read its reply: {e}"));
                return (Err(Some(err)), reaping);
            }
        };
        if out.len() as u64 > reply_cap {
            let _ = reaping.child.start_kill();
            let err = ExecError::Worker(format!("its reply exceeded {reply_cap} bytes"));
            return (Err(Some(err)), reaping);
        }
        let reply = match serde_json::from_slice::<WorkerReply>(&out) {
            Ok(reply) => reply,
            Err(_) if out.is_empty() => return (Err(None), reaping),
            Err(_) => {
                // No reply: the worker failed; what it said is on its standard error.
                drop(stdin);
                let _ = reaping.child.wait().await;
                let stderr = match stderr.await {
                    Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).trim().to_owned(),
                    _ => String::new(),
                };
                let err = ExecError::Worker(format!("no reply: {stderr}"));
                return (Err(Some(err)), reaping);
            }
        };
        // A worker that answered may come back for another jail once this one has ended.
        reaping.back = Some(Back {
            stdin,
            stdout,
            stderr,
            uses: uses + 1,
        });
        let result = match reply {
            WorkerReply::Record(record) => Ok(*record),
            WorkerReply::NotTaken(_) => Err(None),
            WorkerReply::Error(message) => Err(Some(ExecError::Job(message))),
        };
        (result, reaping)
    }

    pub(super) fn into_reaping(self) -> Reaping {
        Reaping {
            child: self.child,
            dir: self.dir,
            back: None,
        }
    }
}

/// A claimed pooled worker after its reply: it ends its jail (every process, mount, cgroup and
/// temporary directory of it), then either exits or says it is idle (`warden_worker::pooled`). Whoever holds
/// this waits for that.
pub(super) struct Reaping {
    pub(super) child: Child,
    pub(super) dir: JobDir,
    /// The worker's pipes, when it answered and may come back idle.
    pub(super) back: Option<Back>,
}

/// What the pool keeps of a worker that may come back.
pub(super) struct Back {
    pub(super) stdin: ChildStdin,
    pub(super) stdout: BufReader<ChildStdout>,
    pub(super) stderr: tokio::task::JoinHandle<std::io::Result<Vec<u8>>>,
    pub(super) uses: u64,
}

impl Reaping {
    /// Waits for the worker to end its jail, at most `within`. `Some`: it did, and waits idle for
    /// its next job. Otherwise it has exited (killed past `within`: its jail's init dies with it)
    /// and its private directory is removed.
    pub(super) async fn finish(mut self, within: Duration) -> Option<NewWorker> {
        let deadline = tokio::time::Instant::now() + within;
        if let Some(mut back) = self.back.take() {
            let mut line = String::new();
            let mut limited = (&mut back.stdout).take(4096);
            let read = limited.read_line(&mut line);
            let idle = matches!(tokio::time::timeout_at(deadline, read).await, Ok(Ok(n)) if n > 0)
                && matches!(
                    serde_json::from_str::<wire::PoolAnswer>(&line),
                    Ok(wire::PoolAnswer::Idle)
                );
            if idle {
                return Some(NewWorker {
                    child: self.child,
                    stdin: back.stdin,
                    stdout: back.stdout,
                    dir: self.dir,
                    stderr: back.stderr,
                    uses: back.uses,
                });
            }
            // Anything else: the worker ends.
            drop(back);
        }
        if tokio::time::timeout_at(deadline, self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
        drop(self.dir);
        None
    }
}

/// Ends a waiting jail: the end of its worker's input ends the session cleanly (every process,
/// mount and cgroup of the jail); a worker that does not end soon is killed.
pub(super) async fn discard(warm: Warm) {
    end_worker(warm.child, warm.stdin, warm.dir).await;
}

/// Ends a pooled worker by the end of its input (a jail it holds ends cleanly with it), killing
/// it when it does not end soon, then removes its private directory.
pub(super) async fn end_worker(mut child: Child, stdin: ChildStdin, dir: JobDir) {
    drop(stdin);
    if tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
    drop(dir);
}

/// A `warden session-worker` the pool started (or one back from a run), with its pipes and
/// directory.
pub(super) struct NewWorker {
    pub(super) child: Child,
    pub(super) stdin: ChildStdin,
    pub(super) stdout: BufReader<ChildStdout>,
    pub(super) dir: JobDir,
    pub(super) stderr: tokio::task::JoinHandle<std::io::Result<Vec<u8>>>,
    /// Jails it served before.
    pub(super) uses: u64,
}

impl NewWorker {
    /// Ends it (the end of its input; killed when it does not end soon).
    pub(super) async fn end(self) {
        end_worker(self.child, self.stdin, self.dir).await;
    }

    /// Kills a worker whose answer was not one, and says what its standard error said.
    pub(super) async fn out_of_turn(mut self, what: &str) -> anyhow::Error {
        let _ = self.child.kill().await;
        let stderr = match self.stderr.await {
            Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).trim().to_owned(),
            _ => String::new(),
        };
        anyhow::anyhow!("the {what} worker answered out of turn: {stderr}")
    }
}

/// Starts a session worker, sends it `job` and reads its first answer (the worker is killed when
/// that fails).
pub(super) async fn ask_new_worker(
    service: &Service,
    what: &str,
    job: &impl serde::Serialize,
) -> anyhow::Result<(NewWorker, String)> {
    let (mut child, dir) = service
        .executor()
        .spawn_session_worker()
        .map_err(|err| anyhow::anyhow!("{err}"))?;
    let (Some(mut stdin), Some(stdout), Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        anyhow::bail!("the {what} worker's pipes are missing");
    };
    let stderr = tokio::spawn(crate::executor::read_capped(stderr, 64 * 1024));
    let mut stdout = BufReader::new(stdout);
    match first_answer(&mut stdin, &mut stdout, job).await {
        Ok(answer) => Ok((
            NewWorker {
                child,
                stdin,
                stdout,
                dir,
                stderr,
                uses: 0,
            },
            answer,
        )),
        Err(err) => {
            let _ = child.kill().await;
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
        match first_answer(&mut worker.stdin, &mut worker.stdout, job).await {
            Ok(answer) if !answer.is_empty() => {
                if let Ok(mut state) = pool.state.lock() {
                    state.stats.entry(policy.to_owned()).or_default().reused += 1;
                }
                return Some((worker, answer));
            }
            _ => {
                let _ = worker.child.kill().await;
            }
        }
    }
    None
}

/// Sends a worker its first line and reads its first answer (within [`START_TIMEOUT`]).
pub(super) async fn first_answer(
    stdin: &mut ChildStdin,
    stdout: &mut BufReader<ChildStdout>,
    job: &impl serde::Serialize,
) -> anyhow::Result<String> {
    let mut line = serde_json::to_vec(job)?;
    line.push(b'\n');
    let ready = async {
        stdin.write_all(&line).await?;
        stdin.flush().await?;
        let mut answer = String::new();
        stdout.take(1 << 20).read_line(&mut answer).await?;
        anyhow::Ok(answer)
    };
    match tokio::time::timeout(START_TIMEOUT, ready).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(err)) => anyhow::bail!("the worker failed: {err}"),
        Err(_) => anyhow::bail!("the worker did not start within {START_TIMEOUT:?}"),
    }
}
