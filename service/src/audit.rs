//! The audit log: one JSON line per request, for the security team.
//!
//! Each line holds the time, the client's identity (token *name* or socket peer credentials, never a
//! secret), the code's SHA-256, the policy's name and SHA-256, the decision with its rule ids, the
//! status and the run's usage. Lines go to a file (opened for append, mode 0640) or to standard error,
//! which is the journal when systemd runs the server.

use std::io::Write;
use std::sync::Mutex;

use serde::Serialize;
use warden_gateway::pipeline::RunRecord;
use warden_policy::CheckRecord;

use super::config::AuditTarget;

/// One audit line.
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord {
    /// RFC 3339, UTC, milliseconds.
    pub time: String,
    pub client: String,
    /// `check`, `run`, `session_create`, `session_execute`, `session_end`, `session_upload`,
    /// `session_download`, or the MCP tool's name.
    pub endpoint: String,
    pub code_sha256: Option<String>,
    pub policy: Option<String>,
    pub policy_sha256: Option<String>,
    /// `allow`, `review`, `deny`, or `null` when the request was refused before judgement.
    pub decision: Option<String>,
    pub rules: Vec<String>,
    /// The run's or cell's status, `ok` for a session started or a file moved, why a session
    /// ended (`closed`, `idle_timeout`, `max_lifetime`, `session_lost`…), or why the request was
    /// refused (`queue_full`, `session_limit`, `not_found`…).
    pub status: String,
    pub wall_ms: Option<u64>,
    pub cpu_ms: Option<u64>,
    pub memory_peak_bytes: Option<u64>,
    pub duration_ms: u64,
    /// The session a request concerned (sessions' endpoints only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The work-dir file a session's file request concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The review a request concerned (service/src/review.rs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub review: Option<String>,
    /// Who approved or rejected the reviewed program (a client's identity).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approver: Option<String>,
}

impl AuditRecord {
    pub fn new(client: &str, endpoint: &str) -> Self {
        Self {
            time: now_rfc3339(),
            client: client.to_owned(),
            endpoint: endpoint.to_owned(),
            code_sha256: None,
            policy: None,
            policy_sha256: None,
            decision: None,
            rules: Vec::new(),
            status: String::new(),
            wall_ms: None,
            cpu_ms: None,
            memory_peak_bytes: None,
            duration_ms: 0,
            session: None,
            file: None,
            review: None,
            approver: None,
        }
    }

    /// Fills decision, rules, status and usage from a result record.
    pub fn from_record(&mut self, record: &RunRecord) {
        self.status = record.status.as_str().to_owned();
        self.decision = Some(record.check.decision.clone());
        self.rules = CheckRecord::rule_ids(&record.check.findings, false);
        self.wall_ms = Some(record.usage.wall_ms);
        self.cpu_ms = Some(record.usage.cpu_ms);
        self.memory_peak_bytes = Some(record.usage.memory_peak_bytes);
    }
}

pub struct AuditLog {
    target: Mutex<Option<Box<dyn Write + Send>>>,
}

impl AuditLog {
    pub fn open(target: &AuditTarget) -> anyhow::Result<Self> {
        use std::os::unix::fs::OpenOptionsExt;
        let writer: Option<Box<dyn Write + Send>> = match target {
            AuditTarget::Off => None,
            AuditTarget::Stderr => Some(Box::new(std::io::stderr())),
            AuditTarget::File(path) => {
                check_target(target)?;
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .mode(0o640)
                    .open(path)
                    .map_err(|err| {
                        anyhow::anyhow!("cannot open audit log {}: {err}", path.display())
                    })?;
                Some(Box::new(file))
            }
        };
        Ok(Self {
            target: Mutex::new(writer),
        })
    }

    /// Writes one line (whole: one `write` call per line, so lines never interleave).
    pub fn write(&self, record: &AuditRecord) {
        let Ok(mut line) = serde_json::to_vec(record) else {
            return;
        };
        line.push(b'\n');
        if let Ok(mut target) = self.target.lock() {
            if let Some(writer) = target.as_mut() {
                let _ = writer.write_all(&line);
                let _ = writer.flush();
            }
        }
    }
}

/// Checks, without creating anything, that the audit log can be opened where it is configured:
/// its directory exists (a mistyped path is an error, never a new directory tree) and the log, if
/// it exists, is a regular file.
pub fn check_target(target: &AuditTarget) -> anyhow::Result<()> {
    let AuditTarget::File(path) = target else {
        return Ok(());
    };
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => std::path::Path::new("."),
    };
    if !parent.is_dir() {
        anyhow::bail!(
            "server.audit_log: the directory {} does not exist (create it, or correct the path {})",
            parent.display(),
            path.display()
        );
    }
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => anyhow::bail!(
            "server.audit_log: {} exists and is not a regular file",
            path.display()
        ),
        _ => Ok(()),
    }
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AuditLog")
    }
}

/// The current time as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, milliseconds).
pub fn now_rfc3339() -> String {
    format_utc(chrono::Utc::now())
}

fn format_utc(time: chrono::DateTime<chrono::Utc>) -> String {
    time.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64, millis: u32) -> String {
        let time = chrono::DateTime::from_timestamp(seconds, millis * 1_000_000);
        format_utc(time.unwrap_or_default())
    }

    #[test]
    fn utc_times_are_formatted() {
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_795_305_600 + 3_723, 999), "2026-11-22T01:02:03.999Z");
        // Past 2038 and across a century that is not a leap year.
        assert_eq!(at(4_107_542_400 - 1, 0), "2100-02-28T23:59:59.000Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
    }

    #[test]
    fn now_is_utc_with_milliseconds() {
        let now = now_rfc3339();
        assert_eq!(now.len(), "2026-11-22T01:02:03.999Z".len(), "{now}");
        assert!(now.ends_with('Z') && now.as_bytes()[19] == b'.', "{now}");
        let parsed = chrono::DateTime::parse_from_rfc3339(&now)
            .unwrap_or_else(|err| panic!("{now} is not RFC 3339: {err}"));
        let skew = chrono::Utc::now().signed_duration_since(parsed);
        assert!(skew.num_seconds().abs() < 60, "{now}");
    }
}
