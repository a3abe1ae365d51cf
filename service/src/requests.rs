//! The bodies of the API's requests, as clients send them (`deny_unknown_fields`: a misspelt
//! field is a 400, not a silent default).
//!
//! Owns: the request types of `POST /v1/run`, `/v1/check`, `/v1/sessions` and a session's
//! `execute`, and how a session's limits become the pipeline's. Does not own: what the service
//! does with them (`lib.rs`, `session_calls.rs`), reading a body off the wire (`http.rs`).

use serde::Deserialize;
use serde_json::Value;
use warden_gateway::pipeline::CallerLimits;
use warden_worker::wire::InputFile;

/// `POST /v1/run` (and the MCP `run_python` tool).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunBody {
    pub code: String,
    /// A registered policy's name; the server's default when absent.
    #[serde(default)]
    pub policy: Option<String>,
    #[serde(default)]
    pub inputs: Vec<InputFile>,
    /// A JSON Schema the program's result must satisfy (replaces the policy's).
    #[serde(default)]
    pub schema: Option<Value>,
    /// Where the result is read from: `stdout`, `last_line` or `file` (`result.json` in the work
    /// dir); the policy's `[output] result` when absent.
    #[serde(default)]
    pub result: Option<warden_gateway::validate::ResultFrom>,
    /// Limits that may only tighten the policy's.
    #[serde(default)]
    pub limits: CallerLimits,
    /// Return the files the program wrote, base64 (default true).
    #[serde(default = "yes")]
    pub return_files: bool,
}

fn yes() -> bool {
    true
}

/// `POST /v1/check` (and the MCP `check_python` tool).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckBody {
    pub code: String,
    #[serde(default)]
    pub policy: Option<String>,
}

/// `POST /v1/sessions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionBody {
    /// A registered policy's name; the server's default when absent.
    #[serde(default)]
    pub policy: Option<String>,
    #[serde(default)]
    pub limits: SessionCallerLimits,
    /// Files written into the work dir before the first cell (relative paths).
    #[serde(default)]
    pub inputs: Vec<InputFile>,
}

/// Limits a session's creator may ask for; each may only tighten the policy's.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionCallerLimits {
    /// Each cell's wall time (past it the cell is interrupted; the session keeps its state).
    pub wall_time_ms: Option<u64>,
    /// The whole session's memory (cgroup).
    pub memory_mib: Option<u64>,
    /// Each cell's captured standard output.
    pub stdout_bytes: Option<u64>,
}

impl From<SessionCallerLimits> for CallerLimits {
    /// A session's limits as the pipeline takes them (a session has no CPU-time limit of its
    /// own: its cells share the policy's).
    fn from(limits: SessionCallerLimits) -> Self {
        Self {
            wall_time_ms: limits.wall_time_ms,
            cpu_time_ms: None,
            memory_mib: limits.memory_mib,
            stdout_bytes: limits.stdout_bytes,
        }
    }
}

/// `POST /v1/sessions/{id}/execute`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExecuteBody {
    pub code: String,
}
