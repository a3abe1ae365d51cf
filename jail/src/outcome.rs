//! How a run ended: status, exit, captured output, usage and the layers that were in force.
//!
//! Owns: [`Outcome`] and its parts, serialisable with the names the result record gives them
//! (`status`, `exit_code`, `signal`, `stdout`, …, `usage`, `layers`, `limits_hit`), and the order in
//! which limits decide a status ([`Status::from_limits`]). Does not own: what
//! is measured (`supervise.rs`), a run that could not be set up or whose end is unknown
//! (that is a [`crate::JailError`]), or the statuses of other layers (`denied`, `output_invalid`: the
//! pipeline adds those).

use serde::{Deserialize, Serialize, Serializer};

/// The end of a run, as the result record names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Exit code 0 within every limit.
    Ok,
    /// A non-zero exit or a signal that is not a limit.
    Error,
    /// The wall-clock or CPU-time limit ran out.
    Timeout,
    /// The memory limit was reached (OOM kill, or `MemoryError` under the RLIMIT_AS fallback).
    MemoryLimit,
    /// Standard output or error exceeded its cap.
    OutputLimit,
}

impl Status {
    /// The status as the result record spells it.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Error => "error",
            Status::Timeout => "timeout",
            Status::MemoryLimit => "memory_limit",
            Status::OutputLimit => "output_limit",
        }
    }

    /// The status of a run that hit `limits` and exited with `exit_code`: the one order of
    /// precedence, for a cold run (the supervisor) and a warm one (`warden_gateway`'s pooled
    /// jail) alike — time, then memory, then output, then the exit.
    pub fn from_limits(limits: &[LimitHit], exit_code: Option<i32>) -> Status {
        let hit = |wanted: &[LimitHit]| limits.iter().any(|l| wanted.contains(l));
        if hit(&[LimitHit::WallTime, LimitHit::CpuTime]) {
            Status::Timeout
        } else if hit(&[LimitHit::Memory]) {
            Status::MemoryLimit
        } else if hit(&[LimitHit::Stdout, LimitHit::Stderr]) {
            Status::OutputLimit
        } else if exit_code == Some(0) {
            Status::Ok
        } else {
            Status::Error
        }
    }
}

/// A limit that was hit during the run (several may be).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LimitHit {
    WallTime,
    CpuTime,
    Memory,
    Pids,
    Stdout,
    Stderr,
}

/// Resources used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub wall_ms: u64,
    pub cpu_ms: u64,
    /// Peak memory of the tree (cgroup), or of its largest process (rusage) without a cgroup.
    pub memory_peak_bytes: u64,
}

/// The layers that were actually in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layers {
    pub namespaces: Vec<String>,
    /// `abi-N` or `none`.
    pub landlock: String,
    pub seccomp: bool,
    /// `v1`, `v2` or `none`.
    pub cgroup: String,
    pub rlimits: bool,
    /// How the memory limit is enforced: `cgroup` (the whole run counted), or `best-effort`
    /// (RLIMIT_AS of one process; new processes, memfds and System V shared memory refused).
    #[serde(default)]
    pub memory: String,
    /// How a memfd is kept from being executed: `vm.memfd_noexec=2` or `memfd_create refused`.
    #[serde(default)]
    pub memfd_exec: String,
    /// The runtime layer: warden's audit hook in the interpreter.
    #[serde(default)]
    pub runtime_hooks: bool,
    /// The kernel refuses execve and process creation once the interpreter runs.
    #[serde(default)]
    pub exec_ban: bool,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Outcome {
    pub status: Status,
    /// The program's exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the program, when one did.
    pub signal: Option<i32>,
    #[serde(serialize_with = "lossy")]
    pub stdout: Vec<u8>,
    #[serde(serialize_with = "lossy")]
    pub stderr: Vec<u8>,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub limits_hit: Vec<LimitHit>,
    pub usage: Usage,
    pub layers: Layers,
    /// What came back from the work dir (`None`: no host work dir, or the jail ended before its
    /// `/work` could be reached).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub copy_back: Option<crate::mirror::CopyBack>,
}

fn lossy<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&String::from_utf8_lossy(bytes))
}

impl Outcome {
    /// The captured standard output as text (invalid UTF-8 replaced).
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// The captured standard error as text (invalid UTF-8 replaced).
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.stderr).into_owned()
    }
}
