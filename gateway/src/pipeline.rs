//! The gateway for one program: decode → check → decide → plan the jail from the same policy → run →
//! validate → result record.
//!
//! The CLI, the corpus runner and the server all call [`execute`]. It never panics and never returns an
//! error for anything the program did: every end is a [`RunRecord`] with a status. `Err` is kept for
//! configuration and usage problems found before anything ran (exit code 2).

use std::path::PathBuf;

use serde::Serialize;
use warden_policy::{Decision, Finding, Policy};

use crate::files::{self, OutputFile};
use crate::python_error::{self, PythonError};
use crate::validate::{OutputSchema, Validation};

/// How a run ended, as the result record names it (DESIGN.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Ok,
    Denied,
    ReviewRequired,
    Error,
    Timeout,
    MemoryLimit,
    OutputLimit,
    OutputInvalid,
    SetupFailed,
}

impl RunStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Ok => "ok",
            RunStatus::Denied => "denied",
            RunStatus::ReviewRequired => "review_required",
            RunStatus::Error => "error",
            RunStatus::Timeout => "timeout",
            RunStatus::MemoryLimit => "memory_limit",
            RunStatus::OutputLimit => "output_limit",
            RunStatus::OutputInvalid => "output_invalid",
            RunStatus::SetupFailed => "setup_failed",
        }
    }
}

/// Limits a caller asks for; each may only tighten the policy's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallerLimits {
    pub wall_time_ms: Option<u64>,
    pub cpu_time_ms: Option<u64>,
    pub memory_mib: Option<u64>,
    pub stdout_bytes: Option<u64>,
}

/// A review approval: who approved and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Approval {
    /// `flag` (`--approve`), `terminal` (interactive prompt) or `token`.
    pub method: String,
    /// Who approved (the user warden ran as, or the token's owner).
    pub by: String,
}

/// One program to run.
#[derive(Debug, Clone, Default)]
pub struct RunRequest {
    /// The program as bytes (decoded by warden, never by the interpreter).
    pub source: Vec<u8>,
    /// Host files and directories placed in the work dir.
    pub inputs: Vec<PathBuf>,
    /// Where the files the program writes are copied.
    pub output_dir: Option<PathBuf>,
    /// A schema that replaces the policy's output schema.
    pub schema: Option<serde_json::Value>,
    /// Skip the static layer (the jail is never optional).
    pub no_policy: bool,
    /// Approval for a program the policy sends to review.
    pub approval: Option<Approval>,
    pub limits: CallerLimits,
}

/// The `check` part of the record.
#[derive(Debug, Clone, Serialize)]
pub struct CheckSummary {
    /// `allow`, `review` or `deny`; `skipped` when `--no-policy`.
    pub decision: String,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PolicyRef {
    pub name: String,
    pub sha256: String,
}

/// The result record (DESIGN.md), with warden's additions after the contract's fields.
#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    pub status: RunStatus,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    pub stdout_truncated: bool,
    pub stderr_truncated: bool,
    pub check: CheckSummary,
    pub validation: Validation,
    pub usage: warden_jail::Usage,
    pub files: Vec<OutputFile>,
    pub layers: Option<warden_jail::Layers>,
    /// The Python exception, when the program died of one.
    pub error: Option<PythonError>,
    /// What went wrong outside the program (setup failure, output files over their caps…).
    pub message: Option<String>,
    pub limits_hit: Vec<warden_jail::LimitHit>,
    pub approval: Option<Approval>,
    pub policy: PolicyRef,
    pub program_sha256: String,
}

impl RunRecord {
    fn new(policy: &Policy, source: &[u8], check: CheckSummary) -> Self {
        use sha2::{Digest, Sha256};
        Self {
            status: RunStatus::SetupFailed,
            exit_code: None,
            signal: None,
            stdout: String::new(),
            stderr: String::new(),
            stdout_truncated: false,
            stderr_truncated: false,
            check,
            validation: Validation::not_required(),
            usage: warden_jail::Usage::default(),
            files: Vec::new(),
            layers: None,
            error: None,
            message: None,
            limits_hit: Vec::new(),
            approval: None,
            policy: PolicyRef {
                name: policy.name.clone(),
                sha256: policy.sha256.clone(),
            },
            program_sha256: warden_policy::settings::hex(&Sha256::digest(source)),
        }
    }
}

