//! The worker protocol: every message between the server and its worker processes, typed on both
//! sides. Each is one JSON line (a run's [`Job`] is one JSON document on standard input).
//!
//! Owns: the messages' types and their JSON shape — a run ([`Job`] → [`WorkerReply`]), a session
//! ([`SessionJob`], then [`WorkerRequest`] → [`WorkerAnswer`]), a pooled jail ([`PoolJob`] →
//! [`PoolAnswer`], then one [`Claim`]), a policy's template ([`TemplateJob`] →
//! [`TemplateAnswer`]), and the first line that tells a session worker which of them it serves
//! ([`FirstLine`]).
//!
//! Does not own: what the server does with an answer (`service`), what a worker does with a
//! request (this crate's other modules), the driver's messages inside the jail
//! (`warden_gateway::session`), or the record's own shape ([`RunRecord`], [`CellRecord`]: the
//! gateway's).
//!
//! The server builds these values and the worker reads them with the same types, so a field
//! renamed on one side is renamed on the other; unknown fields are refused.

use std::borrow::Cow;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use warden_gateway::pipeline::{self, AppliedLimits, CallerLimits, RunRecord};
use warden_gateway::session::CellRecord;
use warden_gateway::validate::ResultFrom;

/// The environment variable that names the server's pid for a worker: the worker dies with it.
pub const PARENT_PID_ENV: &str = "WARDEN_SERVER_PID";

/// A file the client sends with a run; placed in the work dir by name.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    /// A path relative to the work dir (`data.csv`, `inputs/sales.csv`): no `..`, not absolute,
    /// no NUL.
    pub name: String,
    /// The file's bytes, base64 (standard alphabet, padded).
    pub content_base64: String,
}

/// What a `warden worker` runs (one JSON document on its standard input).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Job {
    /// The rules-file text the server validated.
    pub policy_text: String,
    /// Where relative paths in the rules file resolve (the rules file's directory).
    pub policy_base_dir: Option<PathBuf>,
    /// SHA-256 of `policy_text`; the worker refuses a mismatch.
    pub policy_sha256: String,
    pub code: String,
    #[serde(default)]
    pub inputs: Vec<InputFile>,
    /// A JSON Schema the program's result must satisfy (replaces the policy's), carried as the
    /// JSON text the server checked: the pipeline compiles it.
    #[serde(default)]
    pub schema: Option<Box<serde_json::value::RawValue>>,
    /// Where the result the schema judges is read from (the policy's when absent).
    #[serde(default)]
    pub result: Option<ResultFrom>,
    #[serde(default)]
    pub limits: CallerLimits,
    /// Return the files the program wrote, base64, in the record's `files[].content_base64`.
    #[serde(default)]
    pub return_files: bool,
    /// A person's approval of this program, when the policy sends it to review
    /// (service/src/review.rs: the server checked it is bound to this program and policy).
    #[serde(default)]
    pub approval: Option<pipeline::Approval>,
    /// The static check the server made for this program (once per request); the pipeline uses it
    /// when it is bound to this program and policy, and checks again otherwise.
    #[serde(default)]
    pub checked: Option<warden_gateway::checked::Checked>,
}

/// A run's worker's one line of output (a `warden worker`, or a pooled worker's claimed run).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerReply {
    /// The result record (with file contents when asked for).
    Record(Box<RunRecord>),
    /// Nothing ran: the job was wrong or the host could not run it.
    Error(String),
    /// A pooled jail never took the program (lost with its template, not forked, another
    /// policy's): nothing ran, and the server runs it cold. The text says why.
    NotTaken(String),
}

/// The first line a session worker reads: a session, a pooled jail, or a policy's template.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FirstLine {
    Template(TemplateJob),
    Pool(PoolJob),
    Session(Box<SessionJob>),
}

