//! A cell's record, in Jupyter's shape: what `warden repl` prints, `POST /v1/sessions/{id}/execute`
//! answers, and a session's worker sends its server (`warden_worker::wire::WorkerAnswer::Cell`),
//! serialised and read back with the same types.
//!
//! Owns: the record's fields and statuses, the record of a cell its session ended under
//! ([`CellRecord::ended`]), and a record filled from the driver's answer (MIME bundles kept to
//! the types a client shows). Does not own: running the cell (`session.rs`).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use warden_policy::Finding;

use super::driver::{Done, Loose, RawBundle};
use super::{lossy, Capped, MAX_DISPLAY};

/// A MIME bundle: text (an image's base64) by MIME type (`text/plain`, `image/png`, …).
pub type MimeBundle = BTreeMap<String, String>;

/// How a cell ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CellStatus {
    Ok,
    Error,
    Denied,
    Timeout,
    MemoryLimit,
    OutputLimit,
    SessionLost,
}

impl CellStatus {
    /// The name in the record (`ok`, `error`, `denied`, `timeout`, `memory_limit`,
    /// `output_limit`, `session_lost`).
    pub fn as_str(self) -> &'static str {
        match self {
            CellStatus::Ok => "ok",
            CellStatus::Error => "error",
            CellStatus::Denied => "denied",
            CellStatus::Timeout => "timeout",
            CellStatus::MemoryLimit => "memory_limit",
            CellStatus::OutputLimit => "output_limit",
            CellStatus::SessionLost => "session_lost",
        }
    }
}

/// The result of one cell, in Jupyter's shape.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CellRecord {
    pub status: CellStatus,
    /// The cell's number when it ran (denied cells do not run and have none).
    pub execution_count: Option<u64>,
    pub stdout: String,
    pub stderr: String,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    /// The value of the cell's last expression as a MIME bundle, or null.
    pub result: Option<MimeBundle>,
    /// What the cell displayed (figures shown or left open), each a MIME bundle.
    pub display: Vec<MimeBundle>,
    /// `{name, value, traceback}` when the cell raised.
    pub error: Option<CellError>,
    /// The static verdict on the cell in the context of the session.
    pub check: CellCheck,
    pub usage: CellUsage,
    /// Whether the session is still alive after this cell (and so kept its state).
    pub session_alive: bool,
    /// What ended the session or refused the cell, when something did.
    pub message: Option<String>,
}

impl CellRecord {
    /// The record of a cell its session ended under before the cell answered (the session was
    /// lost, ended, or the cell ran past a hard limit): what it wrote so far, nothing else known,
    /// the session gone.
    pub fn ended(
        status: CellStatus,
        message: String,
        stdout: String,
        stderr: String,
        duration_ms: u64,
    ) -> Self {
        CellRecord {
            status,
            execution_count: None,
            stdout,
            stderr,
            stdout_truncated: false,
            stderr_truncated: false,
            result: None,
            display: Vec::new(),
            error: None,
            check: CellCheck {
                decision: "unknown".into(),
                findings: Vec::new(),
            },
            usage: CellUsage {
                duration_ms,
                memory_peak_bytes: 0,
            },
            session_alive: false,
            message: Some(message),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct CellError {
    pub name: String,
    pub value: String,
    pub traceback: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CellCheck {
    /// `allow`, `review`, `deny`, or `skipped`.
    pub decision: String,
    /// Findings located in this cell (line 1 is the cell's first line); a finding the cell causes
    /// in an earlier cell says so in its message.
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct CellUsage {
    pub duration_ms: u64,
    /// The interpreter's peak resident memory so far, as the driver reports it.
    pub memory_peak_bytes: u64,
}

/// Fills `record` from the driver's final answer to a cell.
pub(super) fn finish_record(
    record: &mut CellRecord,
    done: &Done,
    stdout: &Capped,
    stderr: &Capped,
) {
    record.status = match done.status.as_str() {
        "ok" => CellStatus::Ok,
        "timeout" => CellStatus::Timeout,
        _ => CellStatus::Error,
    };
    // The driver stops sending past the cap and says how much the cell wrote.
    let sent = |chars: Option<u64>| chars.unwrap_or(0) as usize;
    record.stdout_truncated = stdout.over || sent(done.stdout_chars) > stdout.cap;
    record.stderr_truncated = stderr.over || sent(done.stderr_chars) > stderr.cap;
    record.stdout = lossy(&stdout.data);
    record.stderr = lossy(&stderr.data);
    record.result = done.result.as_ref().and_then(bundle);
    record.display = done
        .display
        .iter()
        .flatten()
        .filter_map(bundle)
        .take(MAX_DISPLAY)
        .collect();
    record.error = done.error.as_ref().map(|e| CellError {
        name: e.name.clone(),
        value: e.value.clone().unwrap_or_default(),
        traceback: e.traceback.clone().unwrap_or_default(),
    });
    record.usage.memory_peak_bytes = done.max_rss_bytes.unwrap_or(0);
    if record.status == CellStatus::Timeout {
        record.message = Some(
            "the cell ran past its wall time and was interrupted; the session kept its state"
                .into(),
        );
    } else if record.stdout_truncated || record.stderr_truncated {
        record.status = CellStatus::OutputLimit;
        record.message = Some(
            "the cell's output went past its cap and was truncated; the session kept its state"
                .into(),
        );
    }
}

/// A MIME bundle from the driver, kept to the types a client shows and to string values
/// (anything else is dropped); `None` without `text/plain`.
fn bundle(raw: &RawBundle) -> Option<MimeBundle> {
    let kept: MimeBundle = raw
        .iter()
        .filter(|(key, _)| {
            matches!(
                key.as_str(),
                "text/plain"
                    | "text/html"
                    | "image/png"
                    | "image/svg+xml"
                    | "application/json"
                    | "text/markdown"
                    | "text/latex"
            )
        })
        .filter_map(|(key, value)| match value {
            Loose::Text(text) => Some((key.clone(), text.clone())),
            Loose::Other(_) => None,
        })
        .collect();
    kept.contains_key("text/plain").then_some(kept)
}