/// Loads the output schema a run must satisfy: the request's, else the policy's.
pub fn output_schema(
    policy: &Policy,
    request: &RunRequest,
) -> anyhow::Result<Option<OutputSchema>> {
    let schema = match (
        &request.schema,
        &policy.output_schema,
        &policy.output_schema_file,
    ) {
        (Some(schema), _, _) => Some(schema.clone()),
        (None, Some(schema), _) => Some(schema.clone()),
        (None, None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|err| {
                anyhow::anyhow!("cannot read output schema {}: {err}", path.display())
            })?;
            Some(
                serde_json::from_str(&text)
                    .map_err(|err| anyhow::anyhow!("output schema {}: {err}", path.display()))?,
            )
        }
        (None, None, None) => None,
    };
    schema.as_ref().map(OutputSchema::compile).transpose()
}

/// The static verdict, on a worker thread with a deep stack that has ended before the jail starts
/// (the jail must be spawned from a single-threaded process).
pub fn check(policy: &Policy, source: &[u8]) -> warden_policy::Report {
    warden_policy::check_on_worker(source, policy)
}

/// Runs one program through the whole gateway.
pub fn execute(policy: &Policy, request: &RunRequest) -> anyhow::Result<RunRecord> {
    // Everything that can be wrong with the request is found before anything runs.
    let schema = output_schema(policy, request)?;
    files::check_inputs(&request.inputs)?;
    if let Some(dir) = &request.output_dir {
        files::check_output_dir(dir)?;
    }
    warden_jail::trace("schema, inputs");
    let report = check(policy, &request.source);
    warden_jail::trace("checked");
    let summary = CheckSummary {
        decision: if request.no_policy {
            "skipped".to_owned()
        } else {
            report.decision.as_str().to_owned()
        },
        findings: report.findings.clone(),
    };
    let mut record = RunRecord::new(policy, &request.source, summary);
    let Some(decoded) = report.decoded else {
        // Undecodable source never runs, with or without the static layer.
        record.status = RunStatus::Denied;
        record.message = Some("the source could not be decoded; see the findings".to_owned());
        return Ok(record);
    };
    if !request.no_policy {
        match report.decision {
            Decision::Deny => {
                record.status = RunStatus::Denied;
                return Ok(record);
            }
            Decision::Review if request.approval.is_none() => {
                record.status = RunStatus::ReviewRequired;
                record.message =
                    Some("the policy requires a review before this program runs".to_owned());
                return Ok(record);
            }
            Decision::Review => record.approval = request.approval.clone(),
            Decision::Allow => {}
        }
    }
    run_in_jail(policy, request, &decoded.text, schema.as_ref(), &mut record)?;
    Ok(record)
}

/// The policy's limits, tightened (never loosened) by the caller's.
pub fn effective_limits(policy: &Policy, caller: &CallerLimits) -> warden_policy::settings::Limits {
    let mut limits = policy.limits.clone();
    let tighten = |current: &mut u64, asked: Option<u64>| {
        if let Some(asked) = asked.filter(|a| *a > 0) {
            *current = (*current).min(asked);
        }
    };
    tighten(&mut limits.wall_time_ms, caller.wall_time_ms);
    tighten(&mut limits.cpu_time_ms, caller.cpu_time_ms);
    tighten(
        &mut limits.memory_bytes,
        caller.memory_mib.map(|m| m.saturating_mul(1024 * 1024)),
    );
    tighten(&mut limits.stdout_bytes, caller.stdout_bytes);
    limits
}