/// The first line of a session's worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionJob {
    /// The rules-file text the server validated.
    pub policy_text: String,
    pub policy_base_dir: Option<PathBuf>,
    /// SHA-256 of `policy_text`; the worker refuses a mismatch.
    pub policy_sha256: String,
    /// Limits that may only tighten the policy's: `wall_time_ms` per cell, `memory_mib` for the
    /// whole session, `stdout_bytes` per cell.
    #[serde(default)]
    pub limits: CallerLimits,
    /// Files written into the work dir once the session has started (relative paths).
    #[serde(default)]
    pub inputs: Vec<InputFile>,
    /// The jail's own bound on the session's life (wall clock and CPU); the server ends sessions
    /// before it.
    pub lifetime_ms: u64,
}

/// A request to a session's worker after the first line.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum WorkerRequest {
    /// Check the cell in the session's context and run it when allowed.
    Execute {
        code: String,
        /// Send the cell's output as [`WorkerAnswer::Chunk`]s while it runs.
        #[serde(default)]
        stream: bool,
    },
    /// Write a file into the work dir (a relative path; directories made) from `staged`: a file
    /// the server wrote its request body to (its own, under its state directory), which the
    /// worker reads a piece at a time.
    Upload { path: String, staged: PathBuf },
    /// The regular files in the work dir.
    List,
    /// One file of the work dir.
    Download { path: String },
    /// End the session.
    Close,
}

/// A file in the session's work dir.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileEntry {
    pub path: String,
    pub size: u64,
}

/// Why a request failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailKind {
    /// The session could not start.
    SetupFailed,
    /// The request was wrong (a bad name, not base64).
    BadRequest,
    /// No regular file by that name (missing, a directory, a symlink).
    NotFound,
    /// The file is over the policy's output cap.
    TooLarge,
    /// The session is over.
    Ended,
    /// warden's own side failed (the server's staged upload could not be read).
    Internal,
}

/// One answer line of a session's worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerAnswer {
    /// The session is ready: the layers in force and the limits it got.
    Started {
        layers: warden_jail::Layers,
        limits: AppliedLimits,
    },
    /// Output of the running cell, as it is produced (`name`: `stdout` or `stderr`).
    Chunk { name: String, text: String },
    /// A cell's record.
    Cell(Box<CellRecord>),
    /// A file was written.
    File(FileEntry),
    /// The work dir's regular files (`truncated`: there were more than the policy's
    /// `output_files`).
    Files {
        files: Vec<FileEntry>,
        truncated: bool,
    },
    /// A file's content.
    Content {
        path: String,
        content_base64: String,
    },
    /// The request failed.
    Failed { kind: FailKind, message: String },
    /// The session has ended (`usage`: the whole session's, when the jail reported it).
    Closed { usage: Option<warden_jail::Usage> },
}

/// The first line of a pooled worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolJob {
    pub pool: PoolStart,
}

/// What a pooled jail (or a policy's template) is started with.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoolStart {
    /// The rules-file text the server validated, with its digest (re-checked here).
    pub policy_text: String,
    /// The same rules resolved by the server (`Policy::from_toml_with_json`): read instead of the text
    /// (parsing the TOML and its `extends` chain in every pooled worker cost ~1 ms).
    #[serde(default)]
    pub policy_resolved: Option<String>,
    pub policy_base_dir: Option<PathBuf>,
    pub policy_sha256: String,
    /// The jail's own bound on its life (wall clock and CPU): the longest it may wait, then serve.
    pub lifetime_ms: u64,
    /// The policy's template to fork the jail from (its socket); without one, or when it cannot
    /// fork, the jail is started and imports its preload itself.
    #[serde(default)]
    pub template: Option<PathBuf>,
    /// Fork from the template only when the claim comes (a run with input files: they are
    /// copied into the jail before the program starts). Needs `template`.
    #[serde(default)]
    pub defer: bool,
}

/// The pooled worker's answer to its [`PoolJob`].
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoolAnswer {
    /// The jail waits: the layers in force, and the preloaded modules that failed to import.
    Ready {
        /// `None`: no jail yet (deferred until the claim).
        layers: Option<warden_jail::Layers>,
        preload_failed: Vec<String>,
        /// Forked from the policy's template (not started on its own).
        #[serde(default)]
        forked: bool,
        /// Why the template was not used, when one was given.
        #[serde(default)]
        template_error: Option<String>,
        /// The jail's init (host pid), for measuring its memory.
        #[serde(default)]
        jail_pid: Option<u32>,
    },
    /// The jail could not start.
    Failed { message: String },
    /// The claimed run's jail has ended and this worker is back as it started: it reads its next
    /// [`PoolJob`] (or the end of its input).
    Idle,
}

