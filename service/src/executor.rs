//! Runs jobs in `warden worker` processes on behalf of a multithreaded server.
//!
//! Owns: the server's state directory (one exclusive lock, one private directory per job, stale ones
//! removed at start-up), spawning workers, bounded capture of their replies, a guard timeout, and
//! killing every worker at shutdown. Does not own: admission (how many run at once) — see
//! `admission.rs`.
//!
//! Nothing a worker leaves can outlive the next start: job directories are removed after each job
//! and swept at start-up; a worker dies with the server (parent-death signal), the jail's init dies
//! with the worker, and run cgroups whose owner is gone are reaped by [`Executor::reap_stale`].

use std::collections::BTreeSet;
use std::fs;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use anyhow::Context;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use warden_gateway::pipeline::RunRecord;

use warden_worker::wire::{Job, WorkerReply, PARENT_PID_ENV};

/// The most bytes read of a worker's stderr (diagnostics only).
const STDERR_CAP: u64 = 64 * 1024;

/// Why a job has no result record.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("cannot start a worker: {0}")]
    Spawn(String),
    #[error("the worker did not finish within {0:?} and was killed")]
    Guard(Duration),
    #[error("{0}")]
    Job(String),
    #[error("the worker failed: {0}")]
    Worker(String),
    #[error("the server is shutting down")]
    ShuttingDown,
}

#[derive(Debug)]
pub struct Executor {
    binary: PathBuf,
    state_dir: PathBuf,
    sequence: AtomicU64,
    workers: Mutex<BTreeSet<u32>>,
    shutting_down: std::sync::atomic::AtomicBool,
    /// Held for the server's life: one server per state directory.
    _lock: nix::fcntl::Flock<fs::File>,
}

impl Executor {
    /// Takes the state directory (creating it, mode 0700) and removes what a previous server left.
    pub fn new(binary: PathBuf, state_dir: &Path) -> anyhow::Result<Self> {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(state_dir)
            .with_context(|| format!("cannot create state directory {}", state_dir.display()))?;
        let lock_path = state_dir.join("lock");
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .with_context(|| format!("cannot open {}", lock_path.display()))?;
        let lock = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
            .map_err(|(_, errno)| {
                anyhow::anyhow!(
                    "state directory {} is in use by another warden server ({errno})",
                    state_dir.display()
                )
            })?;
        let executor = Self {
            binary,
            state_dir: state_dir.to_owned(),
            sequence: AtomicU64::new(0),
            workers: Mutex::new(BTreeSet::new()),
            shutting_down: std::sync::atomic::AtomicBool::new(false),
            _lock: lock,
        };
        executor.sweep_job_dirs();
        executor.sweep_session_dirs();
        Ok(executor)
    }

    /// Removes every job directory (with the lock held, none belongs to a live server).
    pub fn sweep_job_dirs(&self) -> usize {
        self.sweep_dirs("job-")
    }

    /// Removes every session directory (at start-up, and once every session has ended).
    pub fn sweep_session_dirs(&self) -> usize {
        self.sweep_dirs("session-")
    }