fn run_in_jail(
    policy: &Policy,
    request: &RunRequest,
    text: &str,
    schema: Option<&OutputSchema>,
    record: &mut RunRecord,
) -> anyhow::Result<()> {
    let mut tightened = policy.clone();
    tightened.limits = effective_limits(policy, &request.limits);
    let config = crate::jail_config::from_policy(&tightened)?;
    let plan = match warden_jail::Plan::new(&config) {
        Ok(plan) => plan,
        Err(err) => {
            record.status = RunStatus::SetupFailed;
            record.message = Some(err.to_string());
            return Ok(());
        }
    };
    record.layers = Some(warden_jail::layers(&plan));
    warden_jail::trace("plan");
    let workdir = WorkDir::create()?;
    let placed = files::place_inputs(&request.inputs, &workdir.path, policy.files.inputs_writable)?;
    let outcome = match warden_jail::run(&plan, text, Some(&workdir.path)) {
        Ok(outcome) => outcome,
        Err(err) => {
            record.status = RunStatus::SetupFailed;
            record.message = Some(err.to_string());
            return Ok(());
        }
    };
    apply_outcome(record, outcome, schema);
    let limits = files::CollectLimits {
        max_files: tightened.limits.output_files,
        max_total_bytes: tightened.limits.output_bytes,
    };
    match files::collect_outputs(
        &workdir.path,
        &placed,
        limits,
        request.output_dir.as_deref(),
    ) {
        Ok(collected) => record.files = collected,
        Err(err) => {
            if record.status == RunStatus::Ok {
                record.status = RunStatus::OutputLimit;
            }
            record.message = Some(format!("output files not collected: {err:#}"));
        }
    }
    Ok(())
}

/// A private host work dir for one run (mode 0700), removed with everything in it afterwards.
pub struct WorkDir {
    pub path: PathBuf,
}

impl WorkDir {
    pub fn create() -> anyhow::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        let base =
            std::env::var_os("WARDEN_RUN_DIR").map_or_else(std::env::temp_dir, PathBuf::from);
        for attempt in 0..16u32 {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let path = base.join(format!(
                "warden-work-{}-{nanos}-{attempt}",
                std::process::id()
            ));
            match std::fs::DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => return Ok(Self { path }),
                Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(err) => {
                    return Err(anyhow::anyhow!(
                        "cannot create work dir {}: {err}",
                        path.display()
                    ))
                }
            }
        }
        anyhow::bail!("cannot create a unique work dir under {}", base.display())
    }
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        remove_tree(&self.path);
    }
}

/// Removes a work tree, read-only input dirs included; best effort (used on clean-up paths).
pub fn remove_tree(path: &std::path::Path) {
    let _ = make_writable(path);
    let _ = std::fs::remove_dir_all(path);
}

/// Read-only input dirs (0555) would stop `remove_dir_all`.
fn make_writable(dir: &std::path::Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    for entry in std::fs::read_dir(dir)?.flatten() {
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            make_writable(&entry.path())?;
        }
    }
    Ok(())
}

/// Fills the record from the jail's outcome: status, output, usage, validation and the Python error.
pub fn apply_outcome(
    record: &mut RunRecord,
    outcome: warden_jail::Outcome,
    schema: Option<&OutputSchema>,
) {
    record.exit_code = outcome.exit_code;
    record.signal = outcome.signal;
    record.stdout_truncated = outcome.stdout_truncated;
    record.stderr_truncated = outcome.stderr_truncated;
    record.usage = outcome.usage;
    record.layers = Some(outcome.layers.clone());
    record.limits_hit = outcome.limits_hit.clone();
    record.stdout = outcome.stdout_text();
    record.stderr = outcome.stderr_text();
    record.status = match outcome.status {
        warden_jail::Status::Ok => RunStatus::Ok,
        warden_jail::Status::Error => RunStatus::Error,
        warden_jail::Status::Timeout => RunStatus::Timeout,
        warden_jail::Status::MemoryLimit => RunStatus::MemoryLimit,
        warden_jail::Status::OutputLimit => RunStatus::OutputLimit,
    };
    if record.status == RunStatus::Error {
        record.error = python_error::parse(&record.stderr);
    }
    if let Some(schema) = schema {
        if record.status == RunStatus::Ok {
            record.validation = schema.validate(&outcome.stdout, outcome.stdout_truncated);
            if !record.validation.valid {
                record.status = RunStatus::OutputInvalid;
            }
        } else {
            record.validation = crate::validate::Validation {
                valid: false,
                errors: vec![crate::validate::OutputError {
                    instance_path: String::new(),
                    schema_path: String::new(),
                    message: format!(
                        "not validated: the run ended with status {}",
                        record.status.as_str()
                    ),
                }],
            };
        }
    }
}