/// What a waiting jail is used for (once). The server sends its job borrowed; the worker reads
/// it owned.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "claim", rename_all = "snake_case", deny_unknown_fields)]
pub enum Claim<'a> {
    /// One program: the worker answers one [`WorkerReply`].
    Run { job: Cow<'a, Job> },
    /// The jail becomes a session: the worker answers as a session's worker does from
    /// [`WorkerAnswer::Started`] on.
    Session { job: Cow<'a, SessionJob> },
}

/// The first line of a template worker.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateJob {
    pub template: PoolStart,
}

/// The template worker's first answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TemplateAnswer {
    /// Forking: the socket to ask at, and the preloaded modules that failed to import.
    Ready {
        socket: PathBuf,
        preload_failed: Vec<String>,
    },
    Failed {
        message: String,
    },
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn start() -> PoolStart {
        PoolStart {
            policy_text: String::new(),
            policy_resolved: None,
            policy_base_dir: None,
            policy_sha256: String::new(),
            lifetime_ms: 1,
            template: None,
            defer: false,
        }
    }

    #[test]
    fn a_first_line_is_told_by_its_shape() {
        let pool = serde_json::to_string(&PoolJob { pool: start() }).unwrap();
        assert!(pool.starts_with("{\"pool\""));
        assert!(matches!(
            serde_json::from_str::<FirstLine>(&pool).unwrap(),
            FirstLine::Pool(_)
        ));
        let template = serde_json::to_string(&TemplateJob { template: start() }).unwrap();
        assert!(matches!(
            serde_json::from_str::<FirstLine>(&template).unwrap(),
            FirstLine::Template(_)
        ));
        let session =
            r#"{"policy_text":"x","policy_base_dir":null,"policy_sha256":"","lifetime_ms":5}"#;
        assert!(matches!(
            serde_json::from_str::<FirstLine>(session).unwrap(),
            FirstLine::Session(_)
        ));
        assert!(serde_json::from_str::<FirstLine>(r#"{"policy_text":"x"}"#).is_err());
        assert!(serde_json::from_str::<FirstLine>(r#"{"pool":{},"x":1}"#).is_err());
    }

    #[test]
    fn a_claim_is_tagged() {
        let claim: Claim = serde_json::from_str(
            r#"{"claim":"run","job":{"policy_text":"","policy_base_dir":null,"policy_sha256":"","code":"print(1)"}}"#,
        )
        .unwrap();
        assert!(matches!(claim, Claim::Run { .. }));
        assert!(serde_json::from_str::<Claim>(r#"{"claim":"fork"}"#).is_err());
    }

    #[test]
    fn not_taken_is_its_own_reply() {
        let reply =
            serde_json::to_string(&WorkerReply::NotTaken("the jail has ended".into())).unwrap();
        assert_eq!(reply, r#"{"not_taken":"the jail has ended"}"#);
        let back: WorkerReply = serde_json::from_str(&reply).unwrap();
        assert!(matches!(back, WorkerReply::NotTaken(_)));
    }

    #[test]
    fn requests_and_answers_are_one_json_line_each() {
        let request: WorkerRequest =
            serde_json::from_str(r#"{"op":"execute","code":"x = 1"}"#).unwrap();
        assert!(matches!(
            request,
            WorkerRequest::Execute { stream: false, .. }
        ));
        assert!(
            serde_json::from_str::<WorkerRequest>(r#"{"op":"download","path":"a","x":1}"#).is_err()
        );
        assert!(serde_json::from_str::<WorkerRequest>(r#"{"op":"rm","path":"a"}"#).is_err());
        let answer = serde_json::to_string(&WorkerAnswer::Chunk {
            name: "stdout".into(),
            text: "a\nb".into(),
        })
        .unwrap();
        assert!(!answer.contains('\n'));
        let back: WorkerAnswer = serde_json::from_str(&answer).unwrap();
        assert!(matches!(back, WorkerAnswer::Chunk { .. }));
    }
}