    fn sweep_dirs(&self, prefix: &str) -> usize {
        let Ok(entries) = fs::read_dir(&self.state_dir) else {
            return 0;
        };
        let mut removed = 0;
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(prefix) {
                warden_gateway::files::remove_tree(&entry.path());
                removed += 1;
            }
        }
        removed
    }

    /// Removes run cgroups whose warden is gone, for each policy's jail plan.
    pub fn reap_stale<'a>(plans: impl IntoIterator<Item = &'a warden_jail::Plan>) {
        for plan in plans {
            plan.reap_stale();
        }
    }

    /// Number of workers running now.
    pub fn running(&self) -> usize {
        self.workers.lock().map_or(0, |w| w.len())
    }

    /// Runs one job in a fresh worker; `guard` bounds the whole worker's life and `reply_cap` the
    /// bytes read of its reply (see [`reply_cap`]).
    pub async fn run(
        &self,
        job: &Job,
        guard: Duration,
        reply_cap: u64,
    ) -> Result<RunRecord, ExecError> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err(ExecError::ShuttingDown);
        }
        let dir = JobDir::create(
            &self.state_dir,
            self.sequence.fetch_add(1, Ordering::Relaxed),
        )
        .map_err(|err| ExecError::Spawn(format!("{err:#}")))?;
        let input = serde_json::to_vec(job).map_err(|err| ExecError::Spawn(err.to_string()))?;
        let mut child = tokio::process::Command::new(&self.binary)
            .arg("worker")
            .arg(&dir.path)
            .env(PARENT_PID_ENV, std::process::id().to_string())
            .env("WARDEN_RUN_DIR", &dir.path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| ExecError::Spawn(format!("{}: {err}", self.binary.display())))?;
        let pid = child.id().unwrap_or(0);
        let _registered = Registered::new(&self.workers, pid);
        let (Some(mut stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ExecError::Spawn(
                "the worker's pipes are missing".to_owned(),
            ));
        };
        let work = async {
            // Write and read concurrently: a large job and a large reply must not deadlock.
            let write = async {
                let _ = stdin.write_all(&input).await;
                drop(stdin);
            };
            // Both pipes are read to their end, keeping at most the caps: a worker is never left
            // blocked on a full pipe. A reply over its cap is not a record; the worker is killed.
            let (_, out, err) = tokio::join!(
                write,
                read_capped(stdout, reply_cap + 1),
                read_capped(stderr, STDERR_CAP)
            );
            if out.as_ref().is_ok_and(|o| o.len() as u64 > reply_cap) {
                let _ = child.start_kill();
            }
            let status = child.wait().await;
            (out, err.unwrap_or_default(), status)
        };
        let (out, err, status) = match tokio::time::timeout(guard, work).await {
            Ok(done) => done,
            Err(_) => {
                // `child` was moved into the future, which is dropped here: kill_on_drop kills it.
                return Err(ExecError::Guard(guard));
            }
        };
        let out = out.map_err(|e| ExecError::Worker(format!("cannot read its reply: {e}")))?;
        if out.len() as u64 > reply_cap {
            return Err(ExecError::Worker(format!(
                "its reply exceeded {reply_cap} bytes"
            )));
        }
        match serde_json::from_slice::<WorkerReply>(&out) {
            Ok(WorkerReply::Record(record)) => Ok(*record),
            // Only a pooled jail declines a job; a cold worker saying so is an error like any.
            Ok(WorkerReply::Error(message) | WorkerReply::NotTaken(message)) => {
                Err(ExecError::Job(message))
            }
            Err(_) => {
                let status = status.map_or_else(|e| e.to_string(), |s| s.to_string());
                let stderr = String::from_utf8_lossy(&err);
                Err(ExecError::Worker(format!(
                    "no reply ({status}): {}",
                    stderr.trim()
                )))
            }
        }
    }

    /// Starts a `warden session-worker` in a private directory of its own (`session-<n>`), its
    /// standard input, output and error piped; the worker dies with the server, and is killed when
    /// the returned child is dropped.
    fn spawn_session_worker(&self) -> Result<(tokio::process::Child, JobDir), ExecError> {
        if self.shutting_down.load(Ordering::SeqCst) {
            return Err(ExecError::ShuttingDown);
        }
        let sequence = self.sequence.fetch_add(1, Ordering::Relaxed);
        let dir = JobDir::create_named(&self.state_dir, &format!("session-{sequence}"))
            .map_err(|err| ExecError::Spawn(format!("{err:#}")))?;
        let child = tokio::process::Command::new(&self.binary)
            .arg("session-worker")
            .arg(&dir.path)
            .env(PARENT_PID_ENV, std::process::id().to_string())
            .env("WARDEN_RUN_DIR", &dir.path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|err| ExecError::Spawn(format!("{}: {err}", self.binary.display())))?;
        Ok((child, dir))
    }

    /// [`Executor::spawn_session_worker`], its pipes taken and its standard error drained.
    pub(crate) fn start_session_worker(&self) -> Result<WorkerProcess, ExecError> {
        let (mut child, dir) = self.spawn_session_worker()?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ExecError::Spawn(
                "the session worker's pipes are missing".to_owned(),
            ));
        };
        Ok(WorkerProcess {
            child,
            stdin: Some(stdin),
            stdout: tokio::io::BufReader::new(stdout),
            stderr: Some(tokio::spawn(read_capped(stderr, STDERR_CAP))),
            dir,
        })
    }

    /// Refuses new jobs and kills every running worker (their jails die with them).
    pub fn kill_all(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        let pids: Vec<u32> = self
            .workers
            .lock()
            .map(|w| w.iter().copied().collect())
            .unwrap_or_default();
        for pid in pids {
            if let Ok(pid) = i32::try_from(pid) {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(pid),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
        }
    }

    /// Stops accepting jobs (running ones go on).
    pub fn close(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
    }
}

/// A `warden session-worker` with its pipes and private directory: every worker the server holds
/// past its first answer (a session's, a pooled jail's, a template's) is held as one.
pub(crate) struct WorkerProcess {
    pub(crate) child: tokio::process::Child,
    /// `None` once closed: the end of its input tells the worker to end.
    pub(crate) stdin: Option<tokio::process::ChildStdin>,
    pub(crate) stdout: tokio::io::BufReader<tokio::process::ChildStdout>,
    /// Its standard error, drained as it comes (diagnostics only: the worker never blocks on
    /// it); `None` once read.
    pub(crate) stderr: Option<tokio::task::JoinHandle<std::io::Result<Vec<u8>>>>,
    /// Removed when this is dropped, after the worker.
    pub(crate) dir: JobDir,
}

impl WorkerProcess {
    /// Writes `line` and a line end to the worker's input.
    pub(crate) async fn send_line(&mut self, mut line: Vec<u8>) -> std::io::Result<()> {
        let Some(stdin) = self.stdin.as_mut() else {
            return Err(std::io::ErrorKind::BrokenPipe.into());
        };
        line.push(b'\n');
        stdin.write_all(&line).await?;
        stdin.flush().await
    }

    /// What the worker wrote on its standard error (trimmed), once it closed it; empty when it
    /// was read already or cannot be.
    pub(crate) async fn stderr_text(&mut self) -> String {
        match self.stderr.take() {
            Some(task) => match task.await {
                Ok(Ok(bytes)) => String::from_utf8_lossy(&bytes).trim().to_owned(),
                _ => String::new(),
            },
            None => String::new(),
        }
    }

    /// Ends the worker by the end of its input (a jail it holds ends cleanly with it), killing it
    /// when it does not end within 10 s; then its private directory is removed.
    pub(crate) async fn end(mut self) {
        self.stdin = None;
        if tokio::time::timeout(Duration::from_secs(10), self.child.wait())
            .await
            .is_err()
        {
            let _ = self.child.kill().await;
        }
    }
}

/// Reads `reader` to its end, keeping the first `cap` bytes and discarding the rest.
pub(crate) async fn read_capped(
    mut reader: impl tokio::io::AsyncRead + Unpin,
    cap: u64,
) -> std::io::Result<Vec<u8>> {
    let mut kept = Vec::new();
    let mut buffer = vec![0u8; 64 * 1024];
    loop {
        let n = reader.read(&mut buffer).await?;
        if n == 0 {
            return Ok(kept);
        }
        let room = usize::try_from(cap.saturating_sub(kept.len() as u64)).unwrap_or(usize::MAX);
        kept.extend_from_slice(&buffer[..n.min(room)]);
    }
}

/// The largest reply a job under `policy` can produce: the record's captured output (JSON-escaped,
/// up to 6 bytes a byte), the files' contents (base64) and slack for the rest of the record.
pub fn reply_cap(policy: &warden_policy::Policy, return_files: bool) -> u64 {
    let limits = &policy.limits;
    let files = if return_files { limits.output_bytes } else { 0 };
    limits
        .stdout_bytes
        .saturating_add(limits.stderr_bytes)
        .saturating_mul(6)
        .saturating_add(files.saturating_mul(4) / 3)
        .saturating_add(4 << 20)
}

/// A job's (or a session's) private directory, removed when it ends however it ends.
pub(crate) struct JobDir {
    pub(crate) path: PathBuf,
}

impl JobDir {
    fn create(state_dir: &Path, sequence: u64) -> anyhow::Result<Self> {
        Self::create_named(state_dir, &format!("job-{sequence}"))
    }

    fn create_named(state_dir: &Path, name: &str) -> anyhow::Result<Self> {
        let path = state_dir.join(name);
        fs::DirBuilder::new()
            .mode(0o700)
            .create(&path)
            .with_context(|| format!("cannot create {}", path.display()))?;
        Ok(Self { path })
    }
}

impl Drop for JobDir {
    fn drop(&mut self) {
        warden_gateway::files::remove_tree(&self.path);
    }
}

/// A worker pid in the running set for as long as this lives.
struct Registered<'a> {
    set: &'a Mutex<BTreeSet<u32>>,
    pid: u32,
}

impl<'a> Registered<'a> {
    fn new(set: &'a Mutex<BTreeSet<u32>>, pid: u32) -> Self {
        if let Ok(mut set) = set.lock() {
            set.insert(pid);
        }
        Self { set, pid }
    }
}

impl Drop for Registered<'_> {
    fn drop(&mut self) {
        if let Ok(mut set) = self.set.lock() {
            set.remove(&self.pid);
        }
    }
}

/// Removes the state directories of `warden mcp` sessions that are gone (nobody holds their lock).
pub fn sweep_abandoned_sessions(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("mcp-") {
            continue;
        }
        let Ok(file) = fs::OpenOptions::new()
            .write(true)
            .open(entry.path().join("lock"))
        else {
            continue;
        };
        if let Ok(lock) = nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock)
        {
            warden_gateway::files::remove_tree(&entry.path());
            drop(lock);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn capped_reads_drain_everything_and_keep_the_cap() {
        let data = vec![7u8; 200 * 1024];
        let kept = read_capped(&data[..], 1000).await.unwrap();
        assert_eq!(kept.len(), 1000);
        let all = read_capped(&data[..], u64::MAX).await.unwrap();
        assert_eq!(all.len(), data.len());
    }
}
